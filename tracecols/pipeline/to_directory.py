"""Trace files streamed into a Parquet directory (the one `Trace.save` writes, appearing
atomically): the events written while they are parsed, the derived tables built from that file,
then every sql/ view to a file of its own. Between stages freed memory is handed back."""

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .. import memory
from ..model.base_tables import BASE_TABLES
from ..progress import tracker
from ..read import split
from ..store import parquet
from .clock import Clock
from .held_events import HeldEvents
from .parse import manifest_input, write_events
from .streamed_tables import derive_from_file, events_in
from .views_to_files import whole_results, write_views


def ingest_to_dir(paths, out_dir, keep_secrets=False, timings=None, views=True, captures=(), first_trace_id=0, parts=None):
    """Read trace files into `out_dir`: every base table and the sql/ views as Parquet, plus
    _tracecols.json. `views`: True for every view, False for none, or the names of those to
    write (with the views they read). `captures`: capture.Capture objects for the graph
    replays (read_captures). Returns the output path."""
    clock = Clock(timings)
    with parquet.staged_dir(out_dir) as tmp, ThreadPoolExecutor(1) as beside:
        held = HeldEvents()  # a small trace's events are derived from memory
        infos = write_events(paths, tmp / "events.parquet", keep_secrets, clock, first_trace_id, parts, held)
        tracker().stage("building the op tree and the launch links")
        # a small trace's critical path is computed beside the views that do not read it: they
        # leave a core idle part of the time, it is mostly numpy and polars (docs/performance.md,
        # "The critical path beside the views"); a big one's would add its memory to theirs
        defer = bool(views) and whole_results(events_in(tmp / "events.parquet"))
        tables = derive_from_file(tmp / "events.parquet", infos, tmp / "slices.parquet", clock, captures, defer, held)
        del held
        later = {}
        if defer:
            path = tables.pop("critical_path_edges")
            later["critical_path_edges"] = beside.submit(_write_path, path, tmp / "critical_path_edges.parquet", clock)
        tracker().stage("writing the tables")
        for name in list(tables):
            parquet.write_table(tmp / f"{name}.parquet", tables.pop(name))
        clock.lap("parquet")
        memory.release()
        names = (
            write_views(
                tmp,
                clock,
                None if timings is None else timings.setdefault("view_seconds", {}),
                None if views is True else views,
                split.cpu_count() if parts is None else parts,
                later,
            )
            if views
            else []
        )
        inputs = [manifest_input(i) for i in infos]
        parquet.write_manifest(tmp, parquet.manifest(list(BASE_TABLES) + names, inputs, secrets_redacted=not keep_secrets))
        clock.lap("parquet")
    return Path(out_dir)


def _write_path(compute, path, clock):
    t = time.perf_counter()
    parquet.write_table(path, compute())
    clock.add("critical path", time.perf_counter() - t)
