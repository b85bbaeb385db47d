"""The one way in: trace files that fit are read into memory, bigger ones (or any given an output
directory) streamed into Parquet; either way the same base tables."""

import os
from pathlib import Path

import pyarrow as pa

from .. import memory
from ..read.source import Source, is_url
from ..store import parquet
from ..store.atomic import scratch_dir
from .in_memory import read_tables
from .to_directory import ingest_to_dir

# Bigger traces (JSON bytes; a .gz counts 8x its size) are streamed. Read into memory, a trace
# takes 5-8x its size at the peak (the events table, the tree and the links, all at once);
# streamed, no more than about 0.85 GB however big it is, and less than in memory at any size.
# Up to this size the in-memory peak stays below the streamed one of a big trace, and the
# repeated queries of `open` run on Arrow tables (docs/performance.md, "Memory of info and sql").
IN_MEMORY_BYTES = 64 << 20
# `analyze` without an output reads a trace into memory only up to this size: every small trace
# (under 5,000 events, a few MB) and well below the big ones, whose summary streamed peaks
# 85-100 MB lower than read into memory (docs/performance.md, "Small traces against the import
# floor"; the round of the tree's own columns).
SUMMARY_IN_MEMORY_BYTES = 16 << 20


def ingest(
    paths, out=None, keep_secrets=False, timings=None, views=False, captures=(), first_trace_id=0, parts=None, defer_path=False
):
    """Read trace files into a store: ({table name: Arrow table or Parquet path}, inputs, scratch).

    With `out`, or when the files are bigger than IN_MEMORY_BYTES, the traces are streamed
    into a Parquet directory (`out`, else a temporary one that lives as long as `scratch`,
    a tempfile.TemporaryDirectory), with the views named by `views` (ingest_to_dir); else
    they are read into memory. `captures`: capture.Capture objects for the graph replays.
    `first_trace_id`, `parts`: as for write_events (a lake's worker numbers its trace and
    may read it in one part only); streamed stores only. `defer_path`: in memory, the
    critical_path_edges entry is the function that computes it (read_tables)."""
    if out is None and fits_in_memory(paths):
        tables, inputs = read_tables(paths, timings, keep_secrets, captures, defer_path)
        return tables, inputs, None
    scratch = None
    if out is None:
        scratch = scratch_dir()
        out = Path(scratch.name) / "out"
    ingest_to_dir(paths, out, keep_secrets, timings, views, captures, first_trace_id, parts)
    return parquet.table_files(out), parquet.read_manifest(out)["inputs"], scratch


def read_columns(
    paths: list[str], columns: dict[str, tuple[str, ...]], keep_secrets: bool = False
) -> tuple[dict[str, pa.Table], list[dict]]:
    """Only `columns` ({table name: column names}) of the base tables of `paths`, as Arrow
    tables, plus the input descriptions: for a reader that needs a few columns of a few tables
    (the linker). Read as `ingest` reads: a big trace is streamed into a temporary store and
    only those columns read back; of a small one the rest is freed as soon as it is read."""
    import pyarrow.parquet as pq

    tables, inputs, scratch = ingest(paths, keep_secrets=keep_secrets)
    try:
        out = {}
        for name, cols in columns.items():
            t = tables.pop(name)
            out[name] = _copied(t.select(list(cols))) if isinstance(t, pa.Table) else pq.read_table(t, columns=list(cols))
    finally:
        del tables
        if scratch is not None:
            scratch.cleanup()
    memory.release()
    return out, inputs


def _copied(table: pa.Table) -> pa.Table:
    """`table` in buffers of its own. The columns of a batch that came through Arrow's C data
    interface (the compiled reader's, polars') keep the whole batch alive, every other column too."""
    cols = [pa.chunked_array([pa.concat_arrays([c]) for c in col.chunks], col.type) for col in table.columns]
    return pa.table(cols, schema=table.schema)


def summary_fits_in_memory(paths):
    """Whether `analyze` without an output reads these trace files into memory (SUMMARY_IN_MEMORY_BYTES)."""
    return fits_in_memory(paths, SUMMARY_IN_MEMORY_BYTES)


def fits_in_memory(paths, limit=None):
    """Whether the trace files are no bigger than `limit` bytes of JSON (a .gz counts 8x its
    size; default IN_MEMORY_BYTES)."""
    limit = IN_MEMORY_BYTES if limit is None else limit
    total = 0
    for p in paths:
        if is_url(p) or not os.path.exists(str(p)):  # a URL is read as it comes; a missing file fails there
            continue
        src = Source(p)
        total += (src.size or 0) * (8 if src.gzip else 1)
    return total <= limit
