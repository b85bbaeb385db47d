"""Critical path analysis (critical_path_edges, the critical_path views, Trace.critical_path,
`tracecols critical-path`): hand-built traces whose paths are worked out by hand in the
comments, the sweep against a plain longest-path DP on random graphs, the whole analysis
against a plain event-by-event reference (tests/critical_path_reference.py) on hand-built and
real traces, and against HTA's own critical path analysis on HTA's test traces."""

import contextlib
import io
import json
import os
import random
import warnings
from collections import defaultdict, deque

import numpy as np
import polars as pl
import pytest
from conftest import CORPUS, open_events
from critical_path_reference import critical_paths
from tree_reference import load

import tracecols
from tracecols.cli import main
from tracecols.model import cp_graph, longest_path
from tracecols.model.critical_path import critical_path_edges


def _x(cat, name, ts, dur, tid=1, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur, "args": args}


def _kernel(name, ts, dur, corr, stream=7):
    return {
        "ph": "X",
        "cat": "kernel",
        "name": name,
        "pid": 0,
        "tid": stream,
        "ts": ts,
        "dur": dur,
        "args": {"device": 0, "stream": stream, "correlation": corr},
    }


def _summary(t, annotation=None):
    df = t.critical_path(annotation, summary=True)
    return {(r["window_uid"], r["bound_by"]): r["path_ns"] for r in df.iter_rows(named=True)}


def _cli(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in args])
    return rc, out.getvalue(), err.getvalue()


# Times in µs, one host thread, stream 7. Step [0,100):
#   aten::linear [1,11) > cudaLaunchKernel [3,7) corr 1   -> gemm [10,30)
#   aten::add [15,20)   > cudaLaunchKernel [16,18) corr 2 -> ncclKernel [31,46)
#   cudaDeviceSynchronize [22,52)  (no CUDA sync events: it waits for the last kernel of each stream)
#   enumerate(DataLoader)#… [58,66) > aten::mul [60,64)
# gemm launched on an empty stream: launch edge 3 -> 10 (7). The nccl kernel was launched while
# gemm ran (gemm ends at 30 > 16): kernel-kernel gap 30 -> 31 (1). The sync's end waits for the
# nccl kernel's end (46). Longest path: linear start ->(2, linear) launch start ->(7) gemm (20)
# ->(1) nccl (15) -> sync end -> mul (4, data loading) = 2 + 7 + 20 + 1 + 15 + 4 = 49 µs; the
# host alone gets to the sync's end in 15 µs (2+4+4, 1+2+2; the blocking call counts 0).
STEP = [
    _x("user_annotation", "ProfilerStep#7", 0, 100),
    _x("cpu_op", "aten::linear", 1, 10),
    _x("cuda_runtime", "cudaLaunchKernel", 3, 4, correlation=1),
    _x("cpu_op", "aten::add", 15, 5),
    _x("cuda_runtime", "cudaLaunchKernel", 16, 2, correlation=2),
    _x("cuda_runtime", "cudaDeviceSynchronize", 22, 30),
    _x("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 58, 8),
    _x("cpu_op", "aten::mul", 60, 4),
    _kernel("ampere_sgemm_128x64_nn", 10, 20, 1),
    _kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 31, 15, 2),
]


