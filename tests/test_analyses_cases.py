"""Each analysis on a small hand-built trace whose answer is worked out by hand below (times in µs)."""

import json
import math
import statistics

import pytest

import tracecols

H100 = "NVIDIA H100 80GB HBM3"


class T:
    """A tiny Kineto trace: host pid 1 tid 1, device 0 (pid 0)."""

    def __init__(self, device_name=H100):
        self.ev = []
        self.corr = 0
        self.device_name = device_name

    def op(self, name, ts, dur, dims=None, types=None, concrete=None):
        args = {}
        if dims is not None:
            args = {"Input Dims": dims, "Input type": types, "Concrete Inputs": concrete or [""] * len(dims)}
        self.ev.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": args})

    def kernel(self, name, ts, dur, launch_ts=None, stream=7, cat="kernel", flow="pair"):
        """flow: "pair" writes the ac2g arrow as Kineto does (start on the launch call, finish on
        the device event, id = correlation); "finish" writes two finishes and no start (seen on
        ROCm memsets); None writes none."""
        self.corr += 1
        if launch_ts is not None:
            self.ev.append(
                {
                    "ph": "X",
                    "cat": "cuda_runtime",
                    "name": "cudaLaunchKernel",
                    "pid": 1,
                    "tid": 1,
                    "ts": launch_ts,
                    "dur": 0.5,
                    "args": {"correlation": self.corr},
                }
            )
            if flow is not None:
                self.ev.append(
                    {
                        "ph": "s" if flow == "pair" else "f",
                        "cat": "ac2g",
                        "name": "ac2g",
                        "id": self.corr,
                        "pid": 1,
                        "tid": 1,
                        "ts": launch_ts,
                    }
                )
        self.ev.append(
            {
                "ph": "X",
                "cat": cat,
                "name": name,
                "pid": 0,
                "tid": stream,
                "ts": ts,
                "dur": dur,
                "args": {"device": 0, "stream": stream, "correlation": self.corr},
            }
        )
        if launch_ts is not None and flow is not None:
            self.ev.append(
                {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": self.corr, "pid": 0, "tid": stream, "ts": ts, "bp": "e"}
            )

    def open(self, tmp_path):
        p = tmp_path / "t.json"
        doc = {
            "schemaVersion": 1,
            "traceEvents": self.ev,
            "deviceProperties": [{"id": 0, "name": self.device_name, "numSms": 132}],
        }
        p.write_text(json.dumps(doc))
        return tracecols.open(p)


def one(t, q):
    rows = t.sql(q).to_dicts()
    assert len(rows) == 1, rows
    return rows[0]


@pytest.fixture
def timeline(tmp_path):
    # compute [0,10) and [5,20); nccl [15,30); memcpy [28,40); compute [50,60)
    t = T()
    t.kernel("gemm_a", 0, 10, launch_ts=-5)
    t.kernel("gemm_a", 5, 15, launch_ts=-4, stream=8)
    t.kernel("ncclDevKernel_AllReduce", 15, 15, launch_ts=-3, stream=9)
    t.kernel("Memcpy DtoD", 28, 12, launch_ts=-2, stream=10, cat="gpu_memcpy")
    t.kernel("relu_kernel", 50, 10, launch_ts=-1)
    return t.open(tmp_path)


def test_gpu_timeline(timeline):
    r = one(timeline, "select * from gpu_timeline where device = 0")
    # computation = [0,20)+[50,60) = 30; comm 15, exposed [20,30) = 10; memcpy 12, exposed [30,40) = 10
    assert (r["computation_ns"], r["total_comm_ns"], r["exposed_comm_ns"]) == (30_000, 15_000, 10_000)
    assert (r["total_memcpy_ns"], r["exposed_memcpy_ns"]) == (12_000, 10_000)
    assert (r["busy_ns"], r["total_ns"], r["idle_ns"]) == (50_000, 60_000, 10_000)
    assert r["idle_pct"] == pytest.approx(100 / 6)
    whole = one(timeline, "select * from gpu_timeline where device is null")
    assert whole["busy_ns"] == 50_000
    tl = {x["type"]: x["time ms"] for x in timeline.sql("select * from tracelens_gpu_timeline").to_dicts()}
    assert tl["exposed_comm_time"] == pytest.approx(0.010) and tl["busy_time"] == pytest.approx(0.050)


def test_temporal_breakdown_and_overlap(timeline):
    r = one(timeline, "select * from temporal_breakdown where device = 0")
    # kernel_time 60, idle 10, compute 30, non-compute 20
    assert (r["kernel_time_ns"], r["idle_ns"], r["compute_ns"], r["non_compute_ns"]) == (60_000, 10_000, 30_000, 20_000)
    assert r["idle_pct"] + r["compute_pct"] + r["non_compute_pct"] == pytest.approx(100)
    o = one(timeline, "select * from comm_compute_overlap where device = 0")
    # compute ∩ comm = [15,20) = 5 of 15
    assert (o["overlap_ns"], o["exposed_comm_ns"]) == (5_000, 10_000)
    assert o["overlap_pct"] == pytest.approx(100 / 3)


def test_kernel_stats(timeline):
    r = one(timeline, "select * from kernel_stats where name = 'gemm_a' and stream = 7")
    assert (r["count"], r["sum_ns"], r["min_ns"], r["max_ns"]) == (1, 10_000, 10_000, 10_000)
    c = one(timeline, "select * from kernel_class_stats where kernel_class = 'gemm'")
    # 10 and 15 µs: mean 12.5, median 12.5, sample std = 2.5·√2; share 25 of 62 µs
    assert (c["count"], c["sum_ns"]) == (2, 25_000)
    assert c["median_ns"] == 12_500 and c["std_ns"] == pytest.approx(2500 * math.sqrt(2))
    assert c["time_pct"] == pytest.approx(100 * 25 / 62)


def test_tracelens_views_follow_tracelens_links_parents_and_durations(tmp_path):
    t = T()
    t.op("record_param_comms", 0, 10)
    t.ev.append({"ph": "X", "cat": "user_annotation", "name": "nccl:all_reduce", "pid": 1, "tid": 1, "ts": 1, "dur": 8})
    t.kernel("ncclDevKernel_Generic", 20, 10, launch_ts=2, stream=9)
    t.op("aten::mystery", 10, 10)
    t.kernel("void at::native::vectorized_elementwise_kernel<4, f>", 30, 5, launch_ts=11)
    t.op("aten::_foreach_copy_", 20, 5)
    t.kernel("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<g>", 35, 5, launch_ts=21)
    t.kernel("Memset (Device)", 40, 5, launch_ts=26, cat="gpu_memset", flow="finish")  # no flow start
    t.kernel("k_noflow", 45, 5, launch_ts=27, flow=None)
    t.ev.append(
        {
            "ph": "X",
            "cat": "cuda_runtime",
            "name": "cudaGraphLaunch",
            "pid": 1,
            "tid": 1,
            "ts": 28,
            "dur": 0.5,
            "args": {"correlation": 100},
        }
    )
    for name, ts in (("g1", 50), ("g2", 55)):  # a graph's kernels: its correlation, no arrows
        t.ev.append(
            {
                "ph": "X",
                "cat": "kernel",
                "name": name,
                "pid": 0,
                "tid": 7,
                "ts": ts,
                "dur": 5,
                "args": {"device": 0, "stream": 7, "correlation": 100},
            }
        )
    t.op("aten::add", 30, 10)
    t.kernel("ov", 60, 10, launch_ts=31)
    t.kernel("ov", 65, 3, launch_ts=32)  # inside the previous one on its stream: kernels clips that one
    tr = t.open(tmp_path)
    names = (
        "select k.name, k.launch_uid is not null as linked, g.launch_uid is not null as tl from kernels k "
        "join _tracelens_gpu_events g using (trace_id, uid) order by k.uid"
    )
    links = tr.sql(names).rows()
    assert all(linked for _, linked, _ in links)  # tracecols links every one by correlation
    assert {n for n, _, tl in links if not tl} == {"Memset (Device)", "k_noflow"}
    ks = {
        (r["Parent op category"], r["Parent cpu_op"], r["Kernel name"]): r
        for r in tr.sql("select * from tracelens_kernel_summary").to_dicts()
    }
    graph = {k for k in ks if k[2] in ("g1", "g2")}  # linked; attributed as kernels attributes them
    assert len(graph) == 2 and all(k[1] for k in graph)
    assert set(ks) - graph == {
        ("record_param_comms", "record_param_comms", "ncclDevKernel_Generic"),  # not the launch call
        ("elementwise", "aten::mystery", "void at::native::vectorized_elementwise_kernel<4, f>"),
        ("multi_tensor_apply", "aten::_foreach_copy_", "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<g>"),
        ("", "", "k_noflow"),
        ("elementwise", "aten::add", "ov"),
    }
    ov = ks[("elementwise", "aten::add", "ov")]
    assert (ov["Kernel duration (µs)_sum"], ov["Kernel duration (µs)_count"], ov["Kernel duration (µs)_max"]) == (13, 2, 10)
    tl = {r["type"]: r["time ms"] * 1000 for r in tr.sql("select * from tracelens_gpu_timeline").to_dicts()}
    # linked: nccl [20,30), [30,35), [35,40), graph [50,60), ov [60,70) as written
    assert tl["total_time"] == pytest.approx(50) and tl["busy_time"] == pytest.approx(40)
    assert tl["computation_time"] == pytest.approx(30) and tl["exposed_comm_time"] == pytest.approx(10)


@pytest.fixture
def gaps(tmp_path):
    t = T()
    t.kernel("k1", 0, 10, launch_ts=-5)
    t.kernel("k2", 12, 8, launch_ts=1)  # gap 2 µs, launched before k1 ended: kernel_wait
    t.kernel("k3", 100, 10, launch_ts=90)  # gap 80, launched after k2 ended (20): host_wait
    t.kernel("k4", 200, 10, launch_ts=15)  # gap 90, launched long before: other
    return t.open(tmp_path)


def test_idle_gaps_and_time(gaps):
    g = {r["name"]: (r["gap_ns"], r["cause"]) for r in gaps.sql("select * from idle_gaps").to_dicts()}
    assert g == {"k2": (2_000, "kernel_wait"), "k3": (80_000, "host_wait"), "k4": (90_000, "other")}
    r = one(gaps, "select * from idle_time")
    assert (r["span_ns"], r["idle_ns"], r["busy_ns"]) == (210_000, 172_000, 38_000)
    assert (r["host_wait_ns"], r["kernel_wait_ns"], r["other_ns"]) == (80_000, 2_000, 90_000)
    assert r["host_wait_pct"] + r["kernel_wait_pct"] + r["other_pct"] == pytest.approx(100)


def test_queue_depth(gaps):
    q = gaps.sql("select ts_ns, delta, queue_depth from queue_depth order by ts_ns, delta").rows()
    # launches at -5, 1, 15, 90; starts at 0, 12, 100, 200
    assert [d for _, _, d in q] == [1, 0, 1, 0, 1, 2, 1, 0]
    assert [ts for ts, _, _ in q][-1] == 200_000


def _copy(name, dev, stream, ts, dur, nbytes=None, bw=None, cat="gpu_memcpy"):
    args = {"device": dev, "stream": stream}
    if nbytes is not None:
        args["bytes"] = nbytes
    if bw is not None:
        args["memory bandwidth (GB/s)"] = bw
    return {"ph": "X", "cat": cat, "name": name, "pid": dev, "tid": stream, "ts": ts, "dur": dur, "args": args}


def test_memcpy_bandwidth(tmp_path):
    from conftest import open_events

    htod = "Memcpy HtoD (Pageable -> Device)"
    t = open_events(
        tmp_path,
        [
            _copy(htod, 0, 7, 10, 10, nbytes=1_000_000),  # 100 bytes/ns over [10, 20) µs
            _copy(htod, 0, 8, 15, 10, nbytes=500_000),  # 50 bytes/ns over [15, 25), beside the first
            _copy(htod, 0, 7, 25, 5, nbytes=100_000),  # 20 bytes/ns from 25, as the second ends
            _copy("Memcpy DtoH (Device -> Pinned)", 0, 9, 12, 4, nbytes=400, bw=0.05),  # the trace's rate wins
            _copy("Memset (Device)", 0, 7, 40, 2, nbytes=2000, cat="gpu_memset"),  # 1 byte/ns
            _copy(htod, 0, 7, 50, 5),  # no byte count: left out
            _copy(htod, 0, 7, 60, 0, nbytes=100),  # no duration: left out
            _copy("Memcpy PtoP (Device -> Device)", 1, 3, 10, 10, nbytes=3000),  # 0.3 bytes/ns
            # overlap on one stream: the first keeps its written duration (10 µs, 1 byte/ns), not the clipped 5
            _copy("Memcpy DtoD (Device -> Device)", 1, 4, 30, 10, nbytes=10_000),
            _copy("Memcpy DtoD (Device -> Device)", 1, 4, 35, 2, nbytes=4000),  # 2 bytes/ns
        ],
    )
    got = {}
    for r in t.sql("select * from memcpy_bandwidth order by device, direction, ts_ns").iter_rows(named=True):
        got.setdefault((r["device"], r["direction"]), []).append((r["ts_ns"], r["end_ns"], r["copies"], r["bytes_per_s"]))
    us = 1000
    want = {
        (0, "HtoD"): [
            (10 * us, 15 * us, 1, 100e9),
            (15 * us, 20 * us, 2, 150e9),
            (20 * us, 25 * us, 1, 50e9),
            (25 * us, 30 * us, 1, 20e9),
            (30 * us, None, 0, 0.0),
        ],
        (0, "DtoH"): [(12 * us, 16 * us, 1, 0.05e9), (16 * us, None, 0, 0.0)],
        (0, "memset"): [(40 * us, 42 * us, 1, 1e9), (42 * us, None, 0, 0.0)],
        (1, "PtoP"): [(10 * us, 20 * us, 1, 0.3e9), (20 * us, None, 0, 0.0)],
        (1, "DtoD"): [
            (30 * us, 35 * us, 1, 1e9),
            (35 * us, 37 * us, 2, 3e9),
            (37 * us, 40 * us, 1, 1e9),
            (40 * us, None, 0, 0.0),
        ],
    }
    assert got.keys() == want.keys()
    for key, rows in want.items():
        assert [r[:3] for r in got[key]] == [r[:3] for r in rows], key
        assert [r[3] for r in got[key]] == pytest.approx([r[3] for r in rows], rel=1e-12), key
        assert got[key][-1][3] == 0.0  # exactly: no rounding dust once every copy has ended


def test_op_perf(tmp_path):
    t = T()
    t.op("aten::addmm", 0, 5, [[64], [32, 128], [128, 64], [], []], ["c10::BFloat16"] * 3 + ["Scalar"] * 2)
    t.kernel("gemm", 10, 10, launch_ts=1)
    t.op(
        "aten::convolution",
        20,
        5,
        [[2, 3, 8, 8], [4, 3, 3, 3], [], [], [], [], [], [], []],
        ["float", "float", "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"],
        ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1"],
    )
    t.kernel("conv", 30, 2, launch_ts=21)
    t.op(
        "aten::_scaled_dot_product_flash_attention",
        40,
        5,
        [[1, 2, 16, 8]] * 3 + [[], [], [], []],
        ["c10::BFloat16"] * 3 + ["Scalar", "Scalar", "Scalar", "Scalar"],
        ["", "", "", "0.", "True", "False", ""],
    )
    t.kernel("flash_fwd", 50, 4, launch_ts=41)
    t.op("aten::mm", 60, 5, [[32, 128], [128, 64]], ["c10::BFloat16"] * 2)
    t.kernel("gemm_nobias", 70, 10, launch_ts=61)
    tr = t.open(tmp_path)
    rows = {r["name"]: r for r in tr.sql("select * from op_perf").to_dicts()}
    mm = rows["aten::addmm"]
    # 2·32·64·128 + 32·64 (bias) = 526336; bytes (32·128 + 128·64 + 32·64 + 64)·2 = 28800
    assert (mm["gemm_m"], mm["gemm_n"], mm["gemm_k"], mm["gemm_b"]) == (32, 64, 128, 1)
    assert mm["flops"] == 526_336 and mm["bytes"] == 28_800 and mm["gpu_ns"] == 10_000
    assert mm["achieved_tflops_per_s"] == pytest.approx(526_336 / 10e-6 / 1e12)
    assert mm["device_model"] == "NVIDIA H100 SXM" and mm["peak_tflops_per_s"] == 989.5
    assert mm["flops_pct_of_peak"] == pytest.approx(100 * 526_336 / 10e-6 / 1e12 / 989.5)
    assert mm["roofline_bound"] == "memory"  # 18.3 FLOP/B < 989.5/3.35
    cv = rows["aten::convolution"]
    # output 8×8 (pad 1, 3×3): 2·N·64·numel(w) = 2·2·64·108; bytes (384 + 108 + 2·4·64)·4
    assert cv["flops"] == 27_648 and cv["bytes"] == (384 + 108 + 512) * 4
    at = rows["aten::_scaled_dot_product_flash_attention"]
    # 2·B·H·N·N·(d+d)·0.5 (causal) = 2·1·2·16·16·16·0.5
    assert at["causal"] and at["flops"] == 8_192 and at["bytes"] == 4 * 256 * 2
    nb = rows["aten::mm"]
    # no bias: 2·32·64·128 FLOPs; bytes (32·128 + 128·64 + 32·64)·2, no bias element
    assert nb["flops"] == 524_288 and nb["bytes"] == 28_672
    s = tr.sql("select * from op_perf_summary where name = 'aten::addmm'").to_dicts()
    assert s[0]["count"] == 1 and s[0]["flops"] == 526_336


def test_copy_moves_source_and_destination_and_a_rate_above_peak_is_flagged(tmp_path):
    t = T()
    t.op("aten::copy_", 0, 5, [[4096, 4096], [4096, 4096], []], ["c10::BFloat16", "float", "Scalar"], ["", "", "False"])
    t.kernel("copy_k", 10, 1, launch_ts=1)  # 1 µs for 100 MB: 30x an H100's 3.35 TB/s
    t.op("aten::mm", 20, 5, [[32, 128], [128, 64]], ["c10::BFloat16"] * 2)
    t.kernel("gemm", 30, 10, launch_ts=21)
    tr = t.open(tmp_path)
    rows = {r["name"]: r for r in tr.sql("select * from op_perf").to_dicts()}
    cp = rows["aten::copy_"]
    n = 4096 * 4096
    assert cp["bytes"] == n * 2 + n * 4  # reads the float source, writes the bf16 destination
    assert cp["bandwidth_pct_of_peak"] == pytest.approx(100 * n * 6 / 1e-6 / 1e12 / 3.35)
    assert cp["above_peak"] is True and rows["aten::mm"]["above_peak"] is False
    s = dict(tr.sql("select name, above_peak from op_perf_summary").rows())
    assert s == {"aten::copy_": True, "aten::mm": False}


def test_unknown_device_leaves_pct_null(tmp_path):
    t = T(device_name="Imaginary Accelerator 9000")
    t.op("aten::mm", 0, 5, [[32, 128], [128, 64]], ["float", "float"])
    t.kernel("gemm", 10, 10, launch_ts=1)
    r = one(t.open(tmp_path), "select * from op_perf")
    assert r["flops"] == 2 * 32 * 64 * 128
    assert r["device_model"] is None and r["flops_pct_of_peak"] is None and r["roofline_bound"] is None
    assert r["above_peak"] is None


def test_optimizable_ops(tmp_path):
    t = T()
    t.op("A", 0, 5)  # launches 5 kernels at 0..4 (queue depth 1..5)
    for i in range(5):
        t.kernel(f"k{i}", 10 + 10 * i, 10, launch_ts=i)
    t.op("B", 30, 40)  # while the queue drains to 0 (at 50, k4)
    t.op("C", 61, 19)  # launches k5 at 75
    t.kernel("k5", 90, 5, launch_ts=75)
    t.op("D", 85, 15)
    tr = t.open(tmp_path)
    # queue samples: L0..L4 depth 1..5, k0..k4 4,3,2,1,0, L5 1, k5 0. Read backwards, the
    # segment before k5 peaks at 1; the one before k4 peaks at 5 (L4, t=4): falling phase [4, 90].
    # Idle: from k4's end (60) to L5 (75), and from k5's end (95) to D's end (100).
    rows = {r["name"]: r for r in tr.sql("select * from optimizable_ops").to_dicts()}
    assert set(rows) == {"A", "B", "C", "D"}
    idle = {"A": 0, "B": 10, "C": 14, "D": 5}
    dur = {"A": 5, "B": 40, "C": 19, "D": 15}
    self_ = {"A": 2.5, "B": 40, "C": 18.5, "D": 15}
    for n in rows:
        assert rows[n]["idle_ns"] == idle[n] * 1000 and rows[n]["self_ns"] == self_[n] * 1000
    frac = {n: idle[n] / dur[n] for n in idle}

    def z(v):
        m, s = statistics.mean(v.values()), statistics.stdev(v.values())
        return {k: (x - m) / s for k, x in v.items()}

    zf, zs = z(frac), z(self_)
    score = {n: zf[n] + 0.6 * zs[n] for n in idle}
    for n in rows:
        assert rows[n]["score"] == pytest.approx(score[n])
    order = [r["name"] for r in tr.sql("select name from optimizable_ops order by score_rank").to_dicts()]
    assert order == sorted(score, key=lambda n: -score[n])


def test_analyze_command(tmp_path):
    import os
    import shutil
    import subprocess
    import sys

    import pyarrow.parquet as pq
    from conftest import DATA_TRACE

    exe = shutil.which("tracecols") or os.path.join(os.path.dirname(sys.executable), "tracecols")
    out = tmp_path / "a"
    r = subprocess.run([exe, "analyze", str(DATA_TRACE), "-o", str(out), "--top", "3"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    for title in ("GPU timeline", "Top kernels", "Top ops by GPU time", "Worst idle gaps", "Optimizable ops"):
        assert title in r.stdout
    assert "aten::addmm" in r.stdout
    gt = pq.read_table(out / "tracelens_gpu_timeline.parquet").to_pylist()
    assert gt[0]["type"] == "computation_time" and gt[0]["time ms"] == pytest.approx(0.307197)
    assert (out / "op_perf.parquet").exists() and (out / "_tracecols.json").exists()
    files = len(list(out.glob("*.parquet")))  # the count it says is the files it wrote
    assert f"wrote {files} tables and analyses to {out}" in r.stderr and files > 40
    # without -o only what the summary shows is computed, and it shows the same
    r2 = subprocess.run([exe, "analyze", str(DATA_TRACE), "--top", "3"], capture_output=True, text=True)
    assert r2.returncode == 0 and r2.stdout == r.stdout
    # an unknown device is reported once, on stderr, and does not fail the run
    t = T(device_name="Imaginary Accelerator 9000")
    t.op("aten::mm", 0, 5, [[32, 128], [128, 64]], ["float", "float"])
    t.kernel("gemm", 10, 10, launch_ts=1)
    t.open(tmp_path)
    r = subprocess.run([exe, "analyze", str(tmp_path / "t.json")], capture_output=True, text=True)
    assert r.returncode == 0 and r.stderr.count("Imaginary Accelerator 9000") == 1


def test_kernel_perf_gives_each_kernel_to_its_innermost_modelled_op(tmp_path):
    """aten::linear over aten::addmm: both modelled, only addmm innermost. The GEMM launched in
    addmm gets addmm's FLOPs, split with the memset launched there by duration; the copy
    launched in linear outside addmm has no innermost modelled op above it and is not listed."""
    t = T()
    bf16 = ["c10::BFloat16"] * 3
    t.op("aten::linear", 0, 30, [[32, 128], [64, 128], [64]], bf16)
    t.op("aten::addmm", 2, 10, [[64], [32, 128], [128, 64], [], []], bf16 + ["Scalar"] * 2)
    t.kernel("memset", 40, 1, launch_ts=3)
    t.kernel("gemm", 45, 3, launch_ts=5)
    t.kernel("copy", 50, 2, launch_ts=20)
    tr = t.open(tmp_path)
    inner = dict(tr.sql("select name, innermost from op_perf").rows())
    assert inner == {"aten::linear": False, "aten::addmm": True}
    rows = {r["name"]: r for r in tr.sql("select * from kernel_perf").to_dicts()}
    assert set(rows) == {"memset", "gemm"}
    flops = 2 * 32 * 64 * 128 + 32 * 64  # addmm's, bias included
    assert {r["op_name"] for r in rows.values()} == {"aten::addmm"}
    assert rows["gemm"]["share"] == pytest.approx(3 / 4) and rows["memset"]["share"] == pytest.approx(1 / 4)
    assert rows["gemm"]["kernel_flop"] + rows["memset"]["kernel_flop"] == pytest.approx(flops)


def test_tracelens_link_where_two_launch_calls_share_a_correlation(tmp_path):
    """Two launch calls with correlation 5 (threads 1 and 2), each with its flow start, and one
    kernel: kernels links it to the first launch call, TraceLens to the last one in file order,
    whose op (aten::second) its views then name."""
    ev = []
    for tid, ts, op in ((1, 0, "aten::first"), (2, 20, "aten::second")):
        ev += [
            {"ph": "X", "cat": "cpu_op", "name": op, "pid": 1, "tid": tid, "ts": ts, "dur": 10, "args": {}},
            {
                "ph": "X",
                "cat": "cuda_runtime",
                "name": "cudaLaunchKernel",
                "pid": 1,
                "tid": tid,
                "ts": ts + 1,
                "dur": 0.5,
                "args": {"correlation": 5},
            },
            {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 5, "pid": 1, "tid": tid, "ts": ts + 1},
        ]
    ev += [
        {
            "ph": "X",
            "cat": "kernel",
            "name": "k",
            "pid": 0,
            "tid": 7,
            "ts": 40,
            "dur": 5,
            "args": {"device": 0, "stream": 7, "correlation": 5},
        },
        {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": 5, "pid": 0, "tid": 7, "ts": 40, "bp": "e"},
    ]
    p = tmp_path / "t.json"
    p.write_text(json.dumps({"traceEvents": ev}))
    t = tracecols.open(p)
    q = "select s.tid, o.name from {} k join slices s on s.uid = k.launch_uid join slices o on o.uid = k.op_uid"
    assert t.sql(q.format("kernels")).rows() == [(1, "aten::first")]
    assert t.sql(q.format("_tracelens_gpu_events")).rows() == [(2, "aten::second")]
    ks = t.sql('select "Parent cpu_op" from tracelens_kernel_summary').rows()
    assert ks == [("aten::second",)]
