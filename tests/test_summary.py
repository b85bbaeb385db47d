"""`tracecols analyze`'s first screen: the headline per trace (span, steps, mean step time,
GPU busy, GPU time under no CPU op), the reader's warnings, shares that add up, and the same
summary as one JSON document. Expected values are computed here from the raw JSON."""

import contextlib
import gzip
import io
import json
from decimal import Decimal

import pytest
from conftest import CORPUS

from tracecols.cli import main

TRACES = {
    "eager, old torch (ProfilerStep as cpu_op)": CORPUS
    / "kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
    "cpu only": CORPUS / "generated/cpu_train_step.pt.trace.json.gz",
    "MTIA, with a warning": CORPUS / "HolisticTraceAnalysis/tests/data/mtia_inference_trace/mtia_inference_rank_0.json.gz",
    "inference, graph replay": CORPUS / "TraceLens/tests/traces/inference/vllm_decode_full/graph_execution.json.gz",
}


def cli(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in args])
    return rc, out.getvalue(), err.getvalue()


def _events(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as f:
        doc = json.loads(f.read(), parse_float=Decimal)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def _ns(us):
    return int(Decimal(us) * 1000)


def _expected(path):
    """span, ProfilerStep count and mean duration, straight from the events."""
    evs = [e for e in _events(path) if e.get("ph") != "M" and "ts" in e]
    start = min(_ns(e["ts"]) for e in evs)
    end = max(_ns(e["ts"]) + (_ns(e["dur"]) if "dur" in e else 0) for e in evs)
    steps = [
        e
        for e in evs
        if e.get("ph") == "X"
        and str(e.get("name", "")).startswith("ProfilerStep#")
        and e.get("cat") in ("user_annotation", "cpu_op", "Operator")
    ]  # Operator: cpu_op before torch 1.9
    return end - start, steps


@pytest.fixture(scope="module")
def summaries():
    out = {}
    for case, path in TRACES.items():
        rc, text, err = cli("analyze", path, "--format", "json")
        assert rc == 0, err
        out[case] = json.loads(text)
    return out


@pytest.mark.parametrize("case", sorted(TRACES))
def test_headline_against_the_raw_events(summaries, case):
    (h,) = summaries[case]["headline"]
    span, steps = _expected(TRACES[case])
    assert h["span_ns"] == span
    if h["step_kind"] == "ProfilerStep" or not h["steps"]:
        assert h["steps"] == len(steps)
        if steps:
            mean = sum(_ns(e["dur"]) for e in steps) / len(steps)
            assert abs(h["mean_step_ns"] - mean) <= 1
    else:  # serving annotations: one per forward pass
        assert h["step_kind"] == "serving step" and h["steps"] >= 1


@pytest.mark.parametrize("case", sorted(TRACES))
def test_shares_add_up(summaries, case):
    """The top-ops rows, with (other ops) and (no op), cover the GPU busy time; the headline's
    'under no CPU op' is the (no op) row."""
    s = summaries[case]
    (h,) = s["headline"]
    if h["gpu_span_ns"] is None:
        assert s["top_ops"] == [] and h["no_op_gpu_pct"] is None
        return
    total = sum(r["share_pct"] for r in s["top_ops"])
    assert total == pytest.approx(100.0, abs=0.01)
    no_op = [r["share_pct"] for r in s["top_ops"] if r["name"] == "(no op)"]
    assert h["no_op_gpu_pct"] == pytest.approx(no_op[0] if no_op else 0.0)
    busy = [r for r in s["gpu_timeline"] if r["device"] is None][0]
    assert h["gpu_busy_pct"] == pytest.approx(100.0 * busy["busy_ns"] / busy["total_ns"])


def test_text_summary_leads_with_the_headline_and_every_warning():
    path = TRACES["MTIA, with a warning"]
    rc, text, _ = cli("analyze", path)
    assert rc == 0
    lines = text.splitlines()
    assert lines[0].startswith("trace 0 (rank 0) · span 459.666 ms · no steps marked · GPU busy ")
    # the warning the reader counted (HTA's MTIA trace repeats correlation ids), with its count
    rc, info, _ = cli("info", path)
    warned = [ln.strip() for ln in info.splitlines() if "repeat a correlation id" in ln]
    assert (
        warned
        and lines[1]
        == "  warning: 62 launch event(s) repeat a correlation id of an earlier launch "
        "in the same process (62 id(s)): kernels link to the first"
    )


def test_quiet_prints_nothing_on_stderr(tmp_path):
    path = TRACES["MTIA, with a warning"]  # its device is not in the peak table: a note without -q
    rc, _, err = cli("analyze", path, "-o", tmp_path / "a")
    assert rc == 0 and "note: device 'ARTEMIS'" in err and "wrote" in err
    rc, text, err = cli("analyze", path, "-o", tmp_path / "b", "-q")
    assert rc == 0 and err == "" and text.startswith("trace 0")
