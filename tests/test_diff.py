"""`tracecols diff`: kernels, ops and call paths of two traces against a plain json reference."""

import contextlib
import copy
import io
import json
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from decimal import Decimal

import polars as pl
import pytest
from conftest import CORPUS, DATA_TRACE
from reference import raw_bytes

import tracecols
from tracecols.read import jsontext

EXE = shutil.which("tracecols") or os.path.join(os.path.dirname(sys.executable), "tracecols")
BASE = CORPUS / "HolisticTraceAnalysis/tests/data/trace_compare/base/base.json.gz"
TEST = CORPUS / "HolisticTraceAnalysis/tests/data/trace_compare/test/test.json.gz"
DEVICE_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


def ns(v):
    return int(Decimal(str(v)) * 1000)


def reference(events):
    """{kind: {key: (count, gpu_ns, host_ns)}} by stack walks over the raw events; kind
    "kernel" keys by name, "kernel_dev" by (device, name)."""
    ops = [
        (e["pid"], e["tid"], ns(e["ts"]), ns(e.get("dur", 0)), uid)
        for uid, e in enumerate(events)
        if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation")
    ]
    ops.sort(key=lambda o: (o[0], o[1], o[2], -o[3], o[4]))
    path, stack, thread = {}, [], None
    for pid, tid, ts, dur, uid in ops:
        if (pid, tid) != thread:
            stack, thread = [], (pid, tid)
        while stack and stack[-1][1] <= ts:
            stack.pop()
        name = re.sub(r"^ProfilerStep#\d+$", "ProfilerStep#*", events[uid]["name"])
        path[uid] = (path[stack[-1][0]] + " > " if stack else "") + name
        stack.append((uid, ts + dur))
    launch = {}  # correlation -> launch call: the runtime call, else the driver call (cuLaunchKernel)
    for cat in ("cuda_runtime", "cuda_driver"):
        for e in events:
            if e.get("ph") == "X" and e.get("cat") == cat and "correlation" in e.get("args", {}):
                launch.setdefault(e["args"]["correlation"], e)
    cpu = [(uid, events[uid]) for uid in path if events[uid]["cat"] == "cpu_op"]
    gpu = defaultdict(int)
    kern = defaultdict(lambda: [0, 0, 0])
    for e in events:
        if e.get("ph") != "X" or e.get("cat") not in DEVICE_CATS:
            continue
        k = kern[(e["args"].get("device", e["pid"]), e["name"])]
        k[0] += 1
        k[1] += ns(e.get("dur", 0))
        lc = launch.get(e["args"].get("correlation"))
        if lc is None:
            continue
        inside = [
            (ns(o["ts"]), -ns(o["dur"]), uid)
            for uid, o in cpu
            if (o["pid"], o["tid"]) == (lc["pid"], lc["tid"])
            and ns(o["ts"]) <= ns(lc["ts"])
            and ns(lc["ts"]) + ns(lc["dur"]) <= ns(o["ts"]) + ns(o["dur"])
        ]
        if inside:
            gpu[max(inside)[2]] += ns(e.get("dur", 0))
    by_name, by_path = defaultdict(lambda: [0, 0, 0]), defaultdict(lambda: [0, 0, 0])
    for uid, o in cpu:
        for table, key in ((by_name, o["name"]), (by_path, path[uid])):
            table[key][0] += 1
            table[key][1] += gpu[uid]
            table[key][2] += ns(o.get("dur", 0))
    kern_name = defaultdict(lambda: [0, 0, 0])
    for (_, name), v in kern.items():
        kern_name[name][0] += v[0]
        kern_name[name][1] += v[1]
    return {
        "kernel": {k: tuple(v) for k, v in kern_name.items()},
        "kernel_dev": {k: tuple(v) for k, v in kern.items()},
        "op": {k: tuple(v) for k, v in by_name.items()},
        "callpath": {k: tuple(v) for k, v in by_path.items()},
    }


def expected(ra, rb, kind):
    out = {}
    for key in set(ra) | set(rb):
        a, b = ra.get(key, (0, 0, 0)), rb.get(key, (0, 0, 0))
        status = "both" if key in ra and key in rb else ("only in A" if key in ra else "only in B")
        out[key] = (status, a[0], b[0], a[1], b[1]) + ((a[2], b[2]) if not kind.startswith("kernel") else ())
    return out


