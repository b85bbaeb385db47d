"""FX markers (`## path.py ##`, `## N ##`): fx_file / fx_node of slices and kernels, and the views."""

import json
import random
import re

import pytest

import tracecols

FILE = "/tmp/torchinductor_u/ab/cabcdef.py"


def X(name, ts, dur, cat="cpu_op", tid=1, pid=1, **args):
    e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
    if args:
        e["args"] = args
    return e


def hand_trace():
    ev = [
        X(f"## {FILE} ##", 0, 1000, cat="user_annotation"),
        X("## 0 ##", 10, 300, cat="user_annotation"),
        X("aten::mm", 20, 100),
        X("cudaLaunchKernel", 30, 10, cat="cuda_runtime", correlation=1),
        X("## 1 ##", 400, 300, cat="user_annotation"),
        X("triton_poi_fused_add_0", 410, 50, cat="cpu_op"),
        X("cudaLaunchKernel", 420, 10, cat="cuda_runtime", correlation=2),
        X("aten::add", 800, 50),  # in the file marker, in no node marker
        X("aten::mul", 1500, 10),  # outside every marker
        X("## 7 ##", 1600, 100, cat="user_annotation"),  # node marker outside a file marker
        X("aten::relu", 1610, 20),
        X("aten::sin", 20, 500, tid=2),  # another thread, overlapping in time: not inside
        X("## zero_grad ##", 2000, 10, cat="user_annotation"),  # a marker of another kind
        X("gemm_kernel", 50, 40, cat="kernel", pid=0, tid=7, correlation=1, device=0, stream=7),
        X("triton_kernel", 440, 20, cat="kernel", pid=0, tid=7, correlation=2, device=0, stream=7),
    ]
    return ev


def marker(name):
    """('file', path) or ('node', n) or None: what an event name marks, for the reference."""
    m = re.fullmatch(r"## (.+\.py) ##", name or "")
    if m:
        return "file", m.group(1)
    m = re.fullmatch(r"## (\d+) ##", name or "")
    return ("node", int(m.group(1))) if m else None


def reference(ev):
    """uid -> (fx_file, fx_node) by plain interval containment on the same thread."""
    marks = []
    for e in ev:
        m = marker(e["name"])
        if m and e["pid"] != 0:
            marks.append((e, m))
    out = {}
    for uid, e in enumerate(ev):
        if e["pid"] == 0:
            continue
        inner = {}
        for me, (kind, val) in marks:
            inside = (
                (me["pid"], me["tid"]) == (e["pid"], e["tid"])
                and me["ts"] <= e["ts"]
                and e["ts"] + e["dur"] <= me["ts"] + me["dur"]
            )
            if inside and (kind not in inner or me["ts"] >= inner[kind][0]):
                inner[kind] = (me["ts"], val)
        if inner:
            out[uid] = (inner.get("file", (0, None))[1], inner.get("node", (0, None))[1])
    corr = {e["args"]["correlation"]: uid for uid, e in enumerate(ev) if e["cat"] == "cuda_runtime"}
    for uid, e in enumerate(ev):
        if e["cat"] == "kernel" and corr[e["args"]["correlation"]] in out:
            out[uid] = out[corr[e["args"]["correlation"]]]
    return out


def write(tmp_path, ev, name="t.json"):
    p = tmp_path / name
    p.write_text(json.dumps({"traceEvents": ev}))
    return p


def got(t):
    d = t.sql("select uid, fx_file, fx_node from fx_marks order by uid")
    return {u: (f, n) for u, f, n in d.iter_rows()}


def test_marker_names():
    assert marker(f"## {FILE} ##") == ("file", FILE)
    assert marker("## 12 ##") == ("node", 12)
    assert marker("## zero_grad ##") is None and marker("## Call CompiledFxGraph abc ##") is None


def test_hand_built_trace(tmp_path):
    ev = hand_trace()
    t = tracecols.open(write(tmp_path, ev))
    want = reference(ev)
    assert got(t) == want
    assert want[2] == (FILE, 0) and want[13] == (FILE, 0) and want[14] == (FILE, 1)
    assert want[7] == (FILE, None) and want[10] == (None, 7) and 8 not in want and 11 not in want
    s = t.sql(
        "select fx_node, cpu_ops, kernels, kernel_sum_ns from fx_node_summary "
        "where fx_file is not null order by fx_node nulls last"
    )
    assert s.rows() == [(0, 1, 1, 40_000), (1, 1, 1, 20_000), (None, 1, 0, 0)]
    ops = t.sql("select name, fx_node from fx_ops order by ts_ns")
    assert ("aten::mm", 0) in ops.rows() and ("aten::relu", 7) in ops.rows()


def test_random_nestings(tmp_path):
    rng = random.Random(7)
    for trial in range(5):
        ev = []
        for tid in (1, 2):
            t0 = 0
            for g in range(4):
                fdur = 1000
                ev.append(X(f"## /g/{tid}_{g}.py ##", t0, fdur, cat="user_annotation", tid=tid))
                n0 = t0 + 10
                for node in range(rng.randint(0, 4)):
                    ndur = rng.randint(20, 200)
                    if n0 + ndur >= t0 + fdur:
                        break
                    ev.append(X(f"## {node} ##", n0, ndur, cat="user_annotation", tid=tid))
                    for _ in range(rng.randint(0, 3)):
                        a = n0 + rng.randint(0, ndur - 5)
                        ev.append(X("aten::op", a, rng.randint(1, n0 + ndur - a), tid=tid))
                    n0 += ndur + rng.randint(0, 30)
                t0 += fdur + rng.randint(0, 100)
            ev.append(X("aten::outside", t0 + 5000, 10, tid=tid))
        rng.shuffle(ev)
        t = tracecols.open(write(tmp_path, ev, f"r{trial}.json"))
        assert got(t) == reference(ev)


@pytest.mark.corpus
def test_corpus_trace_without_fx_markers():
    from conftest import CORPUS

    t = tracecols.open(CORPUS / "HolisticTraceAnalysis/tests/data/call_stack/backward_thread.json")
    assert t.sql("select count(*) from fx_marks").item() == 0  # '## backward ##' is not an FX marker
