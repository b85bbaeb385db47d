"""Trace files read into the base tables in memory: the way of `ingest` for traces that fit, and
of the readers that want Arrow tables whatever the size (the linker, the capture merge)."""

import pyarrow as pa

from ..model.base_tables import BASE_TABLES
from ..model.derive import derived_tables
from ..progress import tracker
from ..read import split
from .clock import Clock
from .parse import manifest_input, read_events_into


def read_tables(paths, timings=None, keep_secrets=False, captures=(), defer_path=False):
    """Read trace files into the base tables in memory: {name: Arrow table}, plus the input
    descriptions (what `ingest` does for traces that fit; the linker and the capture merge
    want Arrow tables whatever the size). The events are read as write_events reads them
    (a file of some MB cut into one part per core), into memory instead of Parquet.

    Secrets in the metadata and the events are redacted (see model/secrets.py) unless `keep_secrets`.
    `captures`: capture.Capture objects the graph replays are matched to (read_captures).

    `timings`, when a dict, receives the seconds spent per stage (read, tree, links, …).
    `defer_path`: critical_path_edges is the function of no arguments that computes it (an
    Engine computes it when a query first names it), not the table.
    """
    parts: dict[str, list[pa.Table]] = {name: [] for name in BASE_TABLES}
    inputs = []
    clock = Clock(timings)
    for trace_id, path in enumerate(paths):
        events, [info] = read_events_into([path], trace_id, keep_secrets, split.cpu_count())
        clock.lap("read")
        tracker().stage("building the op tree and the launch links")
        derived = derived_tables(events, [info], clock, captures=captures, events_schema=events.schema, defer_path=defer_path)
        grafted = derived.pop("events_grafted")
        parts["events"].append(pa.concat_tables([events, grafted]) if grafted.num_rows else events)
        for name, table in derived.items():
            parts[name].append(table)
        inputs.append(manifest_input(info))
    tables = {name: _concatenated(ts) for name, ts in parts.items()}
    return tables, inputs


def _concatenated(parts):
    """The parts of one table, one per trace, as one: tables, or functions that compute them."""
    if len(parts) == 1:
        return parts[0]
    if callable(parts[0]):
        return lambda: pa.concat_tables([compute() for compute in parts])
    return pa.concat_tables(parts)
