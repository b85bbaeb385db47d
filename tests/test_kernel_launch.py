"""kernel_launch_stats, kernel_launch_summary, short_kernels, short_kernel_histogram and
kernel_sequences: on a hand-built trace with answers worked out by hand (times in µs), and on
real traces against plain-Python loops over the base tables."""

import math
from collections import defaultdict

import pytest
from conftest import CORPUS, DATA_TRACE, open_events

import tracecols


class Trace:
    """Host pid 1 tid 1; device 0 (pid 0). Launch calls link to device events by correlation."""

    def __init__(self):
        self.ev = []
        self.corr = 0

    def op(self, name, ts, dur):
        self.ev.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": {}})

    def launch(self, ts, dur, name="cudaLaunchKernel"):
        self.corr += 1
        self.ev.append(
            {
                "ph": "X",
                "cat": "cuda_runtime",
                "name": name,
                "pid": 1,
                "tid": 1,
                "ts": ts,
                "dur": dur,
                "args": {"correlation": self.corr},
            }
        )
        return self.corr

    def device(self, name, ts, dur, corr=None, stream=7, cat="kernel"):
        args = {"device": 0, "stream": stream}
        if corr is not None:
            args["correlation"] = corr
        self.ev.append({"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": stream, "ts": ts, "dur": dur, "args": args})

    def open(self, tmp_path):
        return open_events(tmp_path, self.ev)


@pytest.fixture
def launches(tmp_path):
    t = Trace()
    # two aten::linear running [gemm, relu] (their launches sit under a nested aten::addmm:
    # sequences belong to the top-level op), one running [relu, gemm]
    t.op("aten::linear", 0, 20)
    t.op("aten::addmm", 0.5, 19)
    t.device("gemm", 10, 3, t.launch(1, 5))  # shorter than its launch; delay 10 - 6 = 4
    t.device("relu", 13, 20, t.launch(7, 2))  # delay 13 - 9 = 4
    t.op("aten::linear", 100, 20)
    t.op("aten::addmm", 100.5, 19)
    t.device("gemm", 200, 3, t.launch(101, 5))  # delay 94
    t.device("relu", 203, 20, t.launch(107, 2))  # delay 94
    t.op("aten::linear", 300, 80)
    t.device("relu", 500, 2, t.launch(301, 60))  # 60 µs call: runtime outlier; delay 139: delay outlier
    t.device("gemm", 502, 3, t.launch(362, 2))  # delay 138: delay outlier
    t.op("aten::copy_", 400, 30)
    t.device("Memcpy HtoD", 420, 8, t.launch(401, 10, "cudaMemcpyAsync"), stream=8, cat="gpu_memcpy")  # delay 9
    t.op("graph_replay", 700, 20)
    g = t.launch(701, 15, "cudaGraphLaunch")  # one call, two device events
    t.device("g1", 720, 1, g)  # delay 4
    t.device("g2", 721, 1, g)  # delay 5
    t.device("orphan", 600, 50, 99)  # no launch call in the trace
    t.device("edge", 800, 10)  # exactly 10 µs: not short
    t.device("tiny", 810, 0.5)
    return t.open(tmp_path)


def test_kernel_launch_stats_rows(launches):
    got = [
        (r["name"], r["launch_name"], r["stream"], r["cpu_dur_ns"], r["gpu_dur_ns"], r["launch_delay_ns"], r["short"])
        for r in launches.sql("select * from kernel_launch_stats").to_dicts()
    ]
    assert got == [
        ("gemm", "cudaLaunchKernel", 7, 5000, 3000, 4000, True),
        ("relu", "cudaLaunchKernel", 7, 2000, 20000, 4000, False),
        ("gemm", "cudaLaunchKernel", 7, 5000, 3000, 94000, True),
        ("relu", "cudaLaunchKernel", 7, 2000, 20000, 94000, False),
        ("Memcpy HtoD", "cudaMemcpyAsync", 8, 10000, 8000, 9000, True),
        ("relu", "cudaLaunchKernel", 7, 60000, 2000, 139000, True),
        ("gemm", "cudaLaunchKernel", 7, 2000, 3000, 138000, False),
        ("g1", "cudaGraphLaunch", 7, 15000, 1000, 4000, True),
        ("g2", "cudaGraphLaunch", 7, 15000, 1000, 5000, True),
    ]