def got(frame, kind):
    keys = {"kernel": ["name"], "kernel_dev": ["device", "name"], "op": ["name"], "callpath": ["callpath"]}[kind]
    cols = ["status", "count_a", "count_b", "gpu_ns_a", "gpu_ns_b"]
    cols += [] if kind.startswith("kernel") else ["host_ns_a", "host_ns_b"]
    out = {}
    for row in frame.iter_rows(named=True):
        key = tuple(row[k] for k in keys) if len(keys) > 1 else row[keys[0]]
        out[key] = tuple(row[c] for c in cols)
    return out


def check(a_path, b_path, a_events, b_events):
    ta, tb = tracecols.open(a_path), tracecols.open(b_path)
    res = ta.compare(tb)
    res["kernel_dev"] = ta.compare(tb, ("kernel",), by_device=True)["kernel"]
    ra, rb = reference(a_events), reference(b_events)
    for kind in ("kernel", "kernel_dev", "op", "callpath"):
        assert got(res[kind], kind) == expected(ra[kind], rb[kind], kind), kind
        d = res[kind]["delta_gpu_ns"].abs().to_list()
        assert d == sorted(d, reverse=True), kind
    return res


@pytest.mark.corpus
def test_hta_trace_compare():
    a = json.loads(raw_bytes(BASE))["traceEvents"]
    b = json.loads(raw_bytes(TEST))["traceEvents"]
    res = check(BASE, TEST, a, b)
    only_b = set(res["op"].filter(pl.col("status") == "only in B")["name"])
    assert only_b == {"All2All_Pooled_Req", "CatBackward0", "AddmmBackward0"}
    k = res["kernel"].row(0, named=True)  # one elementwise kernel fewer in test
    assert k["status"] == "both" and k["delta_count"] == -1 and k["delta_gpu_ns"] == -4000


def test_modified_trace(tmp_path):
    doc = json.loads(raw_bytes(DATA_TRACE), parse_float=Decimal)
    a = doc["traceEvents"]
    b = copy.deepcopy(a)
    gemms = 0
    for e in b:
        if e.get("cat") == "kernel" and "gemm" in e["name"]:
            e["dur"] = Decimal(str(e["dur"])) * 2
            gemms += 1
    renamed = next(e for e in b if e.get("cat") == "cpu_op" and e["name"] == "aten::embedding")
    renamed["name"] = "aten::embedding_v2"
    dropped = [i for i, e in enumerate(b) if e.get("cat") == "kernel" and "reduce_kernel" in e["name"]]
    for i in reversed(dropped):
        del b[i]
    pb = tmp_path / "b.json"
    pb.write_text(jsontext.dumps(dict(doc, traceEvents=b)))  # decimals written exactly
    assert gemms and dropped
    # the reference reads B back with Decimal timestamps, as written
    b_events = json.loads(pb.read_text(), parse_float=Decimal)["traceEvents"]
    a_events = json.loads(raw_bytes(DATA_TRACE), parse_float=Decimal)["traceEvents"]
    res = check(DATA_TRACE, pb, a_events, b_events)
    top = res["kernel"].row(0, named=True)
    assert "gemm" in top["name"] and top["delta_gpu_ns"] == top["gpu_ns_a"]
    assert top["flops_a"] is not None and top["flops_a"] == pytest.approx(top["flops_b"])
    assert top["tflops_per_s_b"] == pytest.approx(top["tflops_per_s_a"] / 2)
    assert "only in A" in res["kernel"]["status"].to_list()
    ops = res["op"]
    assert ops.filter(pl.col("name") == "aten::embedding_v2")["status"].item() == "only in B"


