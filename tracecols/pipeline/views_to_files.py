"""Every sql/ view of a streamed trace written to its own Parquet file by an Engine over the
base tables' files (Engine.materialise_all_to), within the DuckDB memory the views are given."""

import os
import shutil
from pathlib import Path

import pyarrow as pa

from ..engine.catalog import Engine
from ..engine.public import public_names
from ..engine.specs import device_specs_table
from ..progress import tracker
from ..store import parquet
from .streamed_tables import DUCKDB_MB, events_in, small

# A big trace's tree and links stages take about 230-340 B an event, so its views may have half
# of that before they spill: they still never set the run's peak, and spill far less
# (docs/performance.md, "The views' DuckDB memory"). Never more than a quarter of the machine's
# memory, whatever the number of traces read together.
VIEW_BYTES_PER_EVENT = 112


def views_memory(events):
    """DuckDB's memory limit for the views of `events` events, as DuckDB writes sizes."""
    try:
        machine = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # no sysconf (Windows): no more than the default
        machine = 0
    return f"{max(DUCKDB_MB, min(events * VIEW_BYTES_PER_EVENT, machine // 4) >> 20)}MB"


def query_options(tables, scratch):
    """The Engine's bounds over what `ingest` returned: for a trace streamed into the temporary
    directory `scratch`, the DuckDB memory its views have in the pipeline, spilling inside that
    directory (gone with it). Tables in memory have no bound; up to WHOLE_RESULTS_EVENTS
    events, each query runs on one DuckDB thread, as the pipeline's views do over as many: a
    small query spends more CPU than it saves on a second thread, and Face.compute runs views
    side by side instead."""
    if scratch is None:
        events = tables.get("events")
        return {"query_threads": 1} if isinstance(events, pa.Table) and whole_results(events.num_rows) else {}
    events = events_in(tables["events"])
    return {"memory_limit": views_memory(events), "temp_dir": Path(scratch.name) / "spill"}


# Up to this many events (every real trace of the corpus), the views are small queries, most of
# their time DuckDB's own per-query work: each result is computed whole before it is written
# (one binding of its query instead of two) and they run one per core, each on one DuckDB
# thread. Beyond it the copy of a bigger result costs more than the binding saves
# (docs/performance.md, "Whole view results up to 256k events").
WHOLE_RESULTS_EVENTS = 1 << 18


def whole_results(events: int) -> bool:
    """Whether the views of `events` events are computed whole, one per core (WHOLE_RESULTS_EVENTS)."""
    return events <= WHOLE_RESULTS_EVENTS


def view_threads(events: int, cores: int) -> int:
    """How many views of `events` events run at a time on `cores` cores: one per core while
    their results are computed whole; from there up to 1M events, two at a time still pay
    (docs/performance.md); on bigger traces they gain no time, DuckDB keeps every core busy,
    and a second result adds to the peak."""
    return max(1, cores) if whole_results(events) else 2 if small(events) else 1


def write_views(tmp, clock, view_seconds=None, only=None, cores=1, later=None):
    # a file, not an Arrow table: the view threads' cursors do not see registered tables
    parquet.write_table(tmp / "device_specs.parquet", device_specs_table())
    events = events_in(tmp / "events.parquet")
    whole = whole_results(events)
    later = later or {}  # {base table: Future of its file}
    engine = Engine(
        {**parquet.table_files(tmp), **{n: str(tmp / f"{n}.parquet") for n in later}},
        later=set(later),
        origin=str(tmp),
        memory_limit=views_memory(events),
        temp_dir=tmp / ".spill",
        query_threads=1 if whole else None,
    )
    tracker().stage("analyses", total_items=len(engine.views))
    written = engine.materialise_all_to(
        Path(tmp),
        parquet.writer,
        threads=view_threads(events, cores),
        view_seconds=view_seconds,
        only=only,
        whole=whole,
        later=later,
    )
    engine.con.close()
    shutil.rmtree(tmp / ".spill", ignore_errors=True)
    # private helpers over a big trace were files only for the views that read them, all written now
    for name in set(written) - set(public_names(written)):
        (tmp / f"{name}.parquet").unlink()
    clock.lap("views")
    return ["device_specs", *public_names(written)]