def test_kernel_launch_summary(launches):
    rows = launches.sql("select * from kernel_launch_summary").to_dicts()
    assert len(rows) == 1
    r = rows[0]
    assert (r["device"], r["events"], r["launch_calls"], r["short_count"]) == (0, 9, 8, 6)
    assert r["short_pct"] == pytest.approx(600 / 9)
    # launch calls (the graph launch once): 2 2 2 5 5 10 15 60 µs
    assert r["cpu_dur_p50_ns"] == pytest.approx(5000)
    assert r["cpu_dur_p95_ns"] == pytest.approx(15000 + 0.65 * 45000)
    assert r["cpu_dur_max_ns"] == 60000
    # delays: 4 4 4 5 9 94 94 138 139 µs
    assert r["delay_p50_ns"] == pytest.approx(9000)
    assert r["delay_p95_ns"] == pytest.approx(138000 + 0.6 * 1000)
    assert r["delay_max_ns"] == 139000
    assert (r["runtime_outliers"], r["delay_outliers"]) == (1, 2)


def test_short_kernels(launches):
    total = 121_500  # every device event of device 0
    got = {r["name"]: r for r in launches.sql("select * from short_kernels").to_dicts()}
    assert set(got) == {"gemm", "relu", "Memcpy HtoD", "g1", "g2", "tiny"}  # not orphan (50 µs), not edge (10 µs)
    relu = got["relu"]
    assert (relu["count"], relu["sum_ns"], relu["short_count"], relu["short_sum_ns"]) == (3, 42000, 1, 2000)
    assert relu["short_count_pct"] == pytest.approx(100 / 3)
    assert relu["short_time_pct"] == pytest.approx(100 * 2000 / total)
    gemm = got["gemm"]
    assert (gemm["count"], gemm["short_count"], gemm["short_sum_ns"], gemm["short_mean_ns"]) == (3, 3, 9000, 3000)
    assert gemm["short_count_pct"] == 100
    assert got["Memcpy HtoD"]["cat"] == "gpu_memcpy"
    assert got["tiny"]["short_sum_ns"] == 500
    assert list(got) == ["gemm", "Memcpy HtoD", "relu", "g1", "g2", "tiny"]  # by short time, then name


def test_short_kernel_histogram(launches):
    got = [
        (r["bucket_lo_ns"], r["bucket_hi_ns"], r["short"], r["count"], r["sum_ns"])
        for r in launches.sql("select * from short_kernel_histogram").to_dicts()
    ]
    assert got == [
        (0, 1000, True, 1, 500),  # tiny
        (1000, 2000, True, 2, 2000),  # g1, g2
        (2000, 5000, True, 4, 11000),  # 3 gemm, the 2 µs relu
        (5000, 10000, True, 1, 8000),  # memcpy
        (10000, 20000, False, 1, 10000),  # edge
        (20000, 50000, False, 2, 40000),  # 2 relu
        (50000, 100000, False, 1, 50000),  # orphan
    ]
    pct = launches.sql("select sum(count_pct) c, sum(time_pct) t from short_kernel_histogram").to_dicts()[0]
    assert (pct["c"], pct["t"]) == (pytest.approx(100), pytest.approx(100))


def test_kernel_sequences(launches):
    got = [
        (r["op_name"], r["seq_rank"], r["sequence"], r["length"], r["instances"], r["total_gpu_ns"], r["mean_gpu_ns"])
        for r in launches.sql("select * from kernel_sequences").to_dicts()
    ]
    assert got == [
        ("aten::copy_", 1, ["Memcpy HtoD"], 1, 1, 8000, 8000),
        ("aten::linear", 1, ["gemm", "relu"], 2, 2, 46000, 23000),
        ("aten::linear", 2, ["relu", "gemm"], 2, 1, 5000, 5000),
        ("graph_replay", 1, ["g1", "g2"], 2, 1, 2000, 2000),
    ]
    pcts = launches.sql("select instances_pct from kernel_sequences where op_name = 'aten::linear'")
    assert pcts["instances_pct"].to_list() == [pytest.approx(200 / 3), pytest.approx(100 / 3)]


