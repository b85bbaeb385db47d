"""`stacks` and `tracecols stacks`: a hand-built trace whose folded lines are written out by hand,
and corpus traces against a plain-Python walk up the parents of `slices`."""

import contextlib
import hashlib
import io
import json
from collections import defaultdict

import pytest
from conftest import CORPUS
from plain_views import stack_texts

import tracecols
from tracecols.cli import main
from tracecols.report import flame


def cli(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in args])
    return rc, out.getvalue(), err.getvalue()


def _x(cat, name, ts, dur, tid=1, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur, "args": args}


def _kernel(name, ts, dur, corr):
    return {
        "ph": "X",
        "cat": "kernel",
        "name": name,
        "pid": 0,
        "tid": 7,
        "ts": ts,
        "dur": dur,
        "args": {"device": 0, "stream": 7, "correlation": corr},
    }


MAIN, FWD = "train.py(10): main", "model.py(5): forward"

# Times in µs. Thread 1 sits under the profiler's own span (left out of the stacks):
#   Trace [0,300)
#     main [0,100)                       self 100-60-20 = 20
#       forward [10,70)                  self 60-30-10 = 20
#         aten::linear [20,50)           self 30-20 = 10
#           aten::addmm [22,42)          self 20-5 = 15
#             cudaLaunchKernel [25,30)   self 5; launches gemm (40 µs)
#         aten::relu [55,65)             self 10-2 = 8
#           cudaLaunchKernel [57,59)     self 2; launches relu (8 µs)
#       forward [75,95)                  self 20-10 = 10  (the same path as the first forward)
#         aten::relu [80,90)             self 10-3 = 7
#           cudaLaunchKernel [82,85)     self 3; launches relu (7 µs)
#     "step;1\nnext" [200,210)           self 10-0.4-0.5-2 = 7.1
#       cudaGetDevice [203,203.4)        self 0.4: rounds to 0 µs, no line
#       cudaStreamSynchronize [205,205.5) self 0.5: rounds (half up) to 1 µs
#       forward [206,208)                self 2: the name and tree level of the other forwards,
#                                        another parent path
# Thread 2 (same names: the same stacks):
#   main [0,30)                          self 25
#     aten::relu [5,10)                  self 5
# A device event whose correlation no launch call carries counts nowhere.
EVENTS = [
    _x("Trace", "PyTorch Profiler (0)", 0, 300),
    _x("python_function", MAIN, 0, 100),
    _x("python_function", FWD, 10, 60),
    _x("cpu_op", "aten::linear", 20, 30),
    _x("cpu_op", "aten::addmm", 22, 20),
    _x("cuda_runtime", "cudaLaunchKernel", 25, 5, correlation=1),
    _x("cpu_op", "aten::relu", 55, 10),
    _x("cuda_runtime", "cudaLaunchKernel", 57, 2, correlation=2),
    _x("python_function", FWD, 75, 20),
    _x("cpu_op", "aten::relu", 80, 10),
    _x("cuda_runtime", "cudaLaunchKernel", 82, 3, correlation=3),
    _x("user_annotation", "step;1\nnext", 200, 10),
    _x("cuda_runtime", "cudaGetDevice", 203, 0.4),
    _x("cuda_runtime", "cudaStreamSynchronize", 205, 0.5),
    _x("python_function", FWD, 206, 2),
    _x("python_function", MAIN, 0, 30, tid=2),
    _x("cpu_op", "aten::relu", 5, 5, tid=2),
    _kernel("gemm", 30, 40, 1),
    _kernel("relu", 70, 8, 2),
    _kernel("relu", 90, 7, 3),
    _kernel("orphan", 100, 50, 99),
]

SELF_CPU = f"""step,1 next 7
step,1 next;cudaStreamSynchronize 1
step,1 next;{FWD} 2
{MAIN} 45
{MAIN};aten::relu 5
{MAIN};{FWD} 30
{MAIN};{FWD};aten::linear 10
{MAIN};{FWD};aten::linear;aten::addmm 15
{MAIN};{FWD};aten::linear;aten::addmm;cudaLaunchKernel 5
{MAIN};{FWD};aten::relu 15
{MAIN};{FWD};aten::relu;cudaLaunchKernel 5
"""

