"""`tracecols.et.link(et, kineto)`: an Execution Trace's nodes linked to the Kineto trace recorded beside it."""

from __future__ import annotations

import os
import time
from typing import Any

import pyarrow as pa


def link(
    et_path: str | os.PathLike, kineto_path: str | os.PathLike, keep_secrets: bool = False
) -> tuple[dict[str, Any], list[dict[str, Any]], pa.Table, pa.Table, dict[str, Any]]:
    """Read both traces and link them (model/et_link.py): (the ET as read_execution_trace gives
    it, the Kineto trace's inputs, linked et_nodes, et_kernels, summary). Secrets are redacted
    from both before they are linked (so that names agree), unless `keep_secrets`."""
    # imported here, so that `import tracecols` does not load the linker
    from .model.et_link import KINETO_COLUMNS
    from .model.et_link import link as link_tables
    from .model.secrets import redact, redact_table
    from .pipeline import read_columns
    from .read.execution_trace import check_execution_trace, read_execution_trace

    t0 = time.perf_counter()
    check_execution_trace(str(et_path))
    # the Kineto trace first, and only what the link reads of it: its read peaks before the ET is held
    tables, inputs = read_columns([str(kineto_path)], KINETO_COLUMNS, keep_secrets=keep_secrets)
    et = read_execution_trace(et_path)
    if not keep_secrets:
        et = dict(et, meta=redact(et["meta"]), **{k: redact_table(et[k]) for k in ("nodes", "inputs", "outputs")})
    nodes, kernels, summary = link_tables(
        et["nodes"], tables["events"], tables["slices"], tables["kernels"], et_pid=et["meta"].get("pid")
    )
    summary["et_schema"] = et["meta"].get("schema")
    summary["seconds"] = round(time.perf_counter() - t0, 3)
    return et, inputs, nodes, kernels, summary
