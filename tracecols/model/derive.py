"""Everything derived from one ingest's `events`: the host tree, the launch links, FX markers,
and per trace its `traces` row (with the warnings of the checks) and its `devices`.

Both ingest paths use this: the in-memory one (trace.ingest) with the whole events table,
the streaming one with only TREE_COLUMNS read back from Parquet.
"""
import pyarrow as pa
import pyarrow.compute as pc

from .checks import event_warnings, kernel_warnings
from .fx import fx_marks
from .kernels import KERNEL_CATS, build_kernels
from .secrets import redact
from .traces import detect_rank, devices_table, traces_table
from .tree import build_slices

# The events columns the tree, the links, the checks and the traces row read.
TREE_COLUMNS = ["trace_id", "rank", "uid", "ph", "cat", "name", "pid", "tid", "pid_str", "tid_str",
                "ts_ns", "dur_ns", "end_ns", "device", "stream", "correlation", "external_id", "flow_id"]


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


def derived_tables(ev, infos, clock=None):
    """{name: Arrow table} of traces, devices, slices, kernels and fx_marks.

    `ev` is the events table of the traces `infos` describe (see describe()), or any
    projection of it holding TREE_COLUMNS. Memory is the limit on big traces, so each step
    keeps only what the next ones read: the checks see every event first, the tree then
    takes its rows, and the links keep only device events and ac2g flows. `clock.lap(stage)`
    is told when the read, tree and links stages end.
    """
    clock = clock or _NoClock()
    mine = {i["trace_id"]: _of_trace(ev, i["trace_id"], len(infos)) for i in infos}
    checks = {t: event_warnings(e) for t, e in mine.items()}
    spans = {t: e.select(["ph", "ts_ns", "end_ns"]) for t, e in mine.items()}
    del mine
    clock.lap("read")
    slices = build_slices(ev)
    clock.lap("tree")
    ph, cat = ev.column("ph"), ev.column("cat")
    linked = ev.filter(pc.or_kleene(
        pc.and_kleene(pc.equal(ph, "X"), pc.is_in(cat, pa.array(KERNEL_CATS))),
        pc.and_kleene(pc.is_in(ph, pa.array(["s", "f"])), pc.equal(cat, "ac2g"))))
    del ev, ph, cat
    kernels = build_kernels(linked, slices)
    del linked
    clock.lap("links")
    traces, devices = [], []
    for info in infos:
        t = info["trace_id"]
        warnings = checks[t] + kernel_warnings(_of_trace(kernels, t, len(infos)))
        traces.append(traces_table(t, info, spans[t], info["rank"], info["rank_source"], warnings))
        devices.append(devices_table(t, info["metadata"]))
    clock.lap("read")
    return {"traces": pa.concat_tables(traces), "devices": pa.concat_tables(devices),
            "slices": slices, "kernels": kernels, "fx_marks": fx_marks(slices, kernels)}


def _of_trace(table, trace_id, n_traces):
    return table if n_traces == 1 else table.filter(pc.equal(table.column("trace_id"), trace_id))
