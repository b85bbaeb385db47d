"""inference_steps: serving iterations by their annotations, on a hand-built trace (answers by
hand, times in µs) and on the two shared serving traces (against a plain time-containment walk)."""

import gzip
import json
from decimal import Decimal

import pytest
from conftest import CORPUS
from test_analyses_cases import T


def _ann(t, name, ts, dur):
    t.ev.append({"ph": "X", "cat": "user_annotation", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": {}})


def test_phases_and_gpu_time_by_hand(tmp_path):
    t = T()
    _ann(t, "execute_512_context_2(sq256sk256)_generation_0(sq0sk0)", 0, 100)  # prefill
    t.kernel("k1", ts=10, dur=20, launch_ts=5)
    t.kernel("k2", ts=25, dur=20, launch_ts=6)  # overlaps k1 on another stream
    t.ev[-2]["args"]["stream"] = t.ev[-2]["tid"] = 8
    _ann(t, "execute_34_context_1(sq2sk2)_generation_32(sq32sk99)", 200, 50)  # mixed
    t.kernel("k3", ts=210, dur=5, launch_ts=201)
    _ann(t, "step[DECODE bs=16]", 300, 50)  # SGLang decode
    _ann(t, "execute_16_context_0(sq0sk0)_generation_16(sq16sk9)", 301, 40)  # inside it: not a step
    t.kernel("k4", ts=320, dur=4, launch_ts=302)
    _ann(t, "step[EXTEND bs=3]", 400, 10)  # SGLang prefill, no GPU
    _ann(t, "ProfilerStep#7", 0, 500)  # ignored: the trace has serving annotations
    tr = t.open(tmp_path)
    rows = tr.sql("select * from inference_steps").to_dicts()
    got = [
        (
            r["step"],
            r["phase"],
            r["phase_step"],
            r["tokens"],
            r["prefill_requests"],
            r["decode_requests"],
            r["kernels"],
            r["gpu_busy_ns"],
            r["gpu_kernel_sum_ns"],
        )
        for r in rows
    ]
    assert got == [
        (0, "prefill", 0, 512, 2, 0, 2, 35_000, 40_000),  # union of [10,30) and [25,45)
        (1, "mixed", 0, 34, 1, 32, 1, 5_000, 5_000),
        (2, "decode", 0, None, None, 16, 1, 4_000, 4_000),
        (3, "prefill", 1, None, None, None, 0, 0, 0),
    ]


def test_profiler_steps_when_nothing_else(tmp_path):
    t = T()
    _ann(t, "ProfilerStep#3", 0, 100)
    t.kernel("k1", ts=10, dur=20, launch_ts=5)
    _ann(t, "ProfilerStep#4", 100, 100)
    r = t.open(tmp_path).sql("select phase, kernels, gpu_busy_ns from inference_steps order by step").rows()
    assert r == [("unknown", 1, 20_000), ("unknown", 0, 0)]


SERVING = [
    "TraceLens/tests/traces/inference/vllm_decode_full/graph_execution.json.gz",
    "TraceLens/tests/traces/inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz",
]


@pytest.mark.corpus
@pytest.mark.parametrize("rel", SERVING)
def test_serving_traces_against_a_plain_walk(rel):
    import tracecols

    path = CORPUS / rel
    with gzip.open(path) as f:
        ev = json.load(f, parse_float=Decimal)["traceEvents"]  # exact ns
    ann = [e for e in ev if e.get("cat") == "user_annotation" and e["name"].startswith(("execute_", "step["))]
    outer = [
        a
        for a in ann
        if not any(
            b is not a and b["tid"] == a["tid"] and b["ts"] <= a["ts"] and a["ts"] + a["dur"] <= b["ts"] + b["dur"] for b in ann
        )
    ]
    launches = {e["args"]["correlation"]: e for e in ev if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})}
    want = []
    for a in sorted(outer, key=lambda a: a["ts"]):
        iv = []
        for k in ev:
            if k.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
                lc = launches.get(k["args"].get("correlation"))
                if lc and lc["tid"] == a["tid"] and a["ts"] <= lc["ts"] and lc["ts"] + lc["dur"] <= a["ts"] + a["dur"]:
                    iv.append((int(k["ts"] * 1000), int((k["ts"] + k["dur"]) * 1000)))
        busy, end = 0, None
        for b, e in sorted(iv):
            if end is None or b > end:
                busy += e - b
                end = e
            elif e > end:
                busy += e - end
                end = e
        want.append((len(iv), busy))
    got = tracecols.open(path).sql("select kernels, gpu_busy_ns, phase from inference_steps order by step").rows()
    assert [g[:2] for g in got] == want
    assert {g[2] for g in got} == {"decode"}
    assert sum(w[0] for w in want) > 400
