"""Which device model (and so which datasheet peak) each device of a trace gets (_device_models).

ROCm traces list device 0 alone in deviceProperties, or ids 0..7, while their kernels carry
device 2 or 9. A trace whose deviceProperties name exactly one device type gets that type for
its unlisted devices, and says so (`device_model_source`, `tracecols info`); a trace with two
types gets no assumption. The expected numbers are worked out by hand, and on the corpus from
TraceLens's own GEMM.csv and the MI300X datasheet.
"""

import contextlib
import csv
import io
import json

import pytest
from conftest import CORPUS

import tracecols
from tracecols.cli import main

MI300X = "AMD Instinct MI300X"
MI210 = "AMD Instinct MI210"
MI300X_BF16_TFLOPS = 1307.4  # dense BF16 matrix peak, AMD Instinct MI300X datasheet
ASSUMED = "assumed: only device type in the trace"


def _trace(tmp_path, listed, kernel_device):
    """aten::mm of bf16 [1024, 1024] x [1024, 1024] on the host, its one kernel [100, 110) µs on
    `kernel_device`; deviceProperties lists `listed`: [(id, name)]."""
    dims, types = [[1024, 1024], [1024, 1024]], ["c10::BFloat16", "c10::BFloat16"]
    ev = [
        {
            "ph": "X",
            "cat": "cpu_op",
            "name": "aten::mm",
            "pid": 1,
            "tid": 1,
            "ts": 0,
            "dur": 50,
            "args": {"Input Dims": dims, "Input type": types, "Concrete Inputs": ["", ""]},
        },
        {
            "ph": "X",
            "cat": "cuda_runtime",
            "name": "hipLaunchKernel",
            "pid": 1,
            "tid": 1,
            "ts": 5,
            "dur": 2,
            "args": {"correlation": 1},
        },
        {
            "ph": "X",
            "cat": "kernel",
            "name": "Cijk_Alik_Bljk_BBS_BH",
            "pid": kernel_device,
            "tid": 3,
            "ts": 100,
            "dur": 10,
            "args": {"device": kernel_device, "stream": 3, "correlation": 1},
        },
    ]
    p = tmp_path / "t.json"
    p.write_text(
        json.dumps({"schemaVersion": 1, "traceEvents": ev, "deviceProperties": [{"id": i, "name": n} for i, n in listed]})
    )
    return p


def _info(path):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(["info", str(path)]) == 0
    return out.getvalue()


# 2·M·N·K FLOPs in 10 µs, against the datasheet peak
FLOPS = 2.0 * 1024**3
TFLOPS = FLOPS / 10e-6 / 1e12
PCT = 100.0 * TFLOPS / MI300X_BF16_TFLOPS


def test_an_unlisted_device_takes_the_only_device_type(tmp_path):
    path = _trace(tmp_path, [(0, MI300X)], kernel_device=2)
    t = tracecols.open(path)
    r = t.sql("select * from op_perf").to_dicts()
    assert len(r) == 1
    r = r[0]
    assert (r["device"], r["device_model"], r["device_model_source"]) == (2, MI300X, ASSUMED)
    assert r["flops"] == FLOPS and r["gpu_ns"] == 10_000
    assert r["achieved_tflops_per_s"] == pytest.approx(TFLOPS)
    assert r["peak_tflops_per_s"] == MI300X_BF16_TFLOPS
    assert r["flops_pct_of_peak"] == pytest.approx(PCT)
    k = t.sql("select device, device_model, device_model_source, peak_tflops_per_s from kernel_perf").rows()
    assert k == [(2, MI300X, ASSUMED, MI300X_BF16_TFLOPS)]
    assert t.unknown_devices() == []
    assert t.assumed_devices() == [(0, 2, MI300X)]
    assert (f"assumed      device 2 (ran work, not in deviceProperties) taken as {MI300X}: the only device type listed") in _info(
        path
    )


def test_several_listed_devices_of_one_type(tmp_path):
    # ids 0..3 all MI300X, the kernel on device 5: still one type
    t = tracecols.open(_trace(tmp_path, [(i, MI300X) for i in range(4)], kernel_device=5))
    assert t.sql("select device_model_source, flops_pct_of_peak from op_perf").row(0) == (ASSUMED, pytest.approx(PCT))