def test_a_step_by_hand(tmp_path):
    t = open_events(tmp_path, STEP)
    path = t.critical_path().to_dicts()
    assert [(r["kind"], r["name"], r["dur_ns"], r["bound_by"]) for r in path] == [
        ("cpu", "aten::linear", 2000, "cpu_bound"),
        ("launch", "ampere_sgemm_128x64_nn", 7000, "kernel_launch_overhead"),
        ("kernel", "ampere_sgemm_128x64_nn", 20000, "gpu_compute_bound"),
        ("kernel_kernel", "ampere_sgemm_128x64_nn", 1000, "kernel_kernel_overhead"),
        ("kernel", "ncclKernel_AllReduce_RING_LL_Sum_float", 15000, "gpu_communication_bound"),
        ("sync", None, 0, None),
        ("dependency", None, 0, None),
        ("cpu", "aten::mul", 4000, "data_loading"),
    ]
    assert [r["seq"] for r in path] == list(range(8)) and {r["step"] for r in path} == {7}
    assert [(r["ts_ns"], r["end_ns"]) for r in path] == [
        (1000, 3000),
        (3000, 10000),
        (10000, 30000),
        (30000, 31000),
        (31000, 46000),
        (46000, 52000),
        (52000, 60000),
        (60000, 64000),
    ]
    assert path[6]["src_uid"] == 5 and path[6]["dst_uid"] == 7  # the sync call, then aten::mul
    s = t.sql("select * from critical_path_summary").to_dicts()
    got = {r["bound_by"]: (r["path_ns"], r["segments"]) for r in s}
    assert got == {
        "gpu_compute_bound": (20000, 1),
        "gpu_communication_bound": (15000, 1),
        "kernel_launch_overhead": (7000, 1),
        "data_loading": (4000, 1),
        "cpu_bound": (2000, 1),
        "kernel_kernel_overhead": (1000, 1),
    }
    assert [r["bound_by"] for r in s][:2] == ["gpu_compute_bound", "gpu_communication_bound"]  # longest first
    r = next(r for r in s if r["bound_by"] == "cpu_bound")
    assert r["step_ns"] == 100000 and r["pct_of_step"] == pytest.approx(2.0)
    assert r["pct_of_path"] == pytest.approx(100 * 2 / 49)
    assert sum(x["pct_of_path"] for x in s) == pytest.approx(100)


def test_a_slice_without_a_name_is_a_plain_host_slice(tmp_path):
    """The step by hand with aten::linear's name left out: the path is as long (its slice is
    not a blocking call either), and the segment has no name."""
    events = [dict(e) for e in STEP]
    del events[1]["name"]
    path = open_events(tmp_path, events).critical_path().to_dicts()
    assert sum(r["dur_ns"] for r in path) == 49000
    assert (path[0]["kind"], path[0]["name"], path[0]["dur_ns"]) == ("cpu", None, 2000)


def test_a_device_event_without_a_time_is_left_off_the_path(tmp_path):
    """A hostile trace's kernel with a launch link but no `ts`: the path is the one of the same
    trace without that kernel (its launch call stays), and no time becomes garbage on the way
    (the graph's int64 arrays once took the missing time as NaN; numpy warned of the cast)."""
    untimed = _kernel("k_untimed", 0, 3, 3)
    del untimed["ts"]
    launch = _x("cuda_runtime", "cudaLaunchKernel", 70, 1, correlation=3)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = open_events(tmp_path / "a", STEP + [launch, untimed]).critical_path().to_dicts()
    want = open_events(tmp_path / "b", STEP + [launch]).critical_path().to_dicts()
    assert got == want
    assert all(0 <= r["ts_ns"] <= 100_000 for r in got)


# Two streams, no step annotation (one window: the whole trace):
#   cudaLaunchKernel [1,3) corr 1 -> k7 on stream 7 [4,14)
#   cudaLaunchKernel [5,7) corr 2 -> k8 on stream 8 [8,28)
#   cudaStreamSynchronize [10,30): the stream its thread last launched on is 8, so it waits for k8
#   aten::relu [31,41)
# Path: launch call 1 (2) -> dependency -> launch start 2 ->(3) k8 (20) -> sync end -> relu (10) = 35 µs.
# Had it waited for stream 7 (k7 ends at 3 + 10 = 13) the path would be k8's 25 µs.
TWO_STREAMS = [
    _x("cuda_runtime", "cudaLaunchKernel", 1, 2, correlation=1),
    _x("cuda_runtime", "cudaLaunchKernel", 5, 2, correlation=2),
    _x("cuda_runtime", "cudaStreamSynchronize", 10, 20),
    _x("cpu_op", "aten::relu", 31, 10),
    _kernel("k7", 4, 10, 1, stream=7),
    _kernel("k8", 8, 20, 2, stream=8),
]


def test_stream_synchronize_waits_for_the_stream_last_launched_on(tmp_path):
    t = open_events(tmp_path, TWO_STREAMS)
    path = t.critical_path().to_dicts()
    assert [(r["kind"], r["name"], r["dur_ns"]) for r in path] == [
        ("cpu", "cudaLaunchKernel", 2000),
        ("dependency", None, 0),
        ("launch", "k8", 3000),
        ("kernel", "k8", 20000),
        ("sync", None, 0),
        ("dependency", None, 0),
        ("cpu", "aten::relu", 10000),
    ]
    assert {r["step"] for r in path} == {None} and path[3]["stream"] == 8


