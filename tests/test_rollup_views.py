"""The views that add analyses up over devices, names and traces, or cut them into time bins
(gpu_time_totals, top_op_names, kernel_name_totals, kernel_class_totals, device_time_axis,
queue_depth_streams, queue_depth_bins, memory_timeline_bins): each checked against a plain
Python computation over the rows of the table or view it reads, on real traces: the bundled
H100 trace (with memory events), two ranks of the DLRM job (one clock) and two unrelated
traces (clocks apart)."""

import pytest
from conftest import CORPUS, DATA_TRACE

import tracecols
from tracecols.fleet.ingest import ingest_lake

DLRM = CORPUS / "param/et_replay/tests/inputs/dlrm_kineto.tar.gz.extracted/dlrm_kineto"
HTA = CORPUS / "HolisticTraceAnalysis/tests/data"
APART = [HTA / "trace_compare/base/base.json.gz", HTA / "critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"]
VIEWS = [
    "gpu_time_totals",
    "top_op_names",
    "kernel_name_totals",
    "kernel_class_totals",
    "device_time_axis",
    "queue_depth_streams",
    "queue_depth_bins",
    "memory_timeline_bins",
]


def _lake(tmp_path_factory, name, paths):
    out = tmp_path_factory.mktemp(name) / "lake"
    assert ingest_lake([str(p) for p in paths], str(out), jobs=1).ok
    return tracecols.Lake(out)


@pytest.fixture(scope="module")
def trace():
    return tracecols.open(DATA_TRACE)


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory):
    return _lake(tmp_path_factory, "two", sorted(DLRM.glob("worker[01]_*.json")))


@pytest.fixture(scope="module")
def apart(tmp_path_factory):
    return _lake(tmp_path_factory, "apart", APART)


@pytest.fixture(params=["trace", "two_ranks", "apart"])
def src(request):
    return request.getfixturevalue(request.param)


def rows(src, name):
    return src.sql(f"SELECT * FROM {name}").to_dicts()


def test_each_view_reads_the_same_by_name_and_by_query(trace):
    for v in VIEWS:
        assert v in trace.views
        assert trace.frame(v).equals(trace.sql(f"SELECT * FROM {v}")), v


def test_gpu_time_totals_add_up_the_whole_trace_rows(src):
    whole = [r for r in rows(src, "gpu_timeline") if r["device"] is None]
    (got,) = rows(src, "gpu_time_totals")
    assert got["traces"] == len(whole) == len(src.sql("SELECT * FROM traces"))
    for c in ("total_ns", "busy_ns", "computation_ns", "exposed_comm_ns", "exposed_memcpy_ns", "idle_ns"):
        assert got[c] == sum(r[c] for r in whole), c
    total = sum(r["total_ns"] for r in whole)
    assert got["busy_pct"] == pytest.approx(100 * sum(r["busy_ns"] for r in whole) / total)
    assert got["idle_pct"] == pytest.approx(100 * sum(r["idle_ns"] for r in whole) / total)
    assert got["busy_pct"] + got["idle_pct"] == pytest.approx(100)


def test_top_op_names_sum_the_ops_over_modules_and_traces(src):
    want: dict[str, list] = {}
    for r in rows(src, "top_ops"):
        w = want.setdefault(r["name"], [None, 0, None])
        if r["count"] is not None:
            w[0] = (w[0] or 0) + r["count"]
            w[2] = (w[2] or 0) + r["cpu_self_ns"]
        w[1] += r["gpu_ns"]
    busy = sum(r["busy_ns"] for r in rows(src, "gpu_timeline") if r["device"] is None)
    got = rows(src, "top_op_names")
    assert {r["name"]: [r["count"], r["gpu_ns"], r["cpu_self_ns"]] for r in got} == want
    for r in got:
        assert r["share_pct"] == pytest.approx(100 * want[r["name"]][1] / busy)
    # `(no op)` is the busy time the ops leave; ops that overlap on different streams add up to more
    assert got[-1]["name"] == "(no op)" and sum(r["share_pct"] for r in got) >= 100 - 1e-9
    named = [r["gpu_ns"] for r in got[:-1]]
    assert named == sorted(named, reverse=True)


def _by(src, key):
    """{key: [count, sum, min, max]} of every device event, from the kernels table."""
    out: dict = {}
    for k in rows(src, "kernels"):
        w = out.setdefault(k[key], [0, 0, k["dur_ns"], k["dur_ns"]])
        w[0] += 1
        w[1] += k["dur_ns"]
        w[2], w[3] = min(w[2], k["dur_ns"]), max(w[3], k["dur_ns"])
    return out


def test_kernel_name_totals_count_every_device_event_by_name(src):
    want = _by(src, "name")
    total = sum(w[1] for w in want.values())
    got = rows(src, "kernel_name_totals")
    assert {r["name"]: [r["count"], r["sum_ns"], r["min_ns"], r["max_ns"]] for r in got} == want
    for r in got:
        assert r["mean_ns"] == pytest.approx(want[r["name"]][1] / want[r["name"]][0])
        assert r["share_pct"] == pytest.approx(100 * want[r["name"]][1] / total)
    assert [r["sum_ns"] for r in got] == sorted((w[1] for w in want.values()), reverse=True)


def test_kernel_class_totals_count_every_device_event_by_class(src):
    want = _by(src, "kernel_class")
    total = sum(w[1] for w in want.values())
    got = rows(src, "kernel_class_totals")
    assert {r["kernel_class"]: [r["count"], r["sum_ns"]] for r in got} == {k: w[:2] for k, w in want.items()}
    assert sum(r["share_pct"] for r in got) == pytest.approx(100)
    for r in got:
        assert r["share_pct"] == pytest.approx(100 * want[r["kernel_class"]][1] / total)


