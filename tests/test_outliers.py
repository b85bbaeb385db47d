"""Outlying events (far from the bulk of their trace's events, model/traces.py): one device
event at ts 0 in a real trace is warned about and left out of the span and the GPU busy time;
no trace of the corpus has one."""

import gzip
import json
from decimal import Decimal

import polars as pl
import pytest
from conftest import DATA_TRACE
from corpus_files import all_files, rel

import tracecols
from tracecols.cli import main
from tracecols.errors import TraceError
from tracecols.model.traces import time_span
from tracecols.pipeline import parse

FAR = "event(s) lie far outside the rest of the trace"


def _doc():
    return json.loads(gzip.decompress(DATA_TRACE.read_bytes()), parse_float=Decimal)


def _with_kernel_at_zero(tmp_path):
    """The small real trace with a copy of its first kernel at ts 0 put first in traceEvents."""
    text = gzip.decompress(DATA_TRACE.read_bytes()).decode()
    kernel = next(e for e in json.loads(text)["traceEvents"] if e.get("cat") == "kernel")
    kernel.update(ts=0, args={"device": 0, "stream": 7})  # no correlation: it links to nothing
    head = '"traceEvents": ['
    assert text.count(head) == 1
    p = tmp_path / "zero.json"
    p.write_text(text.replace(head, head + json.dumps(kernel) + ", "))
    return p


def _plain_span_ns(doc):
    """First start to last end over the timed events but metadata, from the JSON text."""
    timed = [e for e in doc["traceEvents"] if e.get("ph") not in (None, "M") and "ts" in e]
    start = min(e["ts"] for e in timed)
    end = max(e["ts"] + max(e.get("dur", 0), 0) for e in timed)
    return int((end - start) * 1000)


def test_a_device_event_at_ts_0_is_warned_about_and_left_out_of_the_headline(tmp_path):
    p = _with_kernel_at_zero(tmp_path)
    got = tracecols.open(p).sql("select span_ns, gpu_span_ns, gpu_busy_pct, warnings from headline").row(0, named=True)
    plain = tracecols.open(DATA_TRACE).sql("select span_ns, gpu_span_ns, gpu_busy_pct, warnings from headline").row(0, named=True)
    assert not any(FAR in w for w in plain["warnings"])
    far = [w for w in got["warnings"] if FAR in w]
    assert far == [
        "1 event(s) lie far outside the rest of the trace (the farthest 1,419,247 s before it; the others span "
        "0.00839 s): a broken timestamp? Left out of traces.span_ns, gpu_timeline and the headline, which cover the others"
    ]
    assert got["span_ns"] == plain["span_ns"] == _plain_span_ns(_doc())
    assert got["gpu_span_ns"] == plain["gpu_span_ns"]
    assert got["gpu_busy_pct"] == pytest.approx(plain["gpu_busy_pct"], abs=1e-9) and plain["gpu_busy_pct"] > 1


def test_the_warning_is_on_the_first_screen_of_analyze(tmp_path, capsys):
    assert main(["analyze", str(DATA_TRACE), "-q"]) == 0
    plain = capsys.readouterr().out.splitlines()
    assert main(["analyze", str(_with_kernel_at_zero(tmp_path)), "-q"]) == 0
    got = capsys.readouterr().out.splitlines()
    assert got[0] == plain[0] and "GPU busy 7.9% of 3.908 ms" in got[0]  # span, steps, GPU busy as without it
    assert got[1].startswith("  warning: 1 event(s) lie far outside the rest of the trace (the farthest 1,419,247 s before")
    # nor does the worst idle gap become the 16 days before the planted event
    assert not any("1419247" in line or "1,419,247" in line for line in got[2:])


def _events(path):
    ev, _ = parse.read_events_into([str(path)], 0, False, 1)
    return pl.from_arrow(ev).lazy()


@pytest.mark.corpus
def test_no_corpus_trace_has_an_outlying_event():
    checked = 0
    for p in all_files():
        try:
            ev = _events(p)
        except TraceError:
            continue  # Execution Traces and capture lists
        start, end, warnings = time_span(ev)
        assert warnings == [], rel(p)
        span = ev.filter(pl.col("ph") != "M").select(pl.col("ts_ns").min()).collect().item()
        assert start == span, rel(p)
        checked += 1
    assert checked >= 50


def _timed(n, first_ns, step_ns):
    return [
        {"ph": "X", "cat": "cpu_op", "name": f"op{i}", "pid": 1, "tid": 1, "ts": (first_ns + i * step_ns) / 1000, "dur": 1}
        for i in range(n)
    ]


def test_the_rule_needs_100_bulk_lengths_and_1_s(tmp_path):
    from conftest import open_events

    bulk = _timed(20, 1_000_000_000_000, 500_000)  # 20 events over 9.5 ms
    # 0.95 s after the bulk: 100 bulk lengths, but under 1 s
    near = open_events(tmp_path, bulk + _timed(1, 1_000_000_000_000 + 9_500_000 + 950_000_000, 1))
    assert near.sql("select warnings from traces").item().to_list() == []
    (tmp_path / "t.json").unlink()
    far = open_events(tmp_path, bulk + _timed(1, 1_000_000_000_000 + 9_500_000 + 2_000_000_000, 1))
    t = far.sql("select span_ns, warnings from traces").row(0, named=True)
    assert t["span_ns"] == 9_500_000 + 1000  # the bulk, its last event 1 µs long
    assert t["warnings"] == [
        "1 event(s) lie far outside the rest of the trace (the farthest 2 s after it; the others span 0.0095 s): "
        "a broken timestamp? Left out of traces.span_ns, gpu_timeline and the headline, which cover the others"
    ]
