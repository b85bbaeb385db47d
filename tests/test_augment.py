"""`tracecols augment`: kernel_flop / kernel_num_gb added, every other byte unchanged."""

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from decimal import Decimal

import pytest
from conftest import DATA_TRACE
from reference import raw_bytes

import tracecols
from tracecols.read.restore import restore_event
from tracecols.store import augment as aug

EXE = shutil.which("tracecols") or os.path.join(os.path.dirname(sys.executable), "tracecols")
ADDED = re.compile(
    rb', "args": \{(?:"kernel_flop": \d+(?:, "kernel_num_gb": [0-9.E+-]+)?|"kernel_num_gb": [0-9.E+-]+)\}'
    rb'|"kernel_flop": \d+(?:, "kernel_num_gb": [0-9.E+-]+)?(?:, )?|"kernel_num_gb": [0-9.E+-]+(?:, )?'
)
ARGS = ("kernel_flop", "kernel_num_gb")


def strip(b):
    """The augmented bytes with the inserted text removed (a plain regex)."""
    return ADDED.sub(b"", b)


def rows_by_uid(t):
    ev = t.table("events").to_pylist()
    return {r["uid"]: r for r in ev}


def test_data_trace_reingests_identically(tmp_path):
    out = tmp_path / "aug.json.gz"
    r = subprocess.run([EXE, "augment", str(DATA_TRACE), str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    new = gzip.decompress(out.read_bytes())
    assert strip(new) == raw_bytes(DATA_TRACE)
    a, b = tracecols.open(DATA_TRACE), tracecols.open(out)
    ra, rb = rows_by_uid(a), rows_by_uid(b)
    assert ra.keys() == rb.keys()
    changed = {}
    for uid, row in ra.items():
        ea, eb = restore_event(row), restore_event(rb[uid])
        added = {k: eb.get("args", {}).pop(k) for k in ARGS if k in eb.get("args", {})}
        if added:
            changed[uid] = added
        assert ea == eb, uid
    kp = a.sql("select uid, op_uid, kernel_flop, kernel_bytes from kernel_perf")
    assert set(kp["uid"].to_list()) <= set(changed)
    assert set(changed) == set(kp["uid"].to_list()) | set(kp["op_uid"].to_list())
    # each kernel's values are its share of its op's; the shares add up to the op's values
    for op_uid, grp in kp.group_by("op_uid"):
        op = changed[op_uid[0]]
        flops = [changed[u].get("kernel_flop") for u in grp["uid"]]
        if "kernel_flop" in op:
            assert abs(sum(flops) - op["kernel_flop"]) <= len(flops)
        gb = sum(changed[u]["kernel_num_gb"] for u in grp["uid"])
        assert abs(gb - op["kernel_num_gb"]) <= Decimal(len(flops)) * Decimal("1e-9")
    gemm = next(v for u, v in changed.items() if "gemm" in (ra[u]["name"] or "").lower())
    assert gemm["kernel_flop"] > 1e6


def events_doc():
    return {
        "schemaVersion": 1,
        "traceEvents": [
            {
                "ph": "X",
                "cat": "cpu_op",
                "name": 'aten::mm ["x"] {',
                "pid": 1,
                "tid": 1,
                "ts": 1.5,
                "dur": 10,
                "args": {"External id": 1, "note": '}]\\"args"', "nested": {"args": {"a": [1, {"b": 2}]}}},
            },
            {"ph": "X", "cat": "kernel", "name": "args", "pid": 0, "tid": 7, "ts": 2, "dur": 3},
            {"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 6, "dur": 3, "args": {}},
            {"ph": "i", "name": "x", "pid": 1, "tid": 1, "ts": 20, "s": "t", "args": {"args": 1}},
        ],
        "traceName": "t [with] {brackets}",
    }


@pytest.mark.parametrize("form", ["object", "array"])
@pytest.mark.parametrize("chunk", [7, 64, 1 << 20])
def test_hand_built_edge_cases(tmp_path, monkeypatch, form, chunk):
    monkeypatch.setattr(aug, "CHUNK", chunk)
    monkeypatch.setattr(aug, "TAIL", min(chunk, 16))
    doc = events_doc()
    src = doc if form == "object" else doc["traceEvents"]
    # the source's own separators differ from the inserted text's (", " and ": "), so that
    # strip() can only remove what was inserted
    text = (json.dumps(src, indent=1) if chunk == 64 else json.dumps(src, separators=(",", ":"))).encode()
    p = tmp_path / "in.json"
    p.write_bytes(text)
    values = {
        0: {"kernel_flop": 12, "kernel_num_gb": Decimal("0.5")},
        1: {"kernel_flop": 3},
        2: {"kernel_num_gb": Decimal("1E-9")},
        3: {"kernel_flop": 4},
    }
    out = tmp_path / "out.json"
    assert aug.write_augmented(p, out, values) == 4
    got = json.loads(out.read_bytes(), parse_float=Decimal)
    want = json.loads(text, parse_float=Decimal)
    events = want["traceEvents"] if form == "object" else want
    for uid, v in values.items():
        events[uid].setdefault("args", {}).update(v)
    assert got == want
    new = out.read_bytes()
    assert strip(new) == text


def test_gzip_out_and_events_before_metadata(tmp_path):
    p = tmp_path / "in.json.gz"
    p.write_bytes(gzip.compress(json.dumps(events_doc()).encode()))
    out = tmp_path / "o.json.gz"
    aug.write_augmented(p, out, {1: {"kernel_flop": 1}})
    d = json.loads(gzip.decompress(out.read_bytes()))
    assert d["traceEvents"][1]["args"] == {"kernel_flop": 1} and d["traceName"] == "t [with] {brackets}"


def _steps(changes):
    """{(series, ts): value after every change at ts} from (series, ts, order, delta) changes:
    a running sum per series in (ts, order) order — a plain reference for the counters."""
    out, run = {}, {}
    for series, ts, _order, delta in sorted(changes, key=lambda c: (str(c[0]), c[1], c[2])):
        run[series] = run.get(series, 0) + delta
        out[(series, ts)] = run[series]
    return out


@pytest.mark.corpus
def test_counters_carry_queue_length_and_bandwidth(tmp_path):
    from conftest import CORPUS
    from reference import load

    p = CORPUS / "HolisticTraceAnalysis/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"
    out = tmp_path / "c.json"
    r = subprocess.run([EXE, "augment", "--counters", str(p), str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    events, meta = load(str(p))
    doc = json.loads(out.read_bytes(), parse_float=Decimal)
    got = doc.pop("traceEvents")
    # the trace's own events come first, unchanged (no modelled op here: no args added); then the counters
    assert got[: len(events)] == events and doc == meta
    added = got[len(events) :]
    assert added and all(e["ph"] == "C" and e["pid"] == 0 and set(e) == {"ph", "name", "pid", "ts", "args"} for e in added)
    us = Decimal(1000)

    def ns(v):
        return int(Decimal(v) * us)

    # queue length, from the raw events: +1 at the launch call of each device event (same
    # correlation), -1 at the device event's start, a start before a launch at one time
    launches = {
        e["args"]["correlation"]: e for e in events if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})
    }
    device = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    changes = []
    for e in device:
        launch = launches.get(e["args"].get("correlation"))
        if launch is not None:
            s = f"stream {e['args']['stream']} queue"
            changes += [(s, ns(launch["ts"]), 1, 1), (s, ns(e["ts"]), 0, -1)]
    want_queue = _steps(changes)
    got_queue = {(e["name"], ns(e["ts"])): e["args"]["length"] for e in added if e["name"].endswith(" queue")}
    assert len(got_queue) > 100 and got_queue == want_queue
    # bandwidth: each copy's 'memory bandwidth (GB/s)' from its start to its end, summed per direction
    changes = []
    for e in device:
        if e["cat"] != "kernel" and e["dur"] > 0:
            s = "memset" if e["cat"] == "gpu_memset" else "memcpy " + e["name"].split()[1]
            bw = float(e["args"]["memory bandwidth (GB/s)"])
            changes += [(s, ns(e["ts"]), 0, bw), (s, ns(e["ts"]) + ns(e["dur"]), 0, -bw)]
    want_bw = _steps(changes)
    got_bw = {(e["name"], ns(e["ts"])): e["args"]["GB/s"] for e in added if not e["name"].endswith(" queue")}
    assert len(got_bw) == 38 and got_bw.keys() == want_bw.keys()
    for k, v in want_bw.items():
        assert float(got_bw[k]) == pytest.approx(v, rel=1e-9, abs=1e-12), k
    # read back, the counters are samples of the `counters` view, in the tracks written
    back = tracecols.open(out).sql("select name, count(*) as n from counters group by name").rows()
    assert dict(back) == {n: sum(1 for e in added if e["name"] == n) for n in {e["name"] for e in added}}


@pytest.mark.parametrize("form", ["object", "array", "empty"])
@pytest.mark.parametrize("chunk", [7, 1 << 20])
def test_new_events_go_at_the_end_of_the_event_array(tmp_path, monkeypatch, form, chunk):
    monkeypatch.setattr(aug, "CHUNK", chunk)
    monkeypatch.setattr(aug, "TAIL", min(chunk, 16))
    doc = events_doc()
    if form == "empty":
        doc["traceEvents"] = []
    src = doc["traceEvents"] if form == "array" else doc
    text = json.dumps(src, indent=1).encode()
    p = tmp_path / "in.json"
    p.write_bytes(text)
    new = [
        {"ph": "C", "name": "memcpy HtoD", "pid": 0, "ts": Decimal("1.5"), "args": {"GB/s": 2.5}},
        {"ph": "C", "name": "stream 7 queue", "pid": 0, "ts": 2, "args": {"length": 1}},
    ]
    out = tmp_path / "out.json"
    assert aug.write_augmented(p, out, {1: {"kernel_flop": 3}}, events=new) == (0 if form == "empty" else 1)
    got = json.loads(out.read_bytes(), parse_float=Decimal)
    want = json.loads(text, parse_float=Decimal)
    events = want if form == "array" else want["traceEvents"]
    if form != "empty":
        events[1].setdefault("args", {})["kernel_flop"] = 3
    events.extend(new)  # Decimal("1.5") and 2.5 equal what parse_float=Decimal reads back
    assert got == want
