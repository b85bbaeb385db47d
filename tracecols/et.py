"""`tracecols.et.link(et, kineto)`: an Execution Trace's nodes linked to the Kineto trace recorded beside it;
`tracecols.et.save_link(et, kineto, out)`: the link written as Parquet tables and ET+ JSON."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
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


@dataclass(frozen=True)
class SavedLink:
    """What `save_link` wrote: the link's summary (model/et_link.py), the input files' records
    (the ET's first, then the Kineto trace's), the Parquet directory and the ET+ JSON file."""

    summary: dict[str, Any]
    inputs: list[dict[str, Any]]
    directory: Path
    et_plus: Path


def _summary_table(summary: dict[str, Any]) -> pa.Table:
    """The summary as a one-row table (a list value as its JSON text)."""
    return pa.table({k: [json.dumps(v) if isinstance(v, list) else v] for k, v in summary.items()})


def save_link(
    et_path: str | os.PathLike,
    kineto_path: str | os.PathLike,
    out_dir: str | os.PathLike,
    et_plus: str | os.PathLike | None = None,
    keep_secrets: bool = False,
) -> SavedLink:
    """Link the two traces (`link`) and write the result: `out_dir` gets et_nodes, et_inputs,
    et_outputs, et_kernels and et_link (the summary) as Parquet, atomically, and `et_plus`
    (default `out_dir`/et_plus.json; .gz to compress) the ET with each node's Kineto link."""
    from .store import parquet
    from .store.et_json import write_et_plus

    et, inputs, nodes, kernels, summary = link(et_path, kineto_path, keep_secrets)
    tables = {
        "et_nodes": nodes,
        "et_inputs": et["inputs"],
        "et_outputs": et["outputs"],
        "et_kernels": kernels,
        "et_link": _summary_table(summary),
    }
    ins = [{"path": et["path"], "size": et["size"], "sha256": et["sha256"], "kind": "execution_trace"}] + [
        dict(i, kind="kineto") for i in inputs
    ]
    out = Path(out_dir)
    manifest = parquet.manifest(tables, ins, layout="et_link", link=summary, secrets_redacted=not keep_secrets)
    parquet.write_dir(out, tables, manifest)
    plus = Path(et_plus) if et_plus else out / "et_plus.json"
    write_et_plus(et_path, et["meta"], nodes, kernels, plus, keep_secrets=keep_secrets)
    return SavedLink(summary, ins, out, plus)