SELF_DEVICE = f"""{MAIN};{FWD};aten::linear;aten::addmm;cudaLaunchKernel 40
{MAIN};{FWD};aten::relu;cudaLaunchKernel 15
"""


def _write(tmp_path, events, name="t.json"):
    p = tmp_path / name
    p.write_text(
        json.dumps({"schemaVersion": 1, "traceEvents": events, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}]})
    )
    return p


def test_folded_lines_by_hand(tmp_path):
    p = _write(tmp_path, EVENTS)
    for metric, want in (("self_cpu", SELF_CPU), ("self_device", SELF_DEVICE)):
        out = tmp_path / f"{metric}.folded"
        rc, _, err = cli("stacks", p, "-o", out, "--metric", metric)
        assert rc == 0, err
        assert out.read_text() == want, metric
    rc, _, _ = cli("stacks", p, "-o", tmp_path / "default.folded")
    assert rc == 0 and (tmp_path / "default.folded").read_text() == SELF_CPU


def test_view_rows_by_hand(tmp_path):
    t = tracecols.open(_write(tmp_path, EVENTS))
    view = t.sql("select * from stacks").to_dicts()
    text = stack_texts(view)
    rows = {text[r["trace_id"], r["node"]]: r for r in view}
    relu = rows[f"{MAIN};{FWD};aten::relu;cudaLaunchKernel"]
    assert (relu["frames"], relu["slices"], relu["self_cpu_ns"]) == (4, 2, 5_000)
    assert (relu["device_events"], relu["self_device_ns"]) == (2, 15_000)
    assert (rows[MAIN]["slices"], rows[MAIN]["self_cpu_ns"]) == (2, 45_000)
    assert rows["step,1 next;cudaGetDevice"]["self_cpu_ns"] == 400  # in the view, not in the file
    assert rows["step,1 next"]["self_cpu_ns"] == 7_100
    assert not any("PyTorch Profiler" in s for s in rows)
    assert len(rows) == len(view) == 12
    assert sum(r["self_device_ns"] for r in rows.values()) == 55_000  # the orphan's 50 µs are nowhere


# The hand-built trace's tree: stack -> (frames, slices at it, (thread, start µs) of those slices)
TREE = {
    MAIN: (1, 2, {(1, 0), (2, 0)}),
    f"{MAIN};{FWD}": (2, 2, {(1, 10), (1, 75)}),
    f"{MAIN};{FWD};aten::linear": (3, 1, {(1, 20)}),
    f"{MAIN};{FWD};aten::linear;aten::addmm": (4, 1, {(1, 22)}),
    f"{MAIN};{FWD};aten::linear;aten::addmm;cudaLaunchKernel": (5, 1, {(1, 25)}),
    f"{MAIN};{FWD};aten::relu": (3, 2, {(1, 55), (1, 80)}),
    f"{MAIN};{FWD};aten::relu;cudaLaunchKernel": (4, 2, {(1, 57), (1, 82)}),
    f"{MAIN};aten::relu": (2, 1, {(2, 5)}),
    "step,1 next": (1, 1, {(1, 200)}),
    "step,1 next;cudaGetDevice": (2, 1, {(1, 203)}),
    "step,1 next;cudaStreamSynchronize": (2, 1, {(1, 205)}),
    f"step,1 next;{FWD}": (2, 1, {(1, 206)}),
}


