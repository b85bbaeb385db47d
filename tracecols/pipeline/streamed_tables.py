"""The derived tables of an events file written by parse.write_events: read back only as far
as each step needs, so that memory does not grow with the trace. A big file's host events are
sorted by DuckDB (spilling to disk) and its slices built a part of whole trees at a time."""

import os
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor

import polars as pl

from .. import memory
from ..model.cp_graph import sync_events
from ..model.derive import TREE_COLUMNS, derived_tables
from ..model.frames import frame
from ..model.tree import build_slices
from ..store import parquet
from .clock import Clock
from .parse import EVENTS_SCHEMA

DUCKDB_MB = 640  # DuckDB spills to disk beyond this rather than grow the process
DUCKDB_MEMORY = f"{DUCKDB_MB}MB"


def derive_from_file(events_path, infos, slices_path, clock=None, captures=(), defer_path=False, held=None):
    """model.derive.derived_tables over the events file written by write_events, with the
    slices written to `slices_path`; returns the other derived tables. Nodes grafted under
    graph launches (model/capture.py) are added to both files.

    A file of more than IN_MEMORY_EVENTS events is scanned lazily (each step reads only the
    rows and columns it needs) and its slices are built part by part (write_slices); a
    smaller one is derived in memory, which is faster than a dozen scans and a sort on disk:
    from the columns `held` (a held_events.HeldEvents given to write_events) kept as they
    were written, else from TREE_COLUMNS read back once; its slices stay in memory for the
    links and the critical path."""
    clock = clock or Clock(None)
    tree = held.tree_columns() if held is not None else None
    ev: pl.DataFrame | pl.LazyFrame
    with ThreadPoolExecutor(1) as beside:
        written = None
        if tree is None and not small(events_in(events_path)):
            write_slices(events_path, slices_path)
            ev = pl.scan_parquet(events_path)
            slices = pl.scan_parquet(slices_path)
            syncs = sync_events(ev)
        else:
            # the frame holds TREE_COLUMNS only: the sync events' args are read apart
            if tree is not None:
                ev, syncs = frame(tree), held.syncs()
            else:
                ev, syncs = pl.read_parquet(events_path, columns=TREE_COLUMNS), sync_events(pl.scan_parquet(events_path))
            del tree
            built = build_slices(ev)
            # encoded while the links are worked out (Parquet encoding releases the GIL)
            written = beside.submit(parquet.write_table, slices_path, built)
            slices = frame(built).lazy()  # as the scan of a big trace's file
            del built
        memory.release()
        clock.lap("tree")
        tables = derived_tables(
            ev,
            infos,
            clock,
            slices=slices,
            captures=captures,
            events_schema=EVENTS_SCHEMA,
            syncs=syncs,
            defer_path=defer_path,
        )
        if written is not None:
            written.result()
    grafted = tables.pop("events_grafted")
    if "slices" in tables:
        parquet.write_table(slices_path, tables.pop("slices"))
    if grafted.num_rows:
        parquet.append_rows(events_path, grafted)
    return tables


IN_MEMORY_EVENTS = 1 << 20  # about 0.5 GB at the peak of the tree and links stages


def events_in(events_path):
    """How many events the events file holds (from its footer)."""
    import pyarrow.parquet as pq

    return pq.ParquetFile(events_path).metadata.num_rows


def small(events):
    """Whether `events` events are few enough to be derived in memory (and to have their views
    written two at a time)."""
    return events <= IN_MEMORY_EVENTS


SLICE_ROWS = 1 << 20  # slices built at once (about 0.5 GB at the peak of a part)

# The host complete events (what host_slices_frame keeps, with dur clipped as the tree takes
# it) in thread order, sorted by DuckDB, which spills to disk rather than hold them all.
_HOST_SLICES_SQL = """
SELECT trace_id, rank, uid, ph, cat, name, pid, tid, pid_str, tid_str, ts_ns,
       greatest(coalesce(dur_ns, 0), 0) AS dur_ns, correlation, external_id
FROM read_parquet({events}) AS e
WHERE ph = 'X' AND ts_ns IS NOT NULL AND (cat IS NULL OR cat NOT IN ({device_cats}))
  AND NOT EXISTS (SELECT 1 FROM device_pids AS d WHERE d.trace_id = e.trace_id
                  AND d.pid IS NOT DISTINCT FROM e.pid AND d.pid_str IS NOT DISTINCT FROM e.pid_str)
ORDER BY trace_id NULLS LAST, pid NULLS LAST, pid_str NULLS LAST, tid NULLS LAST, tid_str NULLS LAST,
         ts_ns, dur_ns DESC, uid
"""


def write_slices(events_path, out_path, chunk_rows=SLICE_ROWS):
    """The slices table of an events file, built part by part (tree.slices_in_chunks) into
    `out_path`: memory holds one part, whatever the length of the trace."""
    from ..engine.connect import connect
    from ..model.categories import DEVICE_CATS
    from ..model.tree import SLICES_SCHEMA, device_pids, slices_in_chunks

    def quoted(x):
        return "'" + str(x).replace("'", "''") + "'"

    scratch = tempfile.mkdtemp(prefix=".tracecols-sort-", dir=os.path.dirname(os.path.abspath(out_path)))
    try:
        host = os.path.join(scratch, "host.parquet")
        con = connect(config={"memory_limit": DUCKDB_MEMORY, "temp_directory": scratch})
        con.register("device_pids", device_pids(pl.scan_parquet(events_path)).to_arrow())
        sql = _HOST_SLICES_SQL.format(events=quoted(events_path), device_cats=", ".join(quoted(c) for c in DEVICE_CATS))
        con.execute(f"COPY ({sql}) TO {quoted(host)} (FORMAT parquet)")
        con.close()
        import pyarrow.parquet as pq

        frames = (pl.from_arrow(b) for b in pq.ParquetFile(host).iter_batches(batch_size=1 << 17))
        with parquet.writer(out_path, SLICES_SCHEMA) as w:
            for part in slices_in_chunks(frames, chunk_rows):
                w.write_table(part)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