# CUDA sync events say who waits for what (times in µs, one thread, every call outermost):
#   cudaLaunchKernel [1,3) corr 1 -> kA on stream 7 [5,45)
#   cudaEventRecord [4,5) corr 2 (on stream 7, says the wait below)
#   cudaStreamWaitEvent [6,7) corr 3: stream 8 waits for that event
#   cudaLaunchKernel [8,10) corr 4 -> kB on stream 8 [46,56): queued behind the wait, so no launch
#     edge (kA ended after the launch) and no kernel before it on stream 8: only the wait edge
#   cudaStreamSynchronize [12,62) corr 5 with a Stream Sync event on stream 8: waits for kB
#   aten::relu [70,73)
# Path: launch start ->(4) kA (40) -> wait -> kB (10) -> sync -> relu (3) = 57 µs.
SYNC_EVENTS = [
    _x("cuda_runtime", "cudaLaunchKernel", 1, 2, correlation=1),
    _x("cuda_runtime", "cudaEventRecord", 4, 1, correlation=2),
    _x("cuda_runtime", "cudaStreamWaitEvent", 6, 1, correlation=3),
    _x("cuda_runtime", "cudaLaunchKernel", 8, 2, correlation=4),
    _x("cuda_runtime", "cudaStreamSynchronize", 12, 50, correlation=5),
    _x("cpu_op", "aten::relu", 70, 3),
    _kernel("kA", 5, 40, 1, stream=7),
    _kernel("kB", 46, 10, 4, stream=8),
    {
        "ph": "X",
        "cat": "cuda_sync",
        "name": "Stream Wait Event",
        "pid": 0,
        "tid": 8,
        "ts": 6,
        "dur": 1,
        "args": {"wait_on_stream": 7, "wait_on_cuda_event_record_corr_id": 2, "stream": 8, "correlation": 3, "device": 0},
    },
    {
        "ph": "X",
        "cat": "cuda_sync",
        "name": "Stream Sync",
        "pid": 0,
        "tid": 8,
        "ts": 12,
        "dur": 50,
        "args": {"stream": 8, "correlation": 5, "device": 0},
    },
]


def test_sync_events_by_hand(tmp_path):
    t = open_events(tmp_path, SYNC_EVENTS)
    path = t.critical_path().to_dicts()
    assert [(r["kind"], r["name"], r["dur_ns"]) for r in path] == [
        ("launch", "kA", 4000),
        ("kernel", "kA", 40000),
        ("wait", None, 0),
        ("kernel", "kB", 10000),
        ("sync", None, 0),
        ("dependency", None, 0),
        ("cpu", "aten::relu", 3000),
    ]
    assert sum(r["dur_ns"] for r in path) == 57000


def test_steps_are_windows_and_annotations_can_be_asked_for(tmp_path):
    # the step above, then the same again 200 µs later as step 8 inside a "train" annotation
    later = [dict(e, ts=e["ts"] + 200, name=e["name"].replace("#7", "#8")) for e in STEP]
    for e in later:
        if "correlation" in e["args"]:
            e["args"] = dict(e["args"], correlation=e["args"]["correlation"] + 10)
    t = open_events(tmp_path, STEP + later + [_x("user_annotation", "train", 190, 120)])
    steps = t.sql("select step, sum(dur_ns) as ns from critical_path group by step order by step").rows()
    assert steps == [(7, 49000), (8, 49000)]
    got = _summary(t, "train")  # its window holds step 8 only: the same path
    assert sum(got.values()) == 49000 and {w for w, _ in got} == {len(STEP) * 2}
    both = _summary(t, "ProfilerStep#_")  # LIKE: _ is one character
    assert sum(both.values()) == 98000
    rc, out, err = _cli("critical-path", tmp_path / "t.json", "--annotation", "train", "--format", "csv", "-q")
    assert rc == 0 and out.splitlines()[0].startswith("trace_id,rank,step,window_uid,bound_by,segments,path_ns")
    assert len(out.splitlines()) == 1 + 6
    rc, out, err = _cli("critical-path", tmp_path / "t.json", "--annotation", "no such%", "-q")
    assert rc == 2 and out == "" and err.count("\n") == 1 and "no host annotation or op is named like" in err