def test_tree_by_hand(tmp_path):
    t = tracecols.open(_write(tmp_path, EVENTS))
    uid = {(tid, ts // 1000): u for u, tid, ts, cat in t.sql("select uid, tid, ts_ns, cat from slices").rows() if cat != "Trace"}
    view = t.sql("select * from stacks").to_dicts()
    assert [(r["trace_id"], r["node"]) for r in view] == sorted((r["trace_id"], r["node"]) for r in view)
    node = {stack: min(uid[s] for s in at) for stack, (_, _, at) in TREE.items()}  # the smallest uid at the path
    want = {
        (node[stack], node.get(stack.rpartition(";")[0]), stack.rpartition(";")[2], frames, slices)
        for stack, (frames, slices, _) in TREE.items()
    }
    assert len(want) == len(TREE)  # twelve different nodes
    got = {(r["node"], r["parent"], r["frame"], r["frames"], r["slices"]) for r in view}
    assert got == want
    roots = [r["frame"] for r in view if r["parent"] is None]
    assert sorted(roots) == sorted([MAIN, "step,1 next"])


def test_frame_paths_cut_at_a_depth_and_keyed_by_trace(tmp_path):
    """The icicle's input against the plain walk over `slices`: each stack's first `depth` frames,
    deeper values at the ancestor at the cut. Two traces whose nodes have the same ids and other
    names: paths must not mix across traces."""
    other = [dict(e, name=e["name"].replace("aten::relu", "aten::gelu")) for e in EVENTS]
    t = tracecols.open(_write(tmp_path, EVENTS, "a.json"), _write(tmp_path, other, "b.json"))
    ids = [r[0] for r in t.sql("select trace_id from traces order by 1").rows()]
    assert len(ids) == 2
    for column in ("self_cpu_ns", "self_device_ns"):
        want: dict = defaultdict(int)
        for tid in ids:
            cpu, dev = reference(t, tid)
            for stack, v in (cpu if column == "self_cpu_ns" else dev).items():
                if v > 0:
                    want[tuple(stack.split(";")[:3])] += v
        got: dict = defaultdict(int)
        for frames, v in flame.frame_paths(t, column, 3):
            assert v > 0 and len(frames) <= 3
            got[frames] += v
        assert got == want, column
        assert (MAIN, FWD, "aten::gelu") in got and (MAIN, FWD, "aten::linear") in got  # cut: addmm's time
        assert got[MAIN, FWD, "aten::linear"] == (30_000 if column == "self_cpu_ns" else 40_000) * 2
    for tid in ids:  # and the folded lines of each trace
        cpu, dev = reference(t, tid)
        assert flame.folded(t, tid, "self_cpu") == _folded(cpu)
        assert flame.folded(t, tid, "self_device") == _folded(dev)


def test_cpu_only_trace_self_device_is_an_empty_file_and_a_note(tmp_path):
    p = _write(tmp_path, [e for e in EVENTS if e["cat"] != "kernel"])
    out = tmp_path / "dev.folded"
    rc, _, err = cli("stacks", p, "-o", out, "--metric", "self_device")
    assert rc == 0 and out.read_bytes() == b""
    assert "no device time" in err and err.count("\n") == 1
    rc, _, err = cli("stacks", p, "-o", out, "--metric", "self_device", "-q")
    assert rc == 0 and err == "" and out.read_bytes() == b""


def test_output_equal_to_the_input_is_refused(tmp_path):
    p = _write(tmp_path, EVENTS)
    before = hashlib.sha256(p.read_bytes()).hexdigest()
    rc, _, err = cli("stacks", p, "-o", p)
    assert rc == 2 and err.count("\n") == 1 and "refusing to write over it" in err
    assert hashlib.sha256(p.read_bytes()).hexdigest() == before


def test_one_trace_only(tmp_path):
    a, b = _write(tmp_path, EVENTS, "a.json"), _write(tmp_path, EVENTS, "b.json")
    rc, _, err = cli("stacks", tmp_path / "*.json", "-o", tmp_path / "x.folded")
    assert rc == 2 and "stacks takes one trace, and these name 2" in err and err.count("\n") == 1
    assert not (tmp_path / "x.folded").exists()
    saved = tmp_path / "both"
    tracecols.open(a, b).save(saved)
    rc, _, err = cli("stacks", saved, "-o", tmp_path / "x.folded")
    assert rc == 2 and "holds 2 traces; choose one with --trace-id" in err
    rc, _, err = cli("stacks", saved, "-o", tmp_path / "x.folded", "--trace-id", 1)
    assert rc == 0 and (tmp_path / "x.folded").read_text() == SELF_CPU


# ----------------------------------------------------------------------------------------
# Corpus: a plain walk up the parents of every slice


def _frame(name):
    name = "" if name is None else name.replace(";", ",").replace("\r", " ").replace("\n", " ")
    return name or "(unnamed)"


def reference(t, trace_id=None):
    """({stack: self ns}, {stack: device ns}) by following parent_uid from every slice (of one
    trace: the only one unless `trace_id` says which)."""
    where = "" if trace_id is None else f" where trace_id = {trace_id}"
    by_uid = {
        uid: (parent, cat, name)
        for uid, parent, cat, name in t.sql(f"select uid, parent_uid, cat, name from slices{where}").rows()
    }
    launched = defaultdict(int)
    for launch_uid, op_uid, dur in t.sql(f"select launch_uid, op_uid, dur_ns from kernels{where}").rows():
        if op_uid is not None and op_uid < 0:  # a replayed graph's: at the op grafted for it
            launched[op_uid] += dur
        elif launch_uid is not None:
            launched[launch_uid] += dur
    cpu, dev = defaultdict(int), defaultdict(int)
    for uid, self_ns in t.sql(f"select uid, self_ns from slices{where}").rows():
        if by_uid[uid][1] == "Trace":
            continue
        frames, u = [], uid
        while u is not None:
            parent, cat, name = by_uid[u]
            if cat != "Trace":
                frames.append(_frame(name))
            u = parent
        stack = ";".join(reversed(frames))
        cpu[stack] += self_ns
        dev[stack] += launched[uid]
    return cpu, dev


def _folded(sums):
    return sorted((s, (v + 500) // 1000) for s, v in sums.items() if (v + 500) // 1000 > 0)


def _read(path):
    return [(s, int(v)) for s, v in (line.rsplit(" ", 1) for line in path.read_text().splitlines())]


_VLLM = "TraceLens/tests/traces/inference/vllm_decode_full/"
CORPUS_TRACES = [
    ("generated/cpu_train_step.pt.trace.json.gz", None),  # Python frames, CPU only
    ("TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz", None),  # deep Python stacks, GPU
    ("HolisticTraceAnalysis/tests/data/df_index_resolver/df_index_resolver.json.gz", None),  # large
    (_VLLM + "graph_execution.json.gz", _VLLM + "capture_traces"),
]  # graph replays, captured ops


@pytest.mark.corpus
@pytest.mark.parametrize(("rel", "capture"), CORPUS_TRACES)
def test_corpus_matches_a_plain_walk(rel, capture, tmp_path):
    path = CORPUS / rel
    capture = capture and CORPUS / capture
    t = tracecols.open(path, capture=capture)
    cpu, dev = reference(t)
    tree = t.sql("select * from stacks").to_dicts()
    text = stack_texts(tree)
    view = [(text[r["trace_id"], r["node"]], r["self_cpu_ns"], r["self_device_ns"]) for r in tree]
    assert len({s for s, _, _ in view}) == len(view)  # one row per path
    assert {s: c for s, c, _ in view} == dict(cpu)
    assert {s: d for s, _, d in view} == dict(dev)
    # the sums, each taken straight from its table
    assert sum(c for _, c, _ in view) == t.sql("select sum(self_ns) from slices where cat <> 'Trace'").item()
    assert sum(d for _, _, d in view) == t.sql("select coalesce(sum(dur_ns), 0) from kernels where launch_uid is not null").item()
    for metric, sums in (("self_cpu", cpu), ("self_device", dev)):
        out = tmp_path / f"{metric}.folded"
        rc, _, err = cli("stacks", path, "-o", out, "--metric", metric, *(("--capture", capture) if capture else ()))
        assert rc == 0, err
        assert _read(out) == _folded(sums), metric
        assert flame.folded(t, t.sql("select trace_id from traces").item(), metric) == _folded(sums), metric
    has_py = t.sql("select count(*) from slices where cat = 'python_function'").item() > 0
    assert has_py == ("df_index_resolver" not in rel)
    assert (sum(dev.values()) > 0) == ("cpu_train_step" not in rel)
    if capture:  # the replayed kernels sit under the captured ops grafted beneath the graph launch
        assert sum(d for s, d in dev.items() if ";hipGraphLaunch;capture_" in s) > 0.9 * sum(dev.values())
