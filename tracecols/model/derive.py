"""Everything derived from one ingest's `events`: the host tree, the launch links, FX markers,
the critical path of each step, and per trace its `traces` row (with the warnings of the
checks) and its `devices`.

Both ingest paths use this: the in-memory one (pipeline.read_tables) with the whole events table,
the streaming one with only TREE_COLUMNS read back from Parquet.
"""

from functools import partial

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from ..memory import release
from .capture import merge
from .checks import event_warnings, kernel_warnings
from .cp_graph import sync_events
from .critical_path import critical_path_edges
from .fx import fx_marks
from .kernels import build_kernels
from .secrets import redact
from .traces import detect_rank, devices_table, time_span, traces_table
from .tree import build_slices, lazy_events

# The events columns the tree, the links, the checks and the traces row read.
TREE_COLUMNS = [
    "trace_id",
    "rank",
    "uid",
    "ph",
    "cat",
    "name",
    "pid",
    "tid",
    "pid_str",
    "tid_str",
    "ts_ns",
    "dur_ns",
    "end_ns",
    "device",
    "stream",
    "correlation",
    "external_id",
    "flow_id",
]


def describe(info, trace_id, path, keep_secrets):
    """Complete a reader's info dict: metadata redacted (unless keep_secrets), trace_id, rank, rank_source."""
    if not keep_secrets:
        info["metadata"] = redact(info["metadata"])
    info["trace_id"] = trace_id
    info["rank"], info["rank_source"] = detect_rank(path, info["metadata"])
    return info


class _NoClock:
    def lap(self, stage):
        pass


def derived_tables(ev, infos, clock=None, slices=None, captures=(), events_schema=None, syncs=None, defer_path=False):
    """{name: Arrow table} of traces, devices, slices, kernels, fx_marks, graph_replays,
    graph_nodes and critical_path_edges, plus `events_grafted`: the rows to add to `events`
    (capture.py).

    `ev` is the events of the traces `infos` describe (see describe()), holding at least
    TREE_COLUMNS: an Arrow table or a polars DataFrame, or a LazyFrame such as a scan of
    events.parquet.
    Memory is the limit on big traces, so from a scan each step reads only the rows and
    columns it needs: the checks and the time span are streaming aggregates, the tree reads
    the host complete events, the links the device events and ac2g flows. `slices`, if
    given, is the slices table already built (a LazyFrame over the file the streaming
    ingest wrote part by part); it is then left out of the result unless graph launches
    changed it. `captures`: capture.Capture objects whose graphs the replays are matched
    to; `events_schema`: that of `events`; `syncs`: the CUDA sync events (cp_graph.sync_events,
    which reads their args: by default from `ev` if it has them, else none). `clock.lap(stage)`
    is told when the read, tree, links, graphs and critical path stages end. `defer_path`: the
    critical_path_edges entry is the function of no arguments that computes it, for the caller
    to run when it suits (the pipeline: beside the views that do not read it).
    """
    clock = clock or _NoClock()
    if syncs is None and "args" in (ev.schema.names if isinstance(ev, pa.Table) else ev.collect_schema().names()):
        syncs = sync_events(ev)
    ev = lazy_events(ev, TREE_COLUMNS)
    checks, spans = {}, {}
    for i in infos:
        mine = _of_trace(ev, i["trace_id"], len(infos))
        start, end, far = time_span(mine)
        checks[i["trace_id"]], spans[i["trace_id"]] = event_warnings(mine) + far, (start, end)
    clock.lap("read")
    built = slices is None
    if built:
        slices = build_slices(ev)
        release()
        clock.lap("tree")
    kernels = build_kernels(ev, slices)
    release()
    clock.lap("links")
    graphs = merge(slices, kernels, events_schema, captures)
    if graphs["slices"] is not slices:
        slices, built = graphs["slices"], True
    kernels = graphs["kernels"]
    clock.lap("graphs")
    if defer_path:
        path = partial(critical_path_edges, slices, kernels, syncs)
    else:
        path = critical_path_edges(slices, kernels, syncs)
        clock.lap("critical path")
    traces, devices = [], []
    for info in infos:
        t = info["trace_id"]
        # the reader's own lines first (what its format lacks), then the checks'
        warnings = list(info.get("warnings", ())) + checks[t] + kernel_warnings(_of_trace(kernels, t, len(infos)))
        traces.append(traces_table(t, info, spans[t], info["rank"], info["rank_source"], warnings))
        devices.append(devices_table(t, info["metadata"]))
    clock.lap("read")
    out = {
        "traces": pa.concat_tables(traces),
        "devices": pa.concat_tables(devices),
        "kernels": kernels,
        "fx_marks": fx_marks(slices, kernels),
        "graph_replays": graphs["graph_replays"],
        "graph_nodes": graphs["graph_nodes"],
        "critical_path_edges": path,
        "events_grafted": graphs["events"],
    }
    if built:
        out["slices"] = slices
    return out


def _of_trace(table, trace_id, n_traces):
    """The rows of one trace (an Arrow table or a polars LazyFrame)."""
    if n_traces == 1:
        return table
    if isinstance(table, pa.Table):
        return table.filter(pc.equal(table.column("trace_id"), trace_id))
    return table.filter(pl.col("trace_id") == trace_id)