@pytest.mark.parametrize("saved", [False, True])
def test_annotations_leave_the_trace_views_as_they_were(tmp_path, saved):
    # steps 7 and 8 (49 µs of path each, worked out above), step 8 inside a "train" annotation;
    # in memory and saved to Parquet (critical_path_edges a registered table, then a file's view)
    later = [dict(e, ts=e["ts"] + 200, name=e["name"].replace("#7", "#8")) for e in STEP]
    for e in later:
        if "correlation" in e["args"]:
            e["args"] = dict(e["args"], correlation=e["args"]["correlation"] + 10)
    t = open_events(tmp_path, STEP + later + [_x("user_annotation", "train", 190, 120)])
    if saved:
        t = tracecols.open(t.save(tmp_path / "saved"))
    t.table("critical_path")  # held: the connection's view now reads its frozen result
    steps = "select step, window_uid, sum(dur_ns) as ns from critical_path group by all order by step"
    by_step = [(7, 0, 49000), (8, len(STEP), 49000)]
    assert t.sql(steps).rows() == by_step
    # two annotations in a row, each with its own windows: step 8 inside train, then step 7 alone
    assert {w for w, _ in _summary(t, "train")} == {len(STEP) * 2}
    assert set(t.critical_path("ProfilerStep#7")["window_uid"]) == {0}
    assert sum(_summary(t, "ProfilerStep#7").values()) == 49000
    # and the trace's own views still hold its steps, the edges their two windows
    assert t.sql(steps).rows() == by_step
    assert {w for w, _ in _summary(t)} == {0, len(STEP)}
    assert t.sql("select distinct window_uid from critical_path_edges order by 1")["window_uid"].to_list() == [0, len(STEP)]


def test_launch_delay_counts_only_on_an_empty_stream(tmp_path):
    # cudaLaunchKernel [1,2) -> kA [10,20); cudaLaunchKernel [3,4) -> kB [20,25);
    # cudaDeviceSynchronize [5,26); aten::relu [27,30). kA was launched onto an empty stream, but
    # kB was queued behind it by the time it started (queue depth 1 after kA's start): no launch
    # edge, and nothing before it on the stream, so the path starts at kA. kB follows it (gap 0).
    # Path: kA (10) -> kB (5) -> sync -> relu (3) = 18 µs; with a launch edge it would be 27.
    t = open_events(
        tmp_path,
        [
            _x("cuda_runtime", "cudaLaunchKernel", 1, 1, correlation=1),
            _x("cuda_runtime", "cudaLaunchKernel", 3, 1, correlation=2),
            _x("cuda_runtime", "cudaDeviceSynchronize", 5, 21),
            _x("cpu_op", "aten::relu", 27, 3),
            _kernel("kA", 10, 10, 1),
            _kernel("kB", 20, 5, 2),
        ],
    )
    path = t.critical_path().to_dicts()
    assert [(r["kind"], r["name"], r["dur_ns"]) for r in path] == [
        ("kernel", "kA", 10000),
        ("kernel_kernel", "kA", 0),
        ("kernel", "kB", 5000),
        ("sync", None, 0),
        ("dependency", None, 0),
        ("cpu", "aten::relu", 3000),
    ]


def test_traces_opened_together_keep_their_own_paths(tmp_path):
    # uids and correlation ids repeat across the two files: each trace's path is its own
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    open_events(a, STEP)
    open_events(b, SYNC_EVENTS)
    both = tracecols.open(a / "t.json", b / "t.json")
    got = both.sql(
        "select trace_id, step, sum(dur_ns) as ns, count(*) as n from critical_path group by all order by trace_id"
    ).rows()
    assert got == [(0, 7, 49000, 8), (1, None, 57000, 7)]


def test_no_kernels_no_steps_and_nothing_at_all(tmp_path):
    # host only: an op with a child that ends 0.5 µs after it (the tree keeps it a child); the path
    # counts 1 + 4.5, then 0 back up to the parent's end (never negative), then 3 for the next op
    t = open_events(tmp_path, [_x("cpu_op", "aten::a", 0, 5), _x("cpu_op", "aten::b", 1, 4.5), _x("cpu_op", "aten::c", 9, 3)])
    path = t.critical_path().to_dicts()
    assert [(r["name"], r["dur_ns"]) for r in path] == [
        ("aten::a", 1000),
        ("aten::b", 4500),
        ("aten::a", 0),
        (None, 0),
        ("aten::c", 3000),
    ]
    (tmp_path / "g").mkdir()
    t = open_events(tmp_path / "g", [_kernel("k", 0, 5, 1)])  # device work with no launch in the trace
    assert t.sql("select count(*) from critical_path_edges").item() == 0
    assert t.critical_path(summary=True).height == 0


