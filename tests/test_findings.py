"""The findings rules (sql/findings/): each fires on a trace built here to trigger it and stays
silent on one built not to, with the time at stake worked out by hand; on real traces each
rule's time at stake equals what the view beneath it gives for that evidence, computed here
from that view; thresholds are overridden through Face.findings."""

import json
from pathlib import Path

import polars as pl
import pytest
from conftest import CORPUS, DATA_TRACE

import tracecols
from tracecols.errors import QueryError

US = 1000  # ns per µs
H100 = {"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 80 * 10**9}


def _x(name, cat, ts, dur, pid=1, tid=1, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args}


class Builder:
    """Events of one trace; times in µs. Kernels run on device 0, launched from pid 1 tid 1."""

    def __init__(self):
        self.ev = []
        self.corr = 0

    def op(self, name, ts, dur, cat="cpu_op", **args):
        self.ev.append(_x(name, cat, ts, dur, **args))

    def kernel(self, name, ts, dur, stream=7, launch_ts=None, launch_dur=1, launch="cudaLaunchKernel", cat="kernel"):
        self.corr += 1
        if launch_ts is not None:
            self.ev.append(_x(launch, "cuda_runtime", launch_ts, launch_dur, correlation=self.corr))
        self.ev.append(_x(name, cat, ts, dur, pid=0, tid=stream, device=0, stream=stream, correlation=self.corr))

    def memory(self, ts, allocated, reserved):
        args = {"Total Reserved": reserved, "Total Allocated": allocated, "Bytes": allocated, "Addr": 4096 + len(self.ev)}
        args |= {"Device Id": 0, "Device Type": 1}
        instant = {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": ts}
        self.ev.append(instant | {"args": args})

    def write(self, path, device=H100, rank=None, world=None):
        doc = {"schemaVersion": 1, "traceEvents": self.ev, "deviceProperties": [device]}
        if rank is not None:
            doc["distributedInfo"] = {"rank": rank, "world_size": world, "backend": "nccl"}
        Path(path).write_text(json.dumps(doc))
        return str(path)

    def open(self, tmp_path, **kw):
        return tracecols.open(self.write(tmp_path / "t.json", **kw))


def _rows(t, rule, thresholds=None):
    return t.findings(thresholds).filter(pl.col("rule") == rule).to_dicts()


# --- host_idle --------------------------------------------------------------------------------


def _host_idle_trace():
    """Stream 7 of device 0: kernels A … F and a pageable copy, each launched after the stream
    drained, while the host ran one kind of work; stream 8 runs G during the DataLoader gap."""
    b = Builder()
    b.kernel("kA", 100, 10, launch_ts=90)
    b.op("aten::item", 112, 48)  # gap [110, 170): .item() with its synchronisation
    b.op("aten::_local_scalar_dense", 112.5, 47)
    b.op("cudaStreamSynchronize", 113, 45, cat="cuda_runtime")
    b.kernel("kB", 170, 10, launch_ts=165)
    b.op("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 185, 215, cat="user_annotation")
    b.kernel("kG", 300, 80, stream=8)  # the device is busy until 380: of gap [180, 410) only 30 µs count
    b.kernel("kC", 410, 10, launch_ts=405)
    b.kernel("kD", 505, 10, launch_ts=500)  # gap [420, 505): nothing of a known kind on the host
    copy = {"launch": "cudaMemcpyAsync", "cat": "gpu_memcpy"}
    b.kernel("Memcpy HtoD (Pageable -> Device)", 640, 10, launch_ts=600, launch_dur=45, **copy)
    b.op("cudaDeviceSynchronize", 655, 45, cat="cuda_runtime")  # gap [650, 725)
    b.kernel("kE", 725, 10, launch_ts=720)
    b.op("aten::nonzero", 740, 60)  # gap [735, 810)
    b.op("cudaMemcpyAsync", 750, 5, cat="cuda_runtime")  # the copy of its output's size
    b.kernel("kF", 810, 10, launch_ts=805)
    return b


def test_host_idle_gives_each_gap_the_host_work_that_held_the_launch(tmp_path):
    t = _host_idle_trace().open(tmp_path)
    rows = _rows(t, "host_idle")
    span = 720 * US  # first device event 100 µs, last end 820 µs
    expected = [("pageable_copy", 125), ("launch", 85), ("nonzero", 75), ("sync", 75), ("item", 60), ("data_loading", 30)]
    assert [(r["kind"], r["stake_ns"]) for r in rows] == [(k, us * US) for k, us in expected]
    for r in rows:
        assert r["stake_pct"] == pytest.approx(100 * r["stake_ns"] / span)
        assert r["severity"] == ("high" if r["stake_ns"] >= 0.1 * span else "medium")
        assert r["device"] == 0 and r["remedy"]
    names = {r["kind"]: r["names"] for r in rows}
    assert names["item"] == ["aten::item"] and names["sync"] == ["cudaDeviceSynchronize"]
    assert names["nonzero"] == ["aten::nonzero"] and names["launch"] == ["kD"]
    assert names["pageable_copy"] == ["Memcpy HtoD (Pageable -> Device)"]
    assert names["data_loading"] == ["enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"]
    uid = dict(t.sql("select name, uid from slices").rows()) | dict(t.sql("select name, uid from kernels").rows())
    assert {r["kind"]: r["uids"] for r in rows}["item"] == [uid["aten::item"]]
    assert {r["kind"]: r["uids"] for r in rows}["launch"] == [uid["kD"]]


def test_host_idle_is_silent_when_work_is_queued_ahead_and_below_its_threshold(tmp_path):
    b = Builder()
    for i in range(5):  # every launch long before the stream drains
        b.kernel(f"k{i}", 100 + 20 * i, 15, launch_ts=10 + i)
    b.op("aten::item", 20, 50)
    t = b.open(tmp_path)
    assert _rows(t, "host_idle") == []
    b = Builder()
    b.kernel("k0", 100, 10, launch_ts=90)
    b.op("aten::item", 115, 2)  # on a CPU tensor: no runtime call beneath it, so not the cause
    b.kernel("k1", 155, 10, launch_ts=150)
    assert [(r["kind"], r["stake_ns"]) for r in _rows(b.open(tmp_path), "host_idle")] == [("launch", 45 * US)]
    b = Builder()
    b.kernel("k0", 100, 1000, launch_ts=90)
    b.kernel("k1", 1105, 1000, launch_ts=1102)  # a 5 µs host gap: 0.24 % of the span
    t = b.open(tmp_path)
    assert _rows(t, "host_idle") == []
    assert [(r["kind"], r["stake_ns"]) for r in _rows(t, "host_idle", {"host_idle": 0.2})] == [("launch", 5 * US)]
    assert _rows(t, "host_idle") == []  # the override held for that call only


# --- launch_bound -----------------------------------------------------------------------------


def _tiny_kernels(n):
    """n kernels of 2 µs, each launched by a 5 µs call that starts 10 µs after the one before: each
    stream gap is 8 µs, of which the launch call explains 5."""
    b = Builder()
    for i in range(n):
        b.kernel(f"tiny{i % 3}", 1006 + 10 * i, 2, launch_ts=1000 + 10 * i, launch_dur=5)
    return b


def test_launch_bound_fires_on_a_long_stretch_of_kernels_shorter_than_their_launch(tmp_path):
    t = _tiny_kernels(20).open(tmp_path)
    (r,) = _rows(t, "launch_bound")
    assert r["stake_ns"] == 19 * 5 * US and r["device"] == 0 and r["kind"] == "stream 7"
    assert r["stake_pct"] == pytest.approx(100 * 19 * 5 / 192)  # span 1006 … 1198 µs
    assert r["names"] == ["tiny0", "tiny1", "tiny2"]  # 7, 7 and 6 of them
    assert r["summary"].startswith("1 stretch(es) of 20 to 20 kernels")
    assert r["uids"] == [t.sql("select uid from kernels order by ts_ns limit 1").item()]
    # the same gaps, whole, are host_idle's (cause launch): the two findings overlap
    assert [(h["kind"], h["stake_ns"]) for h in _rows(t, "host_idle")] == [("launch", 19 * 8 * US)]


def test_launch_bound_is_silent_on_a_short_stretch_unless_the_threshold_is_lowered(tmp_path):
    t = _tiny_kernels(15).open(tmp_path)
    assert _rows(t, "launch_bound") == []
    (r,) = _rows(t, "launch_bound", {"launch_bound": 10})
    assert r["stake_ns"] == 14 * 5 * US


def test_launch_bound_is_silent_when_kernels_outlast_their_launch(tmp_path):
    b = Builder()
    for i in range(20):
        b.kernel("long", 1006 + 30 * i, 20, launch_ts=1000 + 30 * i, launch_dur=5)
    assert _rows(b.open(tmp_path), "launch_bound") == []


# --- exposed_comm -----------------------------------------------------------------------------

NCCL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"


def test_exposed_comm_fires_on_communication_beside_no_computation(tmp_path):
    b = Builder()
    b.kernel("compute", 0, 100, launch_ts=-5)
    b.kernel(NCCL, 50, 100, stream=20, launch_ts=-4)
    t = b.open(tmp_path)
    (r,) = _rows(t, "exposed_comm")
    assert r["stake_ns"] == 50 * US and r["stake_pct"] == pytest.approx(100 * 50 / 150) and r["severity"] == "high"
    assert r["names"] == [NCCL]


def test_exposed_comm_is_silent_when_computation_covers_it(tmp_path):
    b = Builder()
    b.kernel("compute", 0, 100, launch_ts=-5)
    b.kernel(NCCL, 20, 60, stream=20, launch_ts=-4)
    assert _rows(b.open(tmp_path), "exposed_comm") == []


# --- low_roofline -----------------------------------------------------------------------------


def _gemm(dur_us):
    b = Builder()
    b.op("aten::mm", 0, 20, **{"Input Dims": [[4096, 4096], [4096, 4096]], "Input type": ["c10::BFloat16"] * 2})
    b.kernel("sm90_gemm", 20, dur_us, launch_ts=5, launch_dur=5)
    return b


def test_low_roofline_fires_on_a_big_gemm_far_below_the_peak(tmp_path):
    t = _gemm(1000).open(tmp_path)
    (r,) = _rows(t, "low_roofline")
    # 2·4096³ FLOPs in 1 ms against the H100's 989.5 bf16 TFLOP/s: the rest of the ms is at stake
    pct = 2 * 4096**3 / 1e-3 / 989.5e12
    assert r["kind"] == "gemm" and r["stake_ns"] == round(1000 * US * (1 - pct))
    assert r["names"] == ["aten::mm [[4096, 4096], [4096, 4096]]"]


def test_low_roofline_is_silent_near_the_roofline_and_on_small_ops(tmp_path):
    assert _rows(_gemm(150).open(tmp_path), "low_roofline") == []  # 93 % of the roofline
    b = Builder()
    b.op("aten::mm", 0, 20, **{"Input Dims": [[64, 64], [64, 64]], "Input type": ["c10::BFloat16"] * 2})
    b.kernel("small_gemm", 20, 40, launch_ts=5, launch_dur=5)  # far below the roofline, but under 50 µs
    assert _rows(b.open(tmp_path), "low_roofline") == []


# --- unattributed_replay ----------------------------------------------------------------------


def test_unattributed_replay_fires_on_a_graph_launch_without_captured_ops(tmp_path):
    b = Builder()
    b.kernel("eager", 0, 400, launch_ts=-5)
    b.kernel("in_graph", 500, 100, launch_ts=450, launch="cudaGraphLaunch")
    (r,) = _rows(b.open(tmp_path), "unattributed_replay")
    assert r["stake_ns"] == 100 * US and r["stake_pct"] == pytest.approx(100 * 100 / 600)


def test_unattributed_replay_is_silent_without_graph_launches_or_below_the_threshold(tmp_path):
    b = Builder()
    b.kernel("eager", 0, 400, launch_ts=-5)
    assert _rows(b.open(tmp_path), "unattributed_replay") == []
    b.kernel("in_graph", 500, 10, launch_ts=450, launch="cudaGraphLaunch")  # 2.4 % of the busy time
    assert _rows(b.open(tmp_path), "unattributed_replay") == []


# --- straggler, collective_skew ----------------------------------------------------------------


def _job(tmp_path, slow):
    """Three ranks, three ProfilerSteps each; rank 2's steps last 1500 µs when `slow` (1000
    otherwise) and it reaches each step's allreduce 400 µs after the others."""
    paths = []
    for rank in range(3):
        b = Builder()
        step = 1500 if slow and rank == 2 else 1000
        for s in range(3):
            t0 = s * 2000
            b.op(f"ProfilerStep#{s + 1}", t0, step, cat="user_annotation")
            b.kernel("compute", t0 + 10, 100, launch_ts=t0 + 5)
            late = 400 if slow and rank == 2 else 0
            b.kernel(NCCL, t0 + 200 + late, 100, stream=20, launch_ts=t0 + 150 + late)
        paths.append(b.write(tmp_path / f"rank{rank}.json", rank=rank, world=3))
    return tracecols.open(*paths)


def test_straggler_and_collective_skew_name_the_slow_rank(tmp_path):
    t = _job(tmp_path, slow=True)
    (s,) = _rows(t, "straggler")
    assert s["rank"] == 2 and s["kind"] == "step"
    assert s["stake_ns"] == 3 * 500 * US  # 500 µs over the median step, 3 steps (arrival: 3 × 400)
    span = t.sql("select total_ns from gpu_timeline where device is null and rank = 2").item()
    assert s["stake_pct"] == pytest.approx(100 * 3 * 500 * US / span)
    (c,) = _rows(t, "collective_skew")
    assert c["rank"] == 2 and c["kind"] == "allreduce" and c["stake_ns"] == 3 * 400 * US
    assert "rank 2 was last in 3 of them" in c["summary"]


def test_straggler_and_collective_skew_are_silent_on_even_ranks(tmp_path):
    t = _job(tmp_path, slow=False)
    assert _rows(t, "straggler") == [] and _rows(t, "collective_skew") == []


# --- memory_capacity --------------------------------------------------------------------------


def _memory(tmp_path, reserved):
    b = Builder()
    b.kernel("k", 100, 10, launch_ts=90)
    b.memory(95, 800, reserved)
    return b.open(tmp_path, device={"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 1000})


def test_memory_capacity_fires_near_the_device_size(tmp_path):
    (r,) = _rows(_memory(tmp_path, 960), "memory_capacity")
    assert r["device"] == 0 and r["severity"] == "high" and r["stake_ns"] is None
    assert "96.0 %" in r["summary"]
    (r,) = _rows(_memory(tmp_path, 920), "memory_capacity")
    assert r["severity"] == "medium"


def test_memory_capacity_is_silent_with_room_left(tmp_path):
    t = _memory(tmp_path, 850)
    assert _rows(t, "memory_capacity") == []
    assert len(_rows(t, "memory_capacity", {"memory_capacity": 80})) == 1


# --- data_quality -----------------------------------------------------------------------------


def test_data_quality_fires_on_each_reader_warning_and_is_silent_without(tmp_path):
    b = Builder()
    b.kernel("a", 100, 100, launch_ts=90)
    b.kernel("b", 160, 90, launch_ts=91)  # overlaps a on one stream: clipped, with a warning
    t = b.open(tmp_path)
    (r,) = _rows(t, "data_quality")
    assert r["kind"] == "reader" and r["summary"] == t.sql("select warnings from traces").item().to_list()[0]
    b = Builder()
    b.kernel("a", 100, 50, launch_ts=90)
    assert _rows(b.open(tmp_path), "data_quality") == []


# --- recompute --------------------------------------------------------------------------------

RECOMPUTE = "torch/utils/checkpoint.py(1234): recompute_fn"


def _recompute_trace(recomputed_us):
    """A forward kernel of 100 µs, then `recomputed_us` µs of kernels launched inside an
    activation-checkpointing recompute frame (under aten::mm), then a backward kernel of 100 µs."""
    b = Builder()
    b.op("aten::linear", 10, 20)
    b.kernel("fwd", 40, 100, launch_ts=15)
    b.op(RECOMPUTE, 200, 30, cat="python_function")
    b.op("aten::mm", 205, 20)
    b.kernel("fwd_again", 240, recomputed_us, launch_ts=210)
    b.kernel("bwd", 240 + recomputed_us + 10, 100, launch_ts=232)
    return b


def test_recompute_fires_on_kernels_launched_in_a_recompute_frame(tmp_path):
    t = _recompute_trace(50).open(tmp_path)
    (r,) = _rows(t, "recompute")
    # busy 250 µs (100 + 50 + 100); recomputed 50 µs = 20 % of it; the span is [40, 400)
    assert r["stake_ns"] == 50 * US and r["names"] == ["aten::mm"]
    assert r["stake_pct"] == pytest.approx(100 * 50 / 360)
    assert r["severity"] == "high" and "20.0 % of the GPU busy time" in r["summary"]


def test_recompute_is_silent_below_its_threshold_or_without_checkpointing(tmp_path):
    # 4 µs of 204 busy: 1.96 %, under the default 2 %
    assert _rows(_recompute_trace(4).open(tmp_path), "recompute") == []
    assert len(_rows(_recompute_trace(4).open(tmp_path), "recompute", {"recompute": 1.0})) == 1
    b = Builder()
    b.op("aten::mm", 205, 20)
    b.kernel("k", 240, 50, launch_ts=210)
    assert _rows(b.open(tmp_path), "recompute") == []


# --- the view and the API ---------------------------------------------------------------------


def test_findings_rank_by_time_at_stake_and_put_those_without_last(tmp_path):
    b = _host_idle_trace()
    b.kernel("a2", 900, 100, launch_ts=850)
    b.kernel("b2", 960, 60, launch_ts=851)  # a reader warning: no time at stake
    df = b.open(tmp_path).findings()
    stakes = df["stake_ns"].to_list()
    assert stakes[-1] is None and df["rule"][-1] == "data_quality"
    assert [s for s in stakes if s is not None] == sorted((s for s in stakes if s is not None), reverse=True)
    assert df.columns == [
        "rule", "severity", "trace_id", "rank", "device", "kind", "stake_ns", "stake_pct", "summary",
        "uids", "names", "sources", "remedy",
    ]  # fmt: skip


def test_a_threshold_override_of_an_unknown_rule_or_not_a_number_is_one_clear_error(tmp_path):
    t = _tiny_kernels(3).open(tmp_path)
    with pytest.raises(QueryError, match="no finding rule with a threshold named 'nope'"):
        t.findings({"nope": 1})
    with pytest.raises(QueryError, match="must be a finite number"):
        t.findings({"host_idle": "5"})
    with pytest.raises(QueryError, match="must be a finite number"):
        t.findings({"host_idle": float("inf")})


def test_a_threshold_set_in_sql_reaches_the_view(tmp_path):
    t = _tiny_kernels(15).open(tmp_path)
    t.sql("SET VARIABLE tc_threshold_launch_bound = 10")
    assert t.sql("select count(*) from finding_launch_bound").item() == 1


# --- real traces: each rule's time at stake is what its view gives ----------------------------

REAL = [
    DATA_TRACE,
    Path(__file__).parent / "data/h100/eager_train.pt.trace.json.gz",
    Path(__file__).parent / "data/h100/graph_replay.pt.trace.json.gz",
    CORPUS / "TraceLens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
    CORPUS / "TraceLens/tests/traces/inference/vllm_decode_full/graph_execution.json.gz",
    CORPUS / "HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz",
    CORPUS / "kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
]
ALL = {
    r: 0.0 for r in ("host_idle", "exposed_comm", "straggler", "collective_skew", "unattributed_replay")
}  # every finding of those rules, however small


def _by(df, *keys):
    return {tuple(r[k] for k in keys): r for r in df.to_dicts()}


@pytest.fixture(scope="module", params=[p for p in REAL if p.exists()], ids=lambda p: p.name)
def real(request):
    t = tracecols.open(request.param)
    return t, t.findings(ALL)


def test_host_idle_is_the_host_wait_gaps_where_the_device_idled(real):
    t, f = real
    gaps = t.sql("select * from idle_gaps where cause = 'host_wait'")
    ev = t.sql("""select k.trace_id, k.device, k.uid, k.ts_ns, k.end_ns from kernels k join traces t using (trace_id)
                  where not (k.end_ns < t.start_ns or k.ts_ns > t.end_ns)""")
    prev = {}  # the latest end of the device's earlier events, walked in idle_gaps' order
    for (trace, _), g in ev.sort("trace_id", "device", "ts_ns", "end_ns", "uid").group_by(
        ["trace_id", "device"], maintain_order=True
    ):
        latest = None
        for uid, end in zip(g["uid"], g["end_ns"]):
            prev[trace, uid] = latest
            latest = end if latest is None else max(latest, end)
    want: dict = {}
    for r in gaps.to_dicts():
        part = max(0, r["gap_end_ns"] - prev[r["trace_id"], r["uid"]])
        assert part <= r["gap_ns"]
        want[r["trace_id"], r["device"]] = want.get((r["trace_id"], r["device"]), 0) + part
    got: dict = {}
    for r in f.filter(pl.col("rule") == "host_idle").to_dicts():
        got[r["trace_id"], r["device"]] = got.get((r["trace_id"], r["device"]), 0) + r["stake_ns"]
    assert got == {k: v for k, v in want.items() if v > 0}


def test_exposed_comm_is_gpu_timeline_exposed_communication(real):
    t, f = real
    g = t.sql("select trace_id, device, exposed_comm_ns from gpu_timeline where device is not null and exposed_comm_ns > 0")
    got = {(r["trace_id"], r["device"]): r["stake_ns"] for r in f.filter(pl.col("rule") == "exposed_comm").to_dicts()}
    assert got == {(r["trace_id"], r["device"]): r["exposed_comm_ns"] for r in g.to_dicts()}


def test_low_roofline_is_op_perf_time_beyond_the_roofline(real):
    t, _ = real
    f = t.findings()  # the default threshold, 50 %
    ops = t.sql("""select trace_id, device, category, gpu_ns, roofline_pct from op_perf
                   where innermost and category in ('gemm', 'sdpa_fwd', 'sdpa_bwd') and gpu_ns >= 50000
                     and roofline_pct < 50 and not coalesce(above_peak, false)""")
    want: dict = {}
    for r in ops.to_dicts():
        key = (r["trace_id"], r["device"], "gemm" if r["category"] == "gemm" else "attention")
        want[key] = want.get(key, 0) + r["gpu_ns"] * (1 - r["roofline_pct"] / 100)
    got = {k: r["stake_ns"] for k, r in _by(f.filter(pl.col("rule") == "low_roofline"), "trace_id", "device", "kind").items()}
    assert got == {k: round(v) for k, v in want.items()}


def test_launch_bound_is_the_launch_explained_idle_time_inside_long_stretches(real):
    t, f = real
    k = t.sql("""select k.trace_id, k.device, k.stream, k.uid, k.cat, l.short, l.launch_name, l.cpu_dur_ns
                 from kernels k left join kernel_launch_stats l using (trace_id, uid)
                 order by k.trace_id, k.device, k.stream, k.ts_ns, k.end_ns, k.uid""")
    idle = dict(((r[0], r[1]), r[2]) for r in t.sql("select trace_id, uid, device_idle_ns from _device_idle").rows())
    want: dict = {}
    for (trace, device, stream), g in k.group_by(["trace_id", "device", "stream"], maintain_order=True):
        run: list = []
        for r in [*g.to_dicts(), None]:
            lb = r is not None and r["cat"] == "kernel" and bool(r["short"]) and "graphlaunch" not in r["launch_name"].lower()
            if lb:
                run.append(r)
                continue
            if len(run) >= 16:
                gaps = sum(min(idle.get((trace, e["uid"]), 0), e["cpu_dur_ns"]) for e in run[1:])
                want[trace, device, stream] = want.get((trace, device, stream), 0) + gaps
            run = []
    got = {(r["trace_id"], r["device"], r["kind"]): r["stake_ns"] for r in f.filter(pl.col("rule") == "launch_bound").to_dicts()}
    assert got == {(tr, d, f"stream {s}"): v for (tr, d, s), v in want.items() if v > 0}


def test_unattributed_replay_is_graph_replay_share(real):
    t, f = real
    if "graph_replay_share" not in t.views:
        pytest.skip("no graph_replays table")
    share = t.sql("select trace_id, unmatched_kernel_ns from graph_replay_share where unmatched > 0")
    got = {r["trace_id"]: r["stake_ns"] for r in f.filter(pl.col("rule") == "unattributed_replay").to_dicts()}
    assert got == {r["trace_id"]: r["unmatched_kernel_ns"] for r in share.to_dicts() if r["unmatched_kernel_ns"] > 0}


def test_data_quality_has_one_finding_per_reader_warning(real):
    t, f = real
    n = t.sql("select coalesce(sum(len(warnings)), 0) from traces").item()
    assert f.filter((pl.col("rule") == "data_quality") & (pl.col("kind") == "reader")).height == n


DLRM = CORPUS / "param/et_replay/tests/inputs/dlrm_kineto.tar.gz.extracted/dlrm_kineto"


@pytest.mark.corpus
def test_on_a_real_job_straggler_and_skew_are_their_views(tmp_path):
    paths = sorted(DLRM.glob("*.json*")) or sorted((Path(__file__).parent / "data/runs").glob("ddp_rank*.json.gz"))
    t = tracecols.open(*paths)
    f = t.findings(ALL)
    s = t.sql("""select s.trace_id,
                        greatest(coalesce(s.step_excess_ns * r.steps, 0), coalesce(s.arrival_excess_ns * s.instances, 0)) as x
                 from stragglers s join rank_summary r using (trace_id) where s.straggler""")
    got = {r["trace_id"]: r["stake_ns"] for r in f.filter(pl.col("rule") == "straggler").to_dicts()}
    assert got == {r["trace_id"]: round(r["x"]) for r in s.to_dicts() if r["x"] > 0}
    c = t.sql("select collective, sum(start_skew_ns) as x from collective_skew where ranks >= 2 group by pg_key, collective")
    got = sorted((r["kind"], r["stake_ns"]) for r in f.filter(pl.col("rule") == "collective_skew").to_dicts())
    assert got == sorted((r["collective"], r["x"]) for r in c.to_dicts() if r["x"] > 0)


def test_a_lake_and_its_duckdb_export_take_the_same_overrides(tmp_path):
    import duckdb

    from tracecols.fleet.ingest import ingest_lake

    runs = sorted((Path(__file__).parent / "data/runs").glob("ddp_rank*.pt.trace.json.gz"))
    ingest_lake([str(p) for p in runs], str(tmp_path / "lake"), jobs=1)
    lake = tracecols.Lake(tmp_path / "lake")
    whole = lake.findings()
    idle = whole.filter(pl.col("rule") == "host_idle")
    cut = sorted(idle["stake_pct"])[len(idle) // 2]  # a threshold that keeps the larger half
    kept = lake.findings({"host_idle": cut}).filter(pl.col("rule") == "host_idle")
    assert 0 < kept.height < idle.height and min(kept["stake_pct"]) >= cut
    assert set(whole["rank"]) == {0, 1}
    lake.export_duckdb(tmp_path / "l.duckdb")
    con = duckdb.connect(str(tmp_path / "l.duckdb"), read_only=True)
    assert con.execute("select count(*) from findings where rule = 'host_idle'").fetchone()[0] == idle.height
    con.execute(f"SET VARIABLE tc_threshold_host_idle = {cut}")
    assert con.execute("select count(*) from findings where rule = 'host_idle'").fetchone()[0] == kept.height


@pytest.mark.corpus
def test_recompute_is_the_recomputed_kernels_of_a_real_checkpointed_run():
    """resnet_act_checkpoint (MI300X): the time at stake is the summed duration of the device
    events whose launch call the tree puts under torch.utils.checkpoint's recompute frame."""
    t = tracecols.open(CORPUS / "TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz")
    kernels, slices = t.frame("kernels"), t.frame("slices")
    rc = slices.filter(pl.col("is_recompute")).select("trace_id", pl.col("uid").alias("launch_uid"))
    want = kernels.join(rc, on=["trace_id", "launch_uid"])["dur_ns"].sum()
    (r,) = _rows(t, "recompute")
    assert want > 0 and r["stake_ns"] == want


def test_sources_are_the_user_frames_above_the_evidence():
    """stacks_infer (with_stack, tests/data/h100): each finding's sources are, for its evidence
    events in order, the innermost Python frame `file.py(line): fn` outside torch/ whose time
    range on the launching thread holds the event (for a kernel, its launch call), from the JSON."""
    import gzip
    import re

    path = Path(__file__).parent / "data/h100/stacks_infer.pt.trace.json.gz"
    with gzip.open(path, "rt") as f:
        events = json.load(f)["traceEvents"]
    xs = [e for e in events if e.get("ph") == "X"]
    by_uid = dict(enumerate(events))
    frames = [
        e
        for e in xs
        if e.get("cat") == "python_function"
        and re.search(r"\.py\(\d+\): ", e["name"])
        and not re.search(r"(^|/)torch/", e["name"])
    ]
    launch_by_corr = {
        e["args"]["correlation"]: e for e in xs if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})
    }

    def source(uid):
        e = by_uid[uid]
        if e.get("cat") == "kernel":
            e = launch_by_corr[e["args"]["correlation"]]
        holding = [
            f for f in frames if f["tid"] == e["tid"] and f["ts"] <= e["ts"] and e["ts"] + e.get("dur", 0) <= f["ts"] + f["dur"]
        ]
        return min(holding, key=lambda f: f["dur"])["name"] if holding else None

    found = tracecols.open(path).findings()
    checked = 0
    for r in found.iter_rows(named=True):
        want = []
        for uid in r["uids"]:
            s = source(uid)
            if s is not None and s not in want:
                want.append(s)
        assert r["sources"] == want, r["rule"]
        checked += bool(want)
    assert checked >= 2  # host_idle's ops and .item() calls point at make.py's lines