def test_a_listed_device_says_listed(tmp_path):
    path = _trace(tmp_path, [(0, MI300X), (2, MI300X)], kernel_device=2)
    t = tracecols.open(path)
    assert t.sql("select device_model, device_model_source from op_perf").row(0) == (MI300X, "listed")
    assert t.assumed_devices() == []
    assert "assumed " not in _info(path)


def test_two_device_types_make_no_assumption(tmp_path):
    path = _trace(tmp_path, [(0, MI300X), (1, MI210)], kernel_device=2)
    t = tracecols.open(path)
    r = t.sql("select device, device_model, device_model_source, peak_tflops_per_s, flops_pct_of_peak from op_perf").row(0)
    assert r == (2, None, None, None, None)
    assert t.unknown_devices() == ["(no name)"]
    assert t.assumed_devices() == []
    assert "assumed " not in _info(path)
    # the listed devices keep their own names
    assert t.sql("select device, name, name_source from _device_models where not ran_work order by device").rows() == [
        (0, MI300X, "listed"),
        (1, MI210, "listed"),
    ]


def test_no_name_listed_makes_no_assumption(tmp_path):
    t = tracecols.open(_trace(tmp_path, [(0, ""), (1, "")], kernel_device=2))
    assert t.sql("select device_model, flops_pct_of_peak from op_perf").row(0) == (None, None)
    assert t.assumed_devices() == []


# ---------------------------------------------------------------------------------------------
# The corpus's AMD traces

TRITON = CORPUS / "TraceLens/tests/traces/torch_compile_triton/trace.json.gz"
AMD_WITH_GEMMS = [
    TRITON,
    CORPUS / "TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz",
    CORPUS / "TraceLens/tests/traces/mi300/ddp_resnet18_no_pool/train_resnet18.json.gz",
]


@pytest.mark.corpus
@pytest.mark.parametrize("path", AMD_WITH_GEMMS, ids=lambda p: p.name)
def test_every_gemm_of_an_mi300x_trace_has_its_peak(path):
    t = tracecols.open(path)
    g = t.sql(
        "select count(*) as n, count(flops_pct_of_peak) as pct, count(*) filter (where device_model = "
        f"'{MI300X}') as model from op_perf where category = 'gemm' and kernels > 0"
    ).row(0, named=True)
    assert g["n"] > 0 and g["pct"] == g["n"] and g["model"] == g["n"]


@pytest.mark.corpus
def test_mi300x_gemm_percent_of_peak_against_tracelens():
    """torch_compile_triton lists device 0 only and runs on device 2: every GEMM is an assumed
    MI300X. TraceLens's GEMM.csv gives the achieved TFLOP/s per (M, N, K); over the datasheet
    peak that is the % of peak the rows must show."""
    t = tracecols.open(TRITON)
    assert t.sql("select distinct device from kernels").rows() == [(2,)]
    assert t.sql("select device from devices").rows() == [(0,)]
    ours = t.sql(
        "select gemm_m, gemm_n, gemm_k, avg(flops_pct_of_peak) as pct, "
        "list(distinct device_model_source) as src from op_perf where category = 'gemm' "
        "group by all"
    ).to_dicts()
    with open(TRITON.parent / "trace_perf_report_csvs" / "GEMM.csv", newline="") as f:
        ref = {(int(r["param: M"]), int(r["param: N"]), int(r["param: K"])): float(r["TFLOPS/s_mean"]) for r in csv.DictReader(f)}
    assert len(ours) == len(ref) == 3
    for r in ours:
        assert r["src"] == [ASSUMED]
        expect = 100.0 * ref[(r["gemm_m"], r["gemm_n"], r["gemm_k"])] / MI300X_BF16_TFLOPS
        assert r["pct"] == pytest.approx(expect, rel=1e-3), r


@pytest.mark.corpus
def test_sglang_trace_lists_device_0_and_runs_on_9():
    t = tracecols.open(CORPUS / "TraceLens/tests/traces/inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz")
    assert t.assumed_devices() == [(0, 9, MI300X)]
    src = t.sql("select distinct device_model, device_model_source from op_perf where kernels > 0").rows()
    assert src == [(MI300X, ASSUMED)]