# ---------------------------------------------------------------------------------------------
# The sweep against a plain DP, on random graphs whose timestamps need not be in graph order


def _random_graph(rng, windows=2):
    """Host runs (entered by sync edges only), device runs headed by launch edges, waits between
    device runs; every edge goes forward in a hidden order, while the times the sweep sees are
    that order plus noise, so they may disagree with it."""
    runs, x = [], []
    for w in range(windows):
        for kind in ["host"] * rng.randint(1, 3) + ["dev"] * rng.randint(1, 4):
            n = rng.randint(1, 6)
            order = sorted(rng.sample(range(1000), n))
            runs.append((w, kind, order, [0] + [rng.randint(0, 9) for _ in range(n - 1)]))
    base = np.cumsum([0] + [len(r[2]) for r in runs])
    hidden = np.concatenate([r[2] for r in runs])
    window = np.concatenate([[r[0]] * len(r[2]) for r in runs])
    for i, (w, kind, _, _) in enumerate(runs):
        if kind != "dev":
            continue
        head = base[i]
        for j, (w2, k2, _, _) in enumerate(runs):
            if w2 != w or j == i:
                continue
            for a in range(base[j], base[j + 1]):
                for b in range(base[i], base[i + 1]):
                    if hidden[a] >= hidden[b] or rng.random() > 0.15:
                        continue
                    if k2 == "host" and b == head:
                        x.append((a, b, rng.randint(0, 9), cp_graph.LAUNCH))
                    elif k2 == "dev":
                        x.append((a, b, 0, cp_graph.WAIT))
            if k2 == "host":  # syncs into host runs
                for a in range(base[i], base[i + 1]):
                    for b in range(base[j], base[j + 1]):
                        if hidden[a] < hidden[b] and rng.random() < 0.15:
                            x.append((a, b, 0, cp_graph.SYNC))
    kinds = np.concatenate([[cp_graph.START] + [cp_graph.CPU] * (len(r[2]) - 1) for r in runs])
    lw = np.concatenate([r[3] for r in runs]).astype(np.int64)
    head = np.concatenate([[base[i]] * len(r[2]) for i, r in enumerate(runs)])
    xa = np.array(x, np.int64).reshape(-1, 4)
    xa = xa[np.argsort(xa[:, 1], kind="stable")]  # a Graph's cross edges come by destination
    t = hidden + np.array([rng.randint(-300, 300) for _ in hidden])  # what the sweep orders by
    return cp_graph.Graph(
        window=window,
        head=head,
        t=t.astype(np.int64),
        uid=np.arange(len(t)),
        link_kind=kinds,
        link_w=lw,
        link_uid=np.arange(len(t)),
        x_src=xa[:, 0],
        x_dst=xa[:, 1],
        x_w=xa[:, 2],
        x_kind=xa[:, 3],
        windows=pl.DataFrame({"w": range(windows)}),
    )


def _plain_dist(g):
    edges = [(i - 1, i, int(g.link_w[i])) for i in range(len(g.t)) if g.head[i] != i]
    edges += [(int(a), int(b), int(w)) for a, b, w in zip(g.x_src, g.x_dst, g.x_w)]
    succ, indeg = defaultdict(list), [0] * len(g.t)
    for a, b, w in edges:
        succ[a].append((b, w))
        indeg[b] += 1
    dist = [0] * len(g.t)
    todo = deque(i for i in range(len(g.t)) if indeg[i] == 0)
    while todo:
        a = todo.popleft()
        for b, w in succ[a]:
            dist[b] = max(dist[b], dist[a] + w)
            indeg[b] -= 1
            if indeg[b] == 0:
                todo.append(b)
    return dist


@pytest.mark.parametrize("part_nodes", [longest_path.PART_NODES, 1, 5])
def test_the_sweep_against_a_plain_dp_on_random_graphs(part_nodes, monkeypatch):
    monkeypatch.setattr(longest_path, "PART_NODES", part_nodes)  # a big graph is solved in parts of runs
    rng = random.Random(7)
    for _ in range(300):
        g = _random_graph(rng)
        dist, arg, best, _ = longest_path.solve(g)
        assert dist.tolist() == _plain_dist(g)
        w, kind, src, dst, weight, _ = longest_path.paths(g, dist, arg, best)
        for win in set(g.window.tolist()):
            mine = w == win
            # a path: each edge starts where the last one ended, and it is as long as the longest
            assert all(src[mine][1:] == dst[mine][:-1])
            assert weight[mine].sum() == dist[g.window == win].max()


