"""`stacks` and `tracecols stacks`: a hand-built trace whose folded lines are written out by hand,
and corpus traces against a plain-Python walk up the parents of `slices`."""
import contextlib
import hashlib
import io
import json
from collections import defaultdict

import pytest
from conftest import CORPUS

import tracecols
from tracecols.cli import main


def cli(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in args])
    return rc, out.getvalue(), err.getvalue()


def _x(cat, name, ts, dur, tid=1, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur, "args": args}


def _kernel(name, ts, dur, corr):
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur,
            "args": {"device": 0, "stream": 7, "correlation": corr}}


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
    p.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events,
                             "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}]}))
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
    rows = {r["stack"]: r for r in t.sql("select * from stacks").to_dicts()}
    relu = rows[f"{MAIN};{FWD};aten::relu;cudaLaunchKernel"]
    assert (relu["frames"], relu["slices"], relu["self_cpu_ns"]) == (4, 2, 5_000)
    assert (relu["device_events"], relu["self_device_ns"]) == (2, 15_000)
    assert (rows[MAIN]["slices"], rows[MAIN]["self_cpu_ns"]) == (2, 45_000)
    assert rows["step,1 next;cudaGetDevice"]["self_cpu_ns"] == 400  # in the view, not in the file
    assert rows["step,1 next"]["self_cpu_ns"] == 7_100
    assert not any("PyTorch Profiler" in s for s in rows)
    assert len(rows) == 12
    assert sum(r["self_device_ns"] for r in rows.values()) == 55_000  # the orphan's 50 µs are nowhere


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


def reference(t):
    """({stack: self ns}, {stack: device ns}) by following parent_uid from every slice."""
    by_uid = {uid: (parent, cat, name) for uid, parent, cat, name in
              t.sql("select uid, parent_uid, cat, name from slices").rows()}
    launched = defaultdict(int)
    for launch_uid, op_uid, dur in t.sql("select launch_uid, op_uid, dur_ns from kernels").rows():
        if op_uid is not None and op_uid < 0:  # a replayed graph's: at the op grafted for it
            launched[op_uid] += dur
        elif launch_uid is not None:
            launched[launch_uid] += dur
    cpu, dev = defaultdict(int), defaultdict(int)
    for uid, self_ns in t.sql("select uid, self_ns from slices").rows():
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
CORPUS_TRACES = [("generated/cpu_train_step.pt.trace.json.gz", None),  # Python frames, CPU only
                 ("TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz", None),  # deep Python stacks, GPU
                 ("HolisticTraceAnalysis/tests/data/df_index_resolver/df_index_resolver.json.gz", None),  # large
                 (_VLLM + "graph_execution.json.gz", _VLLM + "capture_traces")]  # graph replays, captured ops


@pytest.mark.corpus
@pytest.mark.parametrize(("rel", "capture"), CORPUS_TRACES)
def test_corpus_matches_a_plain_walk(rel, capture, tmp_path):
    path = CORPUS / rel
    capture = capture and CORPUS / capture
    t = tracecols.open(path, capture=capture)
    cpu, dev = reference(t)
    view = t.sql("select stack, self_cpu_ns, self_device_ns from stacks").rows()
    assert {s: c for s, c, _ in view} == dict(cpu)
    assert {s: d for s, _, d in view} == dict(dev)
    # the sums, each taken straight from its table
    assert sum(c for _, c, _ in view) == t.sql("select sum(self_ns) from slices where cat <> 'Trace'").item()
    assert sum(d for _, _, d in view) == t.sql(
        "select coalesce(sum(dur_ns), 0) from kernels where launch_uid is not null").item()
    for metric, sums in (("self_cpu", cpu), ("self_device", dev)):
        out = tmp_path / f"{metric}.folded"
        rc, _, err = cli("stacks", path, "-o", out, "--metric", metric, *(("--capture", capture) if capture else ()))
        assert rc == 0, err
        assert _read(out) == _folded(sums), metric
    has_py = t.sql("select count(*) from slices where cat = 'python_function'").item() > 0
    assert has_py == ("df_index_resolver" not in rel)
    assert (sum(dev.values()) > 0) == ("cpu_train_step" not in rel)
    if capture:  # the replayed kernels sit under the captured ops grafted beneath the graph launch
        assert sum(d for s, d in dev.items() if ";hipGraphLaunch;capture_" in s) > 0.9 * sum(dev.values())