def _spans(src):
    """{trace_id: (first launch or start, last end)} of the device events with a time."""
    out: dict[int, tuple[int, int]] = {}
    for k in rows(src, "kernels"):
        if k["ts_ns"] is None:
            continue
        first = min(k["ts_ns"], k["launch_ts_ns"] if k["launch_ts_ns"] is not None else k["ts_ns"])
        last = k["end_ns"] if k["end_ns"] is not None else k["ts_ns"]
        a, b = out.get(k["trace_id"], (first, last))
        out[k["trace_id"]] = (min(a, first), max(b, last))
    return out


def test_device_time_axis_shares_one_origin_only_when_the_traces_overlap(trace, two_ranks, apart):
    for src, shared in ((trace, True), (two_ranks, True), (apart, False)):
        spans = _spans(src)
        got = rows(src, "device_time_axis")
        assert {r["trace_id"]: (r["first_ns"], r["last_ns"]) for r in got} == spans
        assert {r["shared_clock"] for r in got} == {shared}
        if shared:
            t0 = min(a for a, _ in spans.values())
            assert {r["origin_ns"] for r in got} == {t0}
            assert {r["axis_ns"] for r in got} == {max(b for _, b in spans.values()) - t0}
        else:
            assert {r["trace_id"]: r["origin_ns"] for r in got} == {t: a for t, (a, _) in spans.items()}
            assert {r["axis_ns"] for r in got} == {max(b - a for a, b in spans.values())}
    # the two unrelated traces are the case the report draws with each trace starting at 0
    (a0, b0), (a1, b1) = _spans(apart).values()
    assert b0 < a1 or b1 < a0


def _queues(src):
    """{(trace_id, device, stream): [(ts, depth after)]}: +1 at each linked device event's launch
    call, -1 at its start, a start first at equal times."""
    changes: dict[tuple, list] = {}
    for k in rows(src, "kernels"):
        if k["launch_uid"] is not None:
            key = (k["trace_id"], k["device"], k["stream"])
            changes.setdefault(key, []).extend([(k["launch_ts_ns"], 1, k["uid"]), (k["ts_ns"], -1, k["uid"])])
    out = {}
    for key, ch in changes.items():
        depth, walk = 0, []
        for ts, d, _ in sorted(ch):
            depth += d
            walk.append((ts, depth))
        out[key] = walk
    return out


def test_queue_depth_streams_count_the_linked_events_and_the_deepest_queue(src):
    queues = _queues(src)
    got = rows(src, "queue_depth_streams")
    assert {(r["trace_id"], r["device"], r["stream"]): (r["events"], r["max_queue_depth"]) for r in got} == {
        k: (len(w) // 2, max(d for _, d in w)) for k, w in queues.items()
    }
    assert [r["events"] for r in got] == sorted((r["events"] for r in got), reverse=True)


def test_queue_depth_bins_hold_the_deepest_queue_of_each_bin(src):
    spans = _spans(src)
    shared = max(a for a, _ in spans.values()) <= min(b for _, b in spans.values())
    t0 = min(a for a, _ in spans.values())
    axis = max(b for _, b in spans.values()) - t0 if shared else max(b - a for a, b in spans.values())
    width = max(axis // 400, 1)
    want: dict[tuple, int] = {}
    for (tid, dev, stream), walk in _queues(src).items():
        origin = t0 if shared else spans[tid][0]
        for ts, depth in walk:
            key = (tid, dev, stream, (ts - origin) // width)
            want[key] = max(want.get(key, depth), depth)
    got = rows(src, "queue_depth_bins")
    assert {(r["trace_id"], r["device"], r["stream"], r["bin"]): r["max_queue_depth"] for r in got} == want
    assert {r["bin_ns"] for r in got} == {width}
    assert all(r["bin_start_ns"] == r["bin"] * width for r in got)
    assert all(0 <= r["bin"] <= axis // width for r in got)  # about 400 bins over the axis


def test_memory_timeline_bins_hold_the_highest_memory_of_400_bins(trace):
    events = [r for r in rows(trace, "memory_timeline") if r["ts_ns"] is not None]
    assert len(events) > 200  # the bundled trace was profiled with profile_memory=True
    t0 = min(r["ts_ns"] for r in events)
    span = max(max(r["ts_ns"] for r in events) - t0, 1)
    want: dict[tuple, list] = {}
    for r in events:
        key = (r["trace_id"], r["device_kind"], r["device_id"], min((r["ts_ns"] - t0) * 400 // span, 399))
        alloc = r["allocated_bytes"] if r["allocated_bytes"] is not None else r["net_bytes"]
        w = want.setdefault(key, [alloc, r["reserved_bytes"]])
        w[0] = max(w[0], alloc)
        if r["reserved_bytes"] is not None:
            w[1] = r["reserved_bytes"] if w[1] is None else max(w[1], r["reserved_bytes"])
    got = rows(trace, "memory_timeline_bins")
    assert {
        (r["trace_id"], r["device_kind"], r["device_id"], r["bin"]): [r["allocated_bytes"], r["reserved_bytes"]] for r in got
    } == want
    assert {r["span_ns"] for r in got} == {span} and {r["bin_ns"] for r in got} == {span / 400}
    assert all(r["bin_start_ns"] == pytest.approx(r["bin"] * span / 400) for r in got)
    assert max(r["bin"] for r in got) == 399