# ---------------------------------------------------------------------------------------------
# Against the plain reference: hand-built traces (every edge) and real traces (each path's length)


@pytest.mark.parametrize("events", [STEP, TWO_STREAMS, SYNC_EVENTS], ids=["step", "two_streams", "sync_events"])
def test_hand_built_against_the_reference(tmp_path, events):
    t = open_events(tmp_path, events)
    ref = critical_paths(load(tmp_path / "t.json")["traceEvents"])
    rows = t.sql("select * from critical_path_edges order by window_start_ns, seq").to_dicts()
    [(length, edges)] = ref.values()
    assert [(r["kind"], r["weight_ns"], r["src_uid"], r["dst_uid"]) for r in rows] == edges
    assert sum(r["weight_ns"] for r in rows) == length


REAL = [
    "HolisticTraceAnalysis/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
    "HolisticTraceAnalysis/tests/data/critical_path/cuda_event_sync/event_sync_trace.json.gz",
    "HolisticTraceAnalysis/tests/data/critical_path/cuda_event_sync_multi_stream/event_sync_trace.json.gz",
    "HolisticTraceAnalysis/tests/data/with_gpu_user_annotation/step_based_trace_2543932.json.gz",
    "HolisticTraceAnalysis/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "kineto/docs/traces/after_fix_trace.json",
    "param/et_replay/tests/inputs/dlrm_kineto.tar.gz.extracted/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json",
    "TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz",
]


@pytest.mark.corpus
@pytest.mark.parametrize("rel", REAL)
def test_real_traces_against_the_reference(rel):
    path = CORPUS / rel
    t = tracecols.open(path)
    ref = critical_paths(load(path)["traceEvents"])
    rows = t.sql("select * from critical_path_edges order by window_start_ns, window_uid, seq").to_dicts()
    by = defaultdict(list)
    for r in rows:
        by[r["window_uid"]].append(r)
    assert {w: sum(r["weight_ns"] for r in rs) for w, rs in by.items()} == {w: n for w, (n, _) in ref.items() if n or w in by}
    kernels = {r["uid"]: r for r in t.sql("select uid, ts_ns, end_ns from kernels").to_dicts()}
    for rs in by.values():
        assert [r["seq"] for r in rs] == list(range(len(rs)))
        assert all(a["dst_uid"] == b["src_uid"] for a, b in zip(rs, rs[1:]))
        for r in rs:  # what each kind weighs
            if r["kind"] in ("dependency", "sync", "wait"):
                assert r["weight_ns"] == 0 and r["uid"] is None
            elif r["kind"] == "kernel":
                k = kernels[r["uid"]]
                assert (r["ts_ns"], r["end_ns"], r["weight_ns"]) == (k["ts_ns"], k["end_ns"], k["end_ns"] - k["ts_ns"])
            elif r["kind"] in ("launch", "kernel_kernel"):
                assert r["weight_ns"] == max(r["end_ns"] - r["ts_ns"], 0)
            else:
                assert r["weight_ns"] in (0, max(r["end_ns"] - r["ts_ns"], 0))


@pytest.mark.corpus
def test_streaming_ingest_gives_the_same_path(tmp_path):
    from tracecols.pipeline import ingest_to_dir

    path = CORPUS / REAL[0]
    out = ingest_to_dir([str(path)], tmp_path / "o", views=False)
    streamed = tracecols.open(out).sql("select * from critical_path_edges").to_dicts()
    assert streamed and streamed == tracecols.open(path).sql("select * from critical_path_edges").to_dicts()


@pytest.mark.corpus
def test_inferred_stream_syncs_agree_with_the_sync_events():
    # HTA's traces carry Stream Sync events; the rule used without them (the stream the thread
    # last launched onto) must name the same stream for every cudaStreamSynchronize there
    t = tracecols.open(CORPUS / REAL[0])
    calls = t.sql("""select s.tid, s.ts_ns, e.stream from slices s join events e
                     on e.cat = 'cuda_sync' and e.name = 'Stream Sync' and e.correlation = s.correlation
                     where s.name = 'cudaStreamSynchronize'""").to_dicts()
    launches = t.sql("select launch_tid, launch_ts_ns, stream from kernels order by launch_ts_ns").to_dicts()
    assert len(calls) == 16
    for c in calls:
        last = [k for k in launches if k["launch_tid"] == c["tid"] and k["launch_ts_ns"] <= c["ts_ns"]][-1]
        assert last["stream"] == c["stream"]


