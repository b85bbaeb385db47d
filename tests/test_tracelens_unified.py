"""tracelens_unified_perf_summary: a hand-built trace worked out by hand (every rule of TraceLens's
walk), and TraceLens's own unified_perf_summary.csv for every shipped reference."""

import ast
import csv
import math

import pytest
from conftest import CORPUS, open_events

import tracecols

US = 1000  # ns per µs
BF16 = "c10::BFloat16"


class Trace:
    """Host pid 1 tid 1, device 0 (pid 0, tid = stream); times in µs; kernels linked by an ac2g
    flow pair, as Kineto writes them."""

    def __init__(self):
        self.ev = [
            {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python"}},
            {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}},
        ]
        self.corr = 0

    def host(self, cat, name, ts, dur, dims=None, types=None):
        args = (
            {}
            if dims is None
            else {
                "Input Dims": dims,
                "Input type": types,
                "Input Strides": [[1] * len(d) for d in dims],
                "Concrete Inputs": [""] * len(dims),
            }
        )
        self.ev.append({"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": args})

    def launch(self, ts, name, start, dur, stream=7):
        """A cudaLaunchKernel at ts (1 µs) and the kernel it launched."""
        self.corr += 1
        self.ev.append(
            {
                "ph": "X",
                "cat": "cuda_runtime",
                "name": "cudaLaunchKernel",
                "pid": 1,
                "tid": 1,
                "ts": ts,
                "dur": 1,
                "args": {"correlation": self.corr},
            }
        )
        self.ev.append({"ph": "s", "cat": "ac2g", "name": "ac2g", "id": self.corr, "pid": 1, "tid": 1, "ts": ts})
        self.ev.append(
            {
                "ph": "X",
                "cat": "kernel",
                "name": name,
                "pid": 0,
                "tid": stream,
                "ts": start,
                "dur": dur,
                "args": {"device": 0, "stream": stream, "correlation": self.corr},
            }
        )
        self.ev.append(
            {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": self.corr, "pid": 0, "tid": stream, "ts": start, "bp": "e"}
        )


MSE_K = "void at::native::vectorized_elementwise_kernel<4, mse>"


@pytest.fixture
def walk(tmp_path):
    """step (annotation) over:
    layer_norm 30 > native_layer_norm > ln_k 10           rule 1 at the outer op (both modelled)
    linear 30 > addmm 26 > gemm 10                        rule 4 (linear), rule 1 (addmm)
    mse_loss 35: launches mse_k 4 itself, mean 20 > red_k 5   rule 3: a synthetic op, then mean
    cat 15: cat_a [150, 152), cat_b [151, 155), twice     rule 2, busy time 5 (not 6)
    to 15 > _to_copy > copy_ > copy_k 3                    rule 4 twice, then rule 1
    record_param_comms 10 > ncclKernel 8                  rule 2, left out (NCCL)
    a launch call right under the annotation > py_k 2     a synthetic op of the launch call."""
    t = Trace()
    t.host("user_annotation", "step", 0, 300)
    t.host(
        "cpu_op", "aten::layer_norm", 10, 30, [[4, 8], [], [8], [8], [], []], [BF16, "ScalarList", BF16, BF16, "Scalar", "Scalar"]
    )
    t.host("cpu_op", "aten::native_layer_norm", 12, 26, [[4, 8], [], [8], [8], []], [BF16, "ScalarList", BF16, BF16, "Scalar"])
    t.launch(13, "ln_k", 100, 10)
    t.host("cpu_op", "aten::linear", 50, 30, [[32, 128], [64, 128], [64]], [BF16] * 3)
    t.host("cpu_op", "aten::addmm", 52, 26, [[64], [32, 128], [128, 64], [], []], [BF16] * 3 + ["Scalar"] * 2)
    t.launch(53, "gemm", 120, 10)
    t.host("cpu_op", "aten::mse_loss", 85, 35, [[4, 8], [4, 8], []], [BF16, BF16, "Scalar"])
    t.launch(86, MSE_K, 135, 4)
    t.host("cpu_op", "aten::mean", 95, 20, [[4, 8], [], [], []], [BF16, "ScalarList", "Scalar", ""])
    t.launch(96, "red_k", 140, 5)
    for ts, start in ((125, 150), (170, 175)):
        t.host("cpu_op", "aten::cat", ts, 15, [[4], [4]], [BF16, BF16])
        t.launch(ts + 1, "cat_a", start, 2)
        t.launch(ts + 2, "cat_b", start + 1, 4, stream=8)
    t.host("cpu_op", "aten::to", 190, 15, [[4, 8], []], [BF16, "Scalar"])
    t.host("cpu_op", "aten::_to_copy", 191, 13, [[4, 8], []], [BF16, "Scalar"])
    t.host("cpu_op", "aten::copy_", 192, 11, [[4, 8], [4, 8], []], ["float", BF16, "Scalar"])
    t.launch(193, "copy_k", 200, 3)
    t.host("cpu_op", "record_param_comms", 210, 10)
    t.launch(211, "ncclKernel_AllReduce", 215, 8, stream=9)
    t.launch(230, "py_k", 240, 2)
    return open_events(tmp_path, t.ev)


def test_walk_by_hand(walk):
    rows = walk.sql("select * from tracelens_unified_perf_summary").to_dicts()
    got = {r["name"]: r for r in rows}
    assert len(got) == len(rows)
    # name: (count, kernel time sum µs, duration sum µs, has_perf_model, op category)
    want = {
        "aten::layer_norm": (1, 10, 30, True, "NORM_fwd"),
        "aten::addmm": (1, 10, 26, True, "GEMM"),
        f"aten::mse_loss->{MSE_K} (Synthetic Op)": (1, 4, 35, False, "elementwise"),
        "aten::mean": (1, 5, 20, True, "reduce"),
        "aten::cat": (2, 10, 30, False, "other"),
        "aten::copy_": (1, 3, 11, True, "elementwise"),
        "cudaLaunchKernel->py_k (Synthetic Op)": (1, 2, 1, False, "other"),
    }
    assert {
        n: (r["operation_count"], r["Kernel Time (µs)_sum"], r["total_duration_us"], r["has_perf_model"], r["op category"])
        for n, r in got.items()
    } == want
    # the synthetic op of an op has that op's arguments; one of a launch call has none
    assert got[f"aten::mse_loss->{MSE_K} (Synthetic Op)"]["Input Dims"] == "((4, 8), (4, 8), ())"
    assert got["cudaLaunchKernel->py_k (Synthetic Op)"]["Input Dims"] is None
    assert got["aten::addmm"]["Input type"] == "('c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16', 'Scalar', 'Scalar')"
    assert (got["aten::cat"]["process_name"], got["aten::cat"]["process_label"], got["aten::cat"]["thread_name"]) == (
        "python",
        "Unknown",
        "main",
    )
    cat = got["aten::cat"]
    assert (cat["Kernel Time (µs)_mean"], cat["Kernel Time (µs)_median"], cat["Kernel Time (µs)_std"]) == (5, 5, 0)
    assert got["aten::addmm"]["std_duration_us"] is None  # one instance
    # sorted by kernel time; percentages of the 44 µs in all rows
    assert [r["Kernel Time (µs)_sum"] for r in rows] == sorted((r["Kernel Time (µs)_sum"] for r in rows), reverse=True)
    assert got["aten::cat"]["Percentage (%)"] == pytest.approx(100 * 10 / 44)
    assert rows[-1]["Cumulative Percentage (%)"] == pytest.approx(100)
    # the GEMM's roofline columns: 2·32·64·128 + 32·64 (bias) FLOPs, (32·128 + 128·64 + 32·64 + 64)·2 bytes, in 10 µs
    mm = got["aten::addmm"]
    flops, nbytes = 2 * 32 * 64 * 128 + 32 * 64, (32 * 128 + 128 * 64 + 32 * 64 + 64) * 2
    assert mm["GFLOPS"] == pytest.approx(flops / 1e9) and mm["Data Moved (MB)"] == pytest.approx(nbytes / 2**20)
    assert mm["TFLOPS/s_mean"] == pytest.approx(flops / 10e-6 / 1e12)
    assert mm["TB/s_max"] == pytest.approx(nbytes / 10e-6 / 1e12)
    assert mm["Compute Spec"] == "matrix_bf16" and mm["FLOPS/Byte"] == pytest.approx(flops / nbytes)
    assert got["aten::cat"]["GFLOPS"] is None  # no perf model here


# --- TraceLens's own unified_perf_summary.csv

REFS = sorted(CORPUS.glob("TraceLens/**/unified_perf_summary.csv")) if CORPUS.is_dir() else []
INFERENCE = {"vllm_decode_full": "graph_execution.json.gz", "sglang_decode": "sglang_Qwen3-8B_decode.json.gz"}
ARGS = ("Input Dims", "Input type", "Input Strides", "Concrete Inputs")
# the inference report's pseudo ops for the kernels vllm::moe_forward launches itself: here
# they are that op's synthetic ops (docs/analyses.md); same instances, same GPU time
PSEUDO = {
    "pseudo_op::moe_triton_unfused_up": "vllm::moe_forward->_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu",
    "pseudo_op::moe_triton_unfused_down": "vllm::moe_forward->_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1",
    "pseudo_op::moe_triton_unfused_finalize_matmul_scatter": "vllm::moe_forward->_finalize_matmul_scatter_bf16",
}
# op_perf's FLOPs and bytes equal TraceLens's for these names (docs/analyses.md); for the
# other modelled op classes they differ, as documented there
AGREE = {
    "aten::mm",
    "aten::addmm",
    "aten::bmm",
    "aten::baddbmm",
    "aten::convolution",
    "aten::_scaled_dot_product_flash_attention",
    "aten::_scaled_dot_product_efficient_attention",
}
STATS = ("mean", "median", "min", "max")


def _args(text):
    return None if text in (None, "") else ast.literal_eval(text)


def _trace(ref):
    case = ref.parent.parent.name
    if case in INFERENCE:
        return tracecols.open(ref.parent.parent / INFERENCE[case], capture=ref.parent.parent / "capture_traces")
    return tracecols.open(str(ref.parent).removesuffix("_perf_report_csvs") + ".json.gz")


def _close(want, got, rel=1e-3, abs_=0.01):
    # 0.1 % relative, plus TraceLens's float-µs rounding (~1e-3 µs per interval edge)
    return math.isclose(float(want), got, rel_tol=rel, abs_tol=abs_)


@pytest.mark.corpus
def test_unified_references_present():
    assert len(REFS) == 9


@pytest.mark.corpus
@pytest.mark.parametrize(
    "ref",
    REFS,
    ids=lambda p: p.parent.name.removesuffix("_perf_report_csvs") if p.parent.name != "perf_csvs" else p.parent.parent.name,
)
def test_unified_perf_summary_matches_csv(ref):
    with open(ref, newline="") as f:
        want_rows = list(csv.DictReader(f))
    for w in want_rows:
        if w["name"] in PSEUDO:
            w["name"] = PSEUDO[w["name"]] + " (Synthetic Op)"
            w["op category"], w["has_perf_model"] = "other", "False"

    def key(r):
        # the inference reports name no process or thread ('Unknown'): their traces carry none either
        return (
            r["name"],
            r["op category"],
            r["process_name"],
            r["process_label"],
            r["thread_name"],
            *(_args(r[a]) for a in ARGS),
        )

    got_rows = _trace(ref).sql("select * from tracelens_unified_perf_summary").to_dicts()
    got = {key(r): r for r in got_rows}
    want = {key(r): r for r in want_rows}
    assert len(got) == len(got_rows) and len(want) == len(want_rows)
    assert set(got) == set(want)
    for k, w in want.items():
        g, n = got[k], int(w["operation_count"])
        assert g["operation_count"] == n, k[0]
        assert g["has_perf_model"] == (w["has_perf_model"] == "True"), k[0]
        col = "Kernel Time (µs)_sum"
        assert _close(w[col], g[col], abs_=0.01 * n), (k[0], col, w[col], g[col])
        for s in STATS:
            col = f"Kernel Time (µs)_{s}"
            assert _close(w[col], g[col]), (k[0], col, w[col], g[col])
        if w["Kernel Time (µs)_std"] == "":
            assert g["Kernel Time (µs)_std"] is None, k[0]
        else:
            assert _close(w["Kernel Time (µs)_std"], g["Kernel Time (µs)_std"]), k[0]
        for col in ("Percentage (%)", "Cumulative Percentage (%)"):
            assert _close(w[col], g[col]), (k[0], col, w[col], g[col])
        if w["mean_duration_us"] != "":  # a pseudo op has no duration in TraceLens
            assert _close(w["total_duration_us"], g["total_duration_us"], abs_=0.01 * n), k[0]
            for col in ("mean_duration_us", "duration_us_median", "duration_us_min", "duration_us_max"):
                assert _close(w[col], g[col]), (k[0], col, w[col], g[col])
        if k[0] in AGREE:
            assert g["Compute Spec"] == w["Compute Spec"], k[0]
            for col in ("GFLOPS", "Data Moved (MB)", "FLOPS/Byte"):
                assert _close(w[col], g[col], rel=1e-6, abs_=0), (k[0], col, w[col], g[col])
            for m in ("TB/s", "TFLOPS/s"):
                for s in STATS:
                    col = f"{m}_{s}"
                    assert _close(w[col], g[col]), (k[0], col, w[col], g[col])
                if w[f"{m}_std"] != "":
                    assert _close(w[f"{m}_std"], g[f"{m}_std"], abs_=1e-3 * float(w[f"{m}_mean"])), k[0]
        # copy_ bytes: source + destination (FLOPs: TraceLens 1 per element, op_perf none); TraceLens
        # has no bytes for a bool destination
        if k[0] == "aten::copy_" and w["Data Moved (MB)"] != "":
            assert _close(w["Data Moved (MB)"], g["Data Moved (MB)"], rel=1e-6, abs_=0), (k[0], w["Data Moved (MB)"])
            for s in STATS:
                assert _close(w[f"TB/s_{s}"], g[f"TB/s_{s}"]), (k[0], s)


@pytest.mark.corpus
def test_the_agreeing_op_classes_are_in_the_references():
    """The roofline columns above are checked on the GEMM, convolution and attention rows of
    the references: there are enough of them for that to mean something."""
    names = []
    for ref in REFS:
        with open(ref, newline="") as f:
            names += [r["name"] for r in csv.DictReader(f) if r["name"] in AGREE]
    assert len(names) >= 50 and {
        "aten::mm",
        "aten::addmm",
        "aten::bmm",
        "aten::convolution",
        "aten::_scaled_dot_product_flash_attention",
    } <= set(names)