def test_kernel_sequences_keeps_the_five_most_frequent(tmp_path):
    t = Trace()
    # aten::cat runs k0 three times, k1 twice, then k2..k6 once each: ranks 1-5 are k0, k1 and
    # the three of k2..k6 with the most GPU time (k6, k5, k4: longer durations)
    ts = 0
    for name, times in [("k0", 3), ("k1", 2), ("k2", 1), ("k3", 1), ("k4", 1), ("k5", 1), ("k6", 1)]:
        for _ in range(times):
            t.op("aten::cat", ts, 10)
            t.device(name, ts + 20, 1 + int(name[1]), t.launch(ts + 1, 2))
            ts += 100
    got = [
        (r["seq_rank"], r["sequence"], r["instances"]) for r in t.open(tmp_path).sql("select * from kernel_sequences").to_dicts()
    ]
    assert got == [(1, ["k0"], 3), (2, ["k1"], 2), (3, ["k6"], 1), (4, ["k5"], 1), (5, ["k4"], 1)]


# ---- real traces against plain loops ----------------------------------------------------


def _pct(xs, q):
    """Linear interpolation between the two nearest ranks (numpy's default)."""
    xs = sorted(xs)
    pos = q * (len(xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def _bucket(d):
    if d < 1000:
        return 0
    p = 10 ** (len(str(d)) - 1)
    return 5 * p if d >= 5 * p else 2 * p if d >= 2 * p else p


def _reference(t):
    kernels = t.table("kernels").to_pylist()
    slices = {
        (s["trace_id"], s["uid"]): s
        for s in t.table("slices").select(["trace_id", "uid", "name", "dur_ns", "end_ns"]).to_pylist()
    }
    launch = defaultdict(list)  # (trace, device) -> [(launch_uid, cpu, gpu, delay)]
    for k in kernels:
        if k["launch_uid"] is not None:
            s = slices[(k["trace_id"], k["launch_uid"])]
            launch[(k["trace_id"], k["device"])].append((k["launch_uid"], s["dur_ns"], k["dur_ns"], k["ts_ns"] - s["end_ns"]))
    summary = {}
    for key, rows in launch.items():
        calls = {uid: cpu for uid, cpu, _, _ in rows}
        delays = [d for *_, d in rows]
        summary[key] = {
            "events": len(rows),
            "launch_calls": len(calls),
            "short_count": sum(gpu < cpu for _, cpu, gpu, _ in rows),
            "cpu_dur_p50_ns": _pct(calls.values(), 0.5),
            "cpu_dur_p95_ns": _pct(calls.values(), 0.95),
            "cpu_dur_max_ns": max(calls.values()),
            "delay_p50_ns": _pct(delays, 0.5),
            "delay_p95_ns": _pct(delays, 0.95),
            "delay_max_ns": max(delays),
            "runtime_outliers": sum(c > 50_000 for c in calls.values()),
            "delay_outliers": sum(d > 100_000 for d in delays),
        }
    short = defaultdict(lambda: [0, 0])  # (trace, device, name) -> [short count, short ns]
    hist = defaultdict(lambda: [0, 0])  # (trace, device, bucket) -> [count, ns]
    for k in kernels:
        if k["dur_ns"] < 10_000:
            short[(k["trace_id"], k["device"], k["name"])][0] += 1
            short[(k["trace_id"], k["device"], k["name"])][1] += k["dur_ns"]
        h = hist[(k["trace_id"], k["device"], _bucket(k["dur_ns"]))]
        h[0] += 1
        h[1] += k["dur_ns"]
    seqs = defaultdict(list)  # (trace, device, top op) -> [(ts, uid, name, dur)]
    for k in kernels:
        if k["top_op_uid"] is not None:
            seqs[(k["trace_id"], k["device"], k["top_op_uid"])].append((k["ts_ns"], k["uid"], k["name"], k["dur_ns"]))
    groups = defaultdict(lambda: [0, 0])  # (trace, device, op name, sequence) -> [instances, gpu ns]
    for (tr, dev, op), ks in seqs.items():
        ks.sort()
        g = groups[(tr, dev, slices[(tr, op)]["name"], tuple(n for _, _, n, _ in ks))]
        g[0] += 1
        g[1] += sum(d for *_, d in ks)
    ranked = defaultdict(list)
    for (tr, dev, op, seq), (n, ns) in groups.items():
        ranked[(tr, dev, op)].append((-n, -ns, list(seq)))
    sequences = set()
    for (tr, dev, op), items in ranked.items():
        for i, (n, ns, seq) in enumerate(sorted(items)[:5]):
            sequences.add((tr, dev, op, i + 1, tuple(seq), -n, -ns))
    return summary, dict(short), dict(hist), sequences


REAL = [
    DATA_TRACE,  # TraceLens's h100/gaunernst_bert-small-uncased__1016001
    CORPUS / "TraceLens/tests/traces/perf_model/normalization/normalization_layer_test.json.gz",
    CORPUS / "HolisticTraceAnalysis/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
    CORPUS / "TraceLens/tests/traces/inference/vllm_decode_full/graph_execution.json.gz",
    CORPUS / "TraceLens/tests/traces/torch_compile_triton/trace.json.gz",
    CORPUS / "TraceLens/tests/traces/mi210/gpu_only_trace/gpu_only_trace.json.gz",
    CORPUS / "HolisticTraceAnalysis/tests/data/mtia_inference_trace/mtia_inference_rank_0.json.gz",
    CORPUS / "kineto/tb_plugin/test/gpu_metrics_input.json",
    CORPUS / "HolisticTraceAnalysis/tests/data/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
]


@pytest.mark.corpus
@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_views_equal_plain_loops_on_real_traces(path):
    t = tracecols.open(path)
    summary, short, hist, sequences = _reference(t)

    got = {(r["trace_id"], r["device"]): r for r in t.sql("select * from kernel_launch_summary").to_dicts()}
    assert set(got) == set(summary)
    for key, want in summary.items():
        for col, v in want.items():
            assert got[key][col] == pytest.approx(v), (key, col)

    # every row's durations are those of its device event and of its launch call
    stats = t.sql(
        "select s.*, k.dur_ns, l.dur_ns as l_dur from kernel_launch_stats s "
        "join kernels k using (trace_id, uid) join slices l on l.trace_id = s.trace_id "
        "and l.uid = s.launch_uid"
    ).to_dicts()
    assert len(stats) == sum(v["events"] for v in summary.values())
    assert all(r["gpu_dur_ns"] == r["dur_ns"] and r["cpu_dur_ns"] == r["l_dur"] for r in stats)

    got_short = {
        (r["trace_id"], r["device"], r["name"]): [r["short_count"], r["short_sum_ns"]]
        for r in t.sql("select * from short_kernels").to_dicts()
    }
    assert got_short == {k: v for k, v in short.items()}

    got_hist = {
        (r["trace_id"], r["device"], r["bucket_lo_ns"]): [r["count"], r["sum_ns"]]
        for r in t.sql("select * from short_kernel_histogram").to_dicts()
    }
    assert got_hist == hist
    assert sum(v[0] for (_, _, lo), v in got_hist.items() if lo < 10_000) == sum(v[0] for v in got_short.values())

    got_seq = {
        (r["trace_id"], r["device"], r["op_name"], r["seq_rank"], tuple(r["sequence"]), r["instances"], r["total_gpu_ns"])
        for r in t.sql("select * from kernel_sequences").to_dicts()
    }
    assert got_seq == sequences


@pytest.mark.corpus
def test_real_traces_have_something_to_check():
    """The comparison above is not vacuous: every GPU trace has linked launches, all but the
    Triton one have short kernels, the traces with cpu_ops have sequences, graph replays give one launch call many
    device events, and the CPU-only trace gives no row at all."""

    def count(t, q):
        return t.sql(q).to_dicts()[0]

    for p in REAL[:-1]:
        t = tracecols.open(p)
        n = count(t, "select count(*) n, count(distinct launch_uid) calls from kernel_launch_stats")
        assert n["n"] > 0, p.name
        if p.name == "graph_execution.json.gz":
            assert n["calls"] < n["n"]
        shorts = count(t, "select count(*) n from short_kernels")["n"]
        assert (shorts == 0) == (p.parent.name == "torch_compile_triton"), p.name
        if count(t, "select count(top_op_uid) n from kernels")["n"]:
            assert count(t, "select count(*) n from kernel_sequences")["n"] > 0, p.name
    cpu = tracecols.open(REAL[-1])
    for v in ("kernel_launch_stats", "kernel_launch_summary", "short_kernels", "short_kernel_histogram", "kernel_sequences"):
        assert count(cpu, f"select count(*) n from {v}")["n"] == 0