# ---------------------------------------------------------------------------------------------
# HTA: its own analysis on its test traces (recorded from HTA 0.5.0; checked live when installed)

HTA_DIR = "HolisticTraceAnalysis/tests/data/critical_path/"
FORWARD = "[param|pytorch.model.alex_net|0|0|0|measure|forward]"
# (directory, annotation, instance, tracecols window: LIKE pattern and which match):
#   HTA's path in µs per bound_by, its edge counts per type (operator = host op + kernel
#   segments; sync = sync + wait), and its number of nodes (HTA's test asserts 315 and 149)
HTA_CASES = {
    "simple_add": (
        "end_to_end/simple_add/input",
        FORWARD,
        1,
        (FORWARD, 1),
        {"cpu_bound": 241190, "gpu_compute_bound": 508, "gpu_kernel_kernel_overhead": 9, "gpu_kernel_launch_overhead": 17},
        {"operator": 288, "dependency": 20, "kernel_kernel_delay": 5, "kernel_launch_delay": 1},
        315,
    ),
    "alexnet": (
        "alexnet",
        FORWARD,
        1,
        (FORWARD, 1),
        {"cpu_bound": 32042, "gpu_compute_bound": 3712, "gpu_kernel_kernel_overhead": 50, "gpu_kernel_launch_overhead": 30},
        {"operator": 110, "dependency": 4, "kernel_kernel_delay": 32, "kernel_launch_delay": 1, "sync_dependency": 1},
        149,
    ),
    "cuda_event_sync": (
        "cuda_event_sync",
        "ProfilerStep",
        0,
        (None, 0),
        {"cpu_bound": 2335, "gpu_compute_bound": 38, "gpu_kernel_launch_overhead": 28},
        {"operator": 28, "dependency": 7, "kernel_launch_delay": 2, "sync_dependency": 2},
        40,
    ),
    "cuda_event_sync_multi_stream": (
        "cuda_event_sync_multi_stream",
        "",
        None,
        (None, 0),
        {"cpu_bound": 1025, "gpu_compute_bound": 124, "gpu_kernel_kernel_overhead": 15, "gpu_kernel_launch_overhead": 14},
        {"operator": 52, "dependency": 4, "kernel_kernel_delay": 1, "kernel_launch_delay": 1},
        59,
    ),
}
OURS = {
    "cpu_bound": "cpu_bound",
    "gpu_compute_bound": "gpu_compute_bound",
    "gpu_communication_bound": "gpu_communication_bound",
    "data_loading": "cpu_bound",
    "kernel_kernel_overhead": "gpu_kernel_kernel_overhead",
    "kernel_launch_overhead": "gpu_kernel_launch_overhead",
}
EDGE = {
    "cpu": "operator",
    "kernel": "operator",
    "dependency": "dependency",
    "kernel_kernel": "kernel_kernel_delay",
    "launch": "kernel_launch_delay",
    "sync": "sync_dependency",
    "wait": "sync_dependency",
}


def _ours(name):
    d, _, _, (pattern, nth), *_ = HTA_CASES[name]
    files = [f for f in os.listdir(CORPUS / HTA_DIR / d) if f.endswith(".json.gz")]
    t = tracecols.open(CORPUS / HTA_DIR / d / files[0])
    path = t.critical_path(pattern)
    windows = path.select("window_uid").unique(maintain_order=True)["window_uid"].to_list()
    mine = path.filter(pl.col("window_uid").eq_missing(windows[nth])) if windows[nth] is not None else path
    bound, edges = defaultdict(int), defaultdict(int)
    for r in mine.iter_rows(named=True):
        if r["bound_by"]:
            bound[OURS[r["bound_by"]]] += r["dur_ns"]
        edges[EDGE[r["kind"]]] += 1
    return {k: v / 1000 for k, v in bound.items()}, dict(edges), mine.height + 1


@pytest.mark.corpus
@pytest.mark.parametrize("name", HTA_CASES)
def test_hta_recorded(name):
    bound, edges, nodes = _ours(name)
    assert (bound, edges, nodes) == HTA_CASES[name][4:]


