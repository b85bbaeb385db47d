"""cupti_counters / cupti_kernel_flops: CUPTI range-profiler counters joined to the launching ops.

Checked against HTA's own counter analysis on the corpus's range-profiler trace, and on
hand-built traces for the pairing rule and the FLOP weights.
"""

import shutil

import pytest
from conftest import CORPUS, open_events

import tracecols

CUPTI = CORPUS / "HolisticTraceAnalysis/tests/data/cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz"
SASS = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum"


def _op(name, ts, dur, tid=1):
    return {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur}


def _launch(ts, corr):
    return {
        "ph": "X",
        "cat": "cuda_runtime",
        "name": "cudaLaunchKernel",
        "pid": 1,
        "tid": 1,
        "ts": ts,
        "dur": 1,
        "args": {"correlation": corr},
    }


def _range(name, ts, counters):
    return {"ph": "X", "cat": "cuda_profiler_range", "name": name, "pid": 0, "tid": 0, "ts": ts, "dur": 5, "args": counters}


def test_ranges_pair_with_launches_in_order_and_flops_weigh_fma_twice(tmp_path):
    t = open_events(
        tmp_path,
        [
            _op("aten::linear", 0, 25),
            _op("aten::addmm", 1, 20),
            _launch(2, 7),
            _op("aten::relu", 30, 10),
            _launch(31, 8),
            _range(
                "gemm",
                100,
                {
                    SASS.format("ffma"): 10,
                    SASS.format("fadd"): 3,
                    SASS.format("hfma"): 1,
                    SASS.format("dmul"): 4,
                    "dram__bytes_read.sum": 640,
                },
            ),
            _range("relu_k", 200, {SASS.format("fmul"): 5}),
        ],
    )
    rows = t.sql(
        "select kernel_name, op_name, top_op_name, counter, value, paired from cupti_counters order by ts_ns, counter"
    ).to_dicts()
    assert [(r["kernel_name"], r["op_name"], r["top_op_name"]) for r in rows] == [("gemm", "aten::addmm", "aten::linear")] * 5 + [
        ("relu_k", "aten::relu", "aten::relu")
    ]
    assert {r["counter"]: r["value"] for r in rows if r["kernel_name"] == "gemm"}["dram__bytes_read.sum"] == 640
    assert all(r["paired"] for r in rows)
    flops = {r["kernel_name"]: r for r in t.sql("select * from cupti_kernel_flops").to_dicts()}
    assert (flops["gemm"]["flops_fp32"], flops["gemm"]["flops_fp16"], flops["gemm"]["flops_fp64"]) == (23, 2, 4)
    assert flops["gemm"]["flops"] == 29 and flops["relu_k"]["flops"] == 5


def test_unequal_counts_leave_the_ops_unpaired(tmp_path):
    t = open_events(
        tmp_path, [_op("aten::relu", 0, 10), _launch(1, 7), _launch(3, 8), _range("k", 100, {SASS.format("fadd"): 1})]
    )
    rows = t.sql("select paired, launch_uid, op_name from cupti_counters").to_dicts()
    assert rows == [{"paired": False, "launch_uid": None, "op_name": None}]


def test_counters_and_ops_agree_with_hta(tmp_path):
    from hta.trace_analysis import TraceAnalysis

    shutil.copy(CUPTI, tmp_path / CUPTI.name)
    hta = TraceAnalysis(trace_dir=str(tmp_path)).get_cupti_counter_data_with_operators(ranks=[0])[0]
    hta = hta.sort_values("ts").reset_index(drop=True)
    counters = [c for c in hta.columns if c.startswith("smsp__")]
    assert len(hta) == 77 and len(counters) == 9

    ours = tracecols.open(CUPTI).sql("select * from cupti_counters order by ts_ns, uid").to_dicts()
    kernels = {}
    for r in ours:
        kernels.setdefault(r["uid"], {"name": r["kernel_name"], "top": r["top_op_name"], "bottom": r["op_name"]})[
            r["counter"]
        ] = r["value"]
    got = list(kernels.values())
    assert len(got) == len(hta)
    for g, (_, h) in zip(got, hta.iterrows()):
        assert (g["name"], g["top"], g["bottom"]) == (h["name"], h["top_level_op"], h["bottom_level_op"])
        assert {c: g[c] for c in counters} == pytest.approx({c: float(h[c]) for c in counters})