@pytest.mark.corpus
def test_cli_diff(tmp_path):
    r = subprocess.run(
        [EXE, "diff", str(BASE), str(TEST), "--by", "op", "-o", str(tmp_path / "d")], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    assert "only in B" in r.stdout and "All2All_Pooled_Req" in r.stdout
    for f in ("diff_kernels", "diff_ops", "diff_callpaths"):
        assert (tmp_path / "d" / f"{f}.parquet").exists()
    ops = pl.read_parquet(tmp_path / "d" / "diff_ops.parquet")
    assert ops.filter(pl.col("status") == "only in B").height == 3


RANK0 = CORPUS / "HolisticTraceAnalysis/tests/data/trace_filter/sampled_rank-0.json.gz"
RANK1 = CORPUS / "HolisticTraceAnalysis/tests/data/trace_filter/sampled_rank-1.json.gz"


def _device_events(path):
    return [e for e in json.loads(raw_bytes(path))["traceEvents"] if e.get("ph") == "X" and e.get("cat") in DEVICE_CATS]


def _by(events, key):
    out = defaultdict(lambda: [0, 0])
    for e in events:
        out[key(e)][0] += 1
        out[key(e)][1] += ns(e.get("dur", 0))
    return {k: tuple(v) for k, v in out.items()}


@pytest.mark.corpus
def test_kernels_of_two_devices_match_by_name():
    """Rank 0 of HTA's trace_filter ran on GPU 0, rank 1 on GPU 1: keyed by device nothing
    matched. By name, the kernels found in both are exactly the names both files hold; with
    by_device the (device, name) keys of the files come back as before."""
    a, b = _device_events(RANK0), _device_events(RANK1)
    assert {e["args"]["device"] for e in a} == {0} and {e["args"]["device"] for e in b} == {1}
    ta, tb = tracecols.open(RANK0), tracecols.open(RANK1)

    res = ta.compare(tb, ("kernel",))["kernel"]
    na, nb = _by(a, lambda e: e["name"]), _by(b, lambda e: e["name"])
    both = set(na) & set(nb)
    assert len(both) > 100
    status = dict(zip(res["name"], res["status"]))
    assert {n for n, s in status.items() if s == "both"} == both
    assert {n for n, s in status.items() if s == "only in A"} == set(na) - set(nb)
    assert {n for n, s in status.items() if s == "only in B"} == set(nb) - set(na)
    for r in res.iter_rows(named=True):
        assert (r["count_a"], r["gpu_ns_a"]) == na.get(r["name"], (0, 0))
        assert (r["count_b"], r["gpu_ns_b"]) == nb.get(r["name"], (0, 0))
        assert r["devices_a"] == ("0" if r["name"] in na else None)
        assert r["devices_b"] == ("1" if r["name"] in nb else None)

    old = ta.compare(tb, ("kernel",), by_device=True)["kernel"]
    da = _by(a, lambda e: (e["args"]["device"], e["name"]))
    db = _by(b, lambda e: (e["args"]["device"], e["name"]))
    keyed = {
        (r["device"], r["name"]): (r["status"], r["count_a"], r["count_b"], r["gpu_ns_a"], r["gpu_ns_b"])
        for r in old.iter_rows(named=True)
    }
    assert keyed == {
        k: (
            "both" if k in da and k in db else "only in A" if k in da else "only in B",
            da.get(k, (0, 0))[0],
            db.get(k, (0, 0))[0],
            da.get(k, (0, 0))[1],
            db.get(k, (0, 0))[1],
        )
        for k in set(da) | set(db)
    }
    assert "devices_a" not in old.columns


@pytest.mark.corpus
def test_cli_diff_by_device(tmp_path):
    from tracecols.cli import main

    names = [{e["name"] for e in _device_events(p)} for p in (RANK0, RANK1)]
    keys = [{(e["args"]["device"], e["name"]) for e in _device_events(p)} for p in (RANK0, RANK1)]
    for flags, (a, b), how in (([], names, "by name, all devices together"), (["--by-device"], keys, "by device and name")):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            assert main(["diff", str(RANK0), str(RANK1), "--top", "1", *flags]) == 0
        assert (
            f"kernels {how}: {len(a | b)} keys, {len(a - b)} only in A, {len(b - a)} only in B, {len(a & b)} in both;"
        ) in out.getvalue()


def test_a_pct_of_peak_above_100_is_not_printed_as_a_number():
    from tracecols.cli.compare import _pct_of_peak

    assert [_pct_of_peak(v) for v in (184.1, 100.0, 50.04, None)] == [">peak?", "100.0%", "50.0%", "-"]


def test_the_roofline_hover_names_a_rate_above_peak():
    from tracecols.report.html import _of_roof

    assert _of_roof(144.0) == " (above the device's peak: the FLOPs/bytes model or the data is wrong)"
    assert _of_roof(42.4) == " (42% of roof)" and _of_roof(None) == ""
