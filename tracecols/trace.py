"""`tracecols.open(...)` -> Trace: the tables of one or more trace files, queryable with SQL."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa

from .engine.connection import Engine
from .engine.face import Face
from .errors import Malformed, SourceIOError
from .model.base_tables import BASE_TABLES
from .store import parquet

if TYPE_CHECKING:
    from .fleet.lake import Lake



def ingest(paths, timings=None, keep_secrets=False, captures=()):
    """Read trace files into the base tables: {name: Arrow table}, plus the input descriptions.

    Secret-looking metadata values are redacted (see model/secrets.py) unless `keep_secrets`.
    `captures`: capture.Capture objects the graph replays are matched to (read_captures).

    `timings`, when a dict, receives the seconds spent per stage (read, tree, links, …).
    """
    # here, not at the top: opening a saved directory (`tracecols sql OUT`) needs none of it
    from .model.derive import derived_tables, describe
    from .model.events import events_table
    from .read.kineto import read_trace
    parts = {name: [] for name in BASE_TABLES}
    inputs = []
    clock = _Clock(timings)
    for trace_id, path in enumerate(paths):
        batches = []
        info = describe(read_trace(path, batches.append), trace_id, path, keep_secrets)
        events = events_table(batches, trace_id, info["rank"])
        del batches
        derived = derived_tables(events, [info], clock, captures=captures, events_schema=events.schema)
        grafted = derived.pop("events_grafted")
        parts["events"].append(pa.concat_tables([events, grafted]) if grafted.num_rows else events)
        for name, table in derived.items():
            parts[name].append(table)
        inputs.append({"path": info["path"], "size": info["size"], "sha256": info["sha256"]})
    tables = {name: pa.concat_tables(ts) if len(ts) > 1 else ts[0] for name, ts in parts.items()}
    return tables, inputs


CAPTURE_DETAILS = "execution_details.json"


def read_captures(directory):
    """The capture traces of a directory as capture.Capture objects, in the order matching
    tries them: those listed in its execution_details.json (file, batch_size, mode), else
    every trace file in it by name. A single trace file is taken as the one capture trace."""
    from .model.capture import Capture
    d = Path(str(directory))
    if d.is_file():
        tables, _ = ingest([str(d)])
        return [Capture(0, str(d), tables)]
    if not d.is_dir():
        raise SourceIOError(d, "does not exist (--capture wants the folder of graph capture traces, or one of them)")
    listed = d / CAPTURE_DETAILS
    if listed.exists():
        try:
            entries = json.loads(listed.read_text())
            items = [(d / e["file"], e.get("batch_size"), e.get("mode")) for e in entries]
        except (ValueError, TypeError, KeyError) as e:
            raise Malformed(listed, f"expected a JSON list of {{file, batch_size, mode}} objects ({e})") from None
    else:
        items = [(p, None, None) for p in sorted(d.iterdir())
                 if p.is_file() and (p.name.endswith(".json") or p.name.endswith(".json.gz"))]
    if not items:
        raise SourceIOError(d, "holds no capture traces (*.json, *.json.gz)")
    out = []
    for i, (path, batch, mode) in enumerate(items):
        if not path.exists():
            raise SourceIOError(path, f"is listed in {CAPTURE_DETAILS} but does not exist")
        tables, _ = ingest([str(path)])
        out.append(Capture(i, str(path), tables, batch if type(batch) is int else None,
                           mode if isinstance(mode, str) else None))
    return out


class _Clock:
    def __init__(self, into):
        self.into = into
        self.t = time.perf_counter()

    def lap(self, stage):
        now = time.perf_counter()
        if self.into is not None:
            self.into[stage] = self.into.get(stage, 0.0) + now - self.t
        self.t = now


class Trace(Face):
    """The tables of one or more traces. `sql()` answers with polars, `table()` with Arrow."""

    def __init__(self, tables, inputs, origin, redact=False):
        self.inputs = inputs
        self.origin = origin
        self._engine = Engine(tables, origin=origin, redact=redact)

    @property
    def tree(self):
        """Navigation of the host tree: subtree(uid), ancestors(uid), print_subtree(uid), print_parents(uid)."""
        from .navigate import TreeView
        if getattr(self, "_tree", None) is None:
            self._tree = TreeView(self)
        return self._tree

    def save(self, out_dir):
        """Write every table as Parquet (zstd) plus _tracecols.json, atomically."""
        tables = {name: self.table(name) for name in self.tables}
        return parquet.write_dir(out_dir, tables, parquet.manifest(tables, self.inputs))

    def __repr__(self):
        return f"<tracecols.Trace {self.origin}: {', '.join(self.tables)}>"


def open(*paths: str | os.PathLike, keep_secrets: bool = False,
         capture: str | os.PathLike | None = None) -> Trace | Lake:
    """Open trace files (local or fsspec URLs, .json or .json.gz), or a directory written by save()/ingest.

    Metadata values under secret-looking keys (tokens, passwords, keys, …) are redacted in the
    tables, whatever was stored, unless `keep_secrets=True`. `capture`: a directory of graph
    capture traces (docs/graphs.md); graph-replayed kernels are then given to the ops that
    captured them.
    """
    if not paths:
        raise TypeError("tracecols.open() needs at least one path")
    if len(paths) == 1 and os.path.isdir(str(paths[0])):
        d = Path(paths[0])
        if capture is not None:
            raise SourceIOError(d, "is an ingested directory; pass capture= when opening the trace file itself")
        manifest = parquet.read_manifest(d)
        if manifest and manifest.get("layout") == "lake":  # written by `tracecols ingest`: many traces
            from .fleet.lake import Lake
            return Lake(d, keep_secrets=keep_secrets)
        if manifest is None:
            raise SourceIOError(d, "is a directory without _tracecols.json (not a tracecols output)")
        # the output may have been written with keep_secrets: redacted on the way out
        return Trace(parquet.table_files(d), manifest.get("inputs", []), origin=str(d), redact=not keep_secrets)
    captures = read_captures(capture) if capture is not None else ()
    tables, inputs = ingest([str(p) for p in paths], keep_secrets=keep_secrets, captures=captures)
    return Trace(tables, inputs, origin=", ".join(str(p) for p in paths))