@pytest.mark.corpus
@pytest.mark.parametrize("name", HTA_CASES)
def test_hta_live(name):
    hta = pytest.importorskip("hta.trace_analysis")
    import logging

    logging.getLogger("hta").setLevel(logging.ERROR)
    d, annotation, instance, *_ = HTA_CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ta = hta.TraceAnalysis(trace_dir=str(CORPUS / HTA_DIR / d))
        g, ok = ta.critical_path_analysis(rank=0, annotation=annotation, instance_id=instance)
        edf = g.get_critical_path_breakdown()
    assert ok
    bound = {k: float(v) for k, v in edf.groupby("bound_by").duration.sum().items() if k}
    edges = {k.replace("critical_path_", ""): int(v) for k, v in edf.groupby("type").size().items()}
    assert (bound, edges, len(g.critical_path_nodes)) == HTA_CASES[name][4:]
    assert _ours(name) == (bound, edges, len(g.critical_path_nodes))


def test_sync_events_keep_their_ids():
    # the args the sync rules read, from an events table with one Stream Wait Event
    import pyarrow as pa

    ev = pa.table(
        {
            "trace_id": pa.array([0, 0], pa.int32()),
            "uid": [1, 2],
            "cat": ["cuda_sync", "kernel"],
            "ph": ["X", "X"],
            "name": ["Stream Wait Event", "k"],
            "ts_ns": [5, 6],
            "dur_ns": [2, 1],
            "device": [0, 0],
            "stream": [8, 7],
            "correlation": [3, 4],
            "args": [json.dumps({"wait_on_stream": 7, "wait_on_cuda_event_record_corr_id": 2}), None],
        }
    )
    s = cp_graph.sync_events(ev).to_dicts()
    assert s == [
        {
            "trace_id": 0,
            "uid": 1,
            "name": "Stream Wait Event",
            "ts_ns": 5,
            "end_ns": 7,
            "device": 0,
            "stream": 8,
            "correlation": 3,
            "wait_stream": 7,
            "record_corr": 2,
        }
    ]
    from tracecols.model.kernels import KERNELS_SCHEMA
    from tracecols.model.tree import SLICES_SCHEMA

    assert critical_path_edges(SLICES_SCHEMA.empty_table(), KERNELS_SCHEMA.empty_table()).num_rows == 0


# names with the characters a regular expression would give a meaning (`\<` is a word boundary)
ODD_NAMES = ["train<bs=8>", "a.b(c)", "aXb(c)", "100% done", "x_y", "xzy", "back\\slash", "two\nlines"]


@pytest.mark.parametrize(
    "pattern, names",
    [
        ("train<bs=8>", ["train<bs=8>"]),
        ("%<%", ["train<bs=8>"]),
        ("%>", ["train<bs=8>"]),
        ("a.b(c)", ["a.b(c)"]),
        ("a.b(%", ["a.b(c)"]),
        ("100% done", ["100% done"]),  # % is the documented wildcard: it matches itself too
        ("x_y", ["x_y", "xzy"]),  # so is _
        ("back\\slash", ["back\\slash"]),  # no escape character, as DuckDB's LIKE
        ("two%", ["two\nlines"]),  # % spans a line break, as in LIKE
    ],
)
def test_annotation_patterns_match_literally_but_for_the_wildcards(tmp_path, pattern, names):
    odd = [_x("user_annotation", n, -1, 102) for n in ODD_NAMES]  # each around the whole step
    t = open_events(tmp_path, STEP + odd)
    want = {len(STEP) + ODD_NAMES.index(n) for n in names}
    assert set(t.critical_path(pattern)["window_uid"]) == want
    assert set(t.sql(f"select uid from slices where name like '{pattern}'")["uid"]) == want  # the same as LIKE


@pytest.mark.parametrize("seed", range(5))
def test_host_nodes_are_ordered_as_by_their_four_keys(seed):
    # one int64 key where the keys fit, lexsort where they do not: the same order either way
    rng = np.random.default_rng(seed)
    n = 500
    ww = rng.integers(0, 4, n)
    k1 = rng.permutation(n).astype(np.int64)
    k2 = rng.integers(0, 2, n).astype(np.int8)
    k3 = -rng.integers(0, 6, n)
    assert cp_graph._order(ww, k1, k2, k3).tolist() == np.lexsort((k3, k2, k1, ww)).tolist()
    big = k1 + (1 << 60)  # a key that would overflow
    assert cp_graph._order(ww, big, k2, k3).tolist() == np.lexsort((k3, k2, big, ww)).tolist()
