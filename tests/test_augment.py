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
ADDED = re.compile(rb', "args": \{(?:"kernel_flop": \d+(?:, "kernel_num_gb": [0-9.E+-]+)?|"kernel_num_gb": [0-9.E+-]+)\}'
                   rb'|"kernel_flop": \d+(?:, "kernel_num_gb": [0-9.E+-]+)?(?:, )?|"kernel_num_gb": [0-9.E+-]+(?:, )?')
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
    return {"schemaVersion": 1, "traceEvents": [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm [\"x\"] {", "pid": 1, "tid": 1, "ts": 1.5, "dur": 10,
         "args": {"External id": 1, "note": "}]\\\"args\"", "nested": {"args": {"a": [1, {"b": 2}]}}}},
        {"ph": "X", "cat": "kernel", "name": "args", "pid": 0, "tid": 7, "ts": 2, "dur": 3},
        {"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 6, "dur": 3, "args": {}},
        {"ph": "i", "name": "x", "pid": 1, "tid": 1, "ts": 20, "s": "t", "args": {"args": 1}},
    ], "traceName": "t [with] {brackets}"}


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
    values = {0: {"kernel_flop": 12, "kernel_num_gb": Decimal("0.5")}, 1: {"kernel_flop": 3},
              2: {"kernel_num_gb": Decimal("1E-9")}, 3: {"kernel_flop": 4}}
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
