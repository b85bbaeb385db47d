"""op_averages / op_averages_by_shape (torch's key_averages), ops_unique_args and
tracelens_ops_unique_args: a hand-built trace worked out by hand, a plain per-event reference
on real traces, and TraceLens's own ops_unique_args.csv files."""

import ast
import collections
import csv
import math

import pytest
from conftest import CORPUS, open_events

import tracecols

US = 1000  # ns per µs


class Trace:
    """A small Kineto trace: host pid 1 tid 1, device 0 (pid 0), times in µs."""

    def __init__(self):
        self.ev = [
            {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python"}},
            {"ph": "M", "name": "process_labels", "pid": 1, "tid": 0, "args": {"labels": "CPU"}},
            {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "thread 1 (python)"}},
        ]
        self.corr = 0

    def host(self, cat, name, ts, dur, dims=None, types=None, strides=None):
        args = {}
        if dims is not None:
            args = {
                "Input Dims": dims,
                "Input type": types or ["float"] * len(dims),
                "Input Strides": strides or [[1] * len(d) for d in dims],
                "Concrete Inputs": [""] * len(dims),
            }
        self.ev.append({"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": args})

    def launch(self, call, ts, dur, dev_name, dev_ts, dev_dur, dev_cat="kernel"):
        """A runtime call and the device event it launched, linked as Kineto links them."""
        self.corr += 1
        self.ev.append(
            {
                "ph": "X",
                "cat": "cuda_runtime",
                "name": call,
                "pid": 1,
                "tid": 1,
                "ts": ts,
                "dur": dur,
                "args": {"correlation": self.corr},
            }
        )
        self.ev.append({"ph": "s", "cat": "ac2g", "name": "ac2g", "id": self.corr, "pid": 1, "tid": 1, "ts": ts})
        self.ev.append(
            {
                "ph": "X",
                "cat": dev_cat,
                "name": dev_name,
                "pid": 0,
                "tid": 7,
                "ts": dev_ts,
                "dur": dev_dur,
                "args": {"device": 0, "stream": 7, "correlation": self.corr},
            }
        )
        self.ev.append({"ph": "f", "cat": "ac2g", "name": "ac2g", "id": self.corr, "pid": 0, "tid": 7, "ts": dev_ts, "bp": "e"})

    def open(self, tmp_path):
        return open_events(tmp_path, self.ev)


@pytest.fixture
def nested(tmp_path):
    """step (annotation) over aten::linear > aten::addmm > launch of gemm (10 µs); aten::add over
    aten::add (recursion), each launching an add_k kernel; a memcpy launched right under the
    annotation; one more aten::add outside the step with no device work.
    Self CPU: step 100 − (50 + 30 + 2) = 18; linear 50 − 40 = 10; addmm 40 − 2 = 38;
    outer add 30 − (20 + 1) = 9; inner add 20 − 1 = 19; last add 10; launches 2, 1, 1, 2; a
    childless aten::cat (5) with a TensorList argument."""
    t = Trace()
    t.host("user_annotation", "step", 0, 100)
    t.host("cpu_op", "aten::linear", 10, 50, [[2, 3], [4, 3], [4]])
    t.host("cpu_op", "aten::addmm", 15, 40, [[4], [2, 3], [3, 4]])
    t.launch("cudaLaunchKernel", 20, 2, "gemm", 30, 10)
    t.host("cpu_op", "aten::add", 62, 30, [[2, 4], [2, 4]])
    t.host("cpu_op", "aten::add", 65, 20, [[8], [8]])
    t.launch("cudaLaunchKernel", 70, 1, "add_k", 80, 4)
    t.launch("cudaLaunchKernel", 88, 1, "add_k", 95, 3)
    t.launch("cudaMemcpyAsync", 94, 2, "Memcpy HtoD", 100, 6, dev_cat="gpu_memcpy")
    t.host("cpu_op", "aten::add", 110, 10, [[2, 4], [2, 4]])
    # a TensorList argument: its dims are one level deeper than events.input_dims holds
    t.host("cpu_op", "aten::cat", 130, 5, [[[2, 3], [2, 3]], []], ["TensorList", "Scalar"], [[[3, 1], [3, 1]], []])
    return t.open(tmp_path)


AVG_COLS = ("calls", "self_cpu_ns", "cpu_total_ns", "self_device_ns", "device_total_ns")


def test_op_averages_by_hand(nested):
    rows = {(r["name"], r["cat"]): r for r in nested.sql("select * from op_averages").to_dicts()}
    want = {  # calls, self CPU, CPU total, self device, device total (µs)
        ("step", "user_annotation"): (1, 18, 100, 6, 23),  # owns the memcpy (no op above it); total 10+4+3+6
        ("aten::linear", "cpu_op"): (1, 10, 50, 0, 10),
        ("aten::addmm", "cpu_op"): (1, 38, 40, 10, 10),
        # outer add: self 3, total 3 + 4; inner add: 4, 4; last add: 0 — the inner one's 4 µs counts twice
        ("aten::add", "cpu_op"): (3, 9 + 19 + 10, 30 + 20 + 10, 3 + 4, 7 + 4),
        ("cudaLaunchKernel", "cuda_runtime"): (3, 4, 4, 0, 0),
        ("cudaMemcpyAsync", "cuda_runtime"): (1, 2, 2, 0, 0),
        ("aten::cat", "cpu_op"): (1, 5, 5, 0, 0),
    }
    assert set(rows) == set(want)
    for k, (calls, self_cpu, cpu, self_dev, dev) in want.items():
        r = rows[k]
        assert [r[c] for c in AVG_COLS] == [calls, self_cpu * US, cpu * US, self_dev * US, dev * US], k
        assert r["cpu_avg_ns"] == pytest.approx(cpu * US / calls)
        assert r["device_avg_ns"] == pytest.approx(dev * US / calls)
        assert r["self_cpu_pct"] == pytest.approx(100 * self_cpu / 115)  # 18 + 10 + 38 + 38 + 4 + 2 + 5
        assert r["cpu_total_pct"] == pytest.approx(100 * cpu / 115)
        assert r["self_device_pct"] == pytest.approx(100 * self_dev / 23)  # 6 + 10 + 7
    assert [r["name"] for r in nested.sql("select name from op_averages").to_dicts()][:2] == ["step", "aten::add"]


def test_op_averages_by_shape_by_hand(nested):
    rows = {
        (r["name"], r["input_shapes"]): r
        for r in nested.sql("select * from op_averages_by_shape where name = 'aten::add'").to_dicts()
    }
    assert set(rows) == {("aten::add", "[[2, 4], [2, 4]]"), ("aten::add", "[[8], [8]]")}
    outer = rows[("aten::add", "[[2, 4], [2, 4]]")]  # the outer add and the last one
    assert [outer[c] for c in AVG_COLS] == [2, 19 * US, 40 * US, 3 * US, 7 * US]
    assert outer["input_types"] == '["float","float"]'
    inner = rows[("aten::add", "[[8], [8]]")]
    assert [inner[c] for c in AVG_COLS] == [1, 19 * US, 20 * US, 4 * US, 4 * US]
    cat = nested.sql("select input_shapes, input_types from op_averages_by_shape where name = 'aten::cat'").to_dicts()
    assert cat == [{"input_shapes": "[[[2, 3], [2, 3]], []]", "input_types": '["TensorList","Scalar"]'}]
    step = nested.sql("select * from op_averages_by_shape where name = 'step'").to_dicts()
    assert [(r["input_shapes"], r["calls"]) for r in step] == [(None, 1)]


def test_an_only_child_of_its_own_name_folds_into_its_parent(tmp_path):
    """torch's table drops an event that is its parent's only child and has its name: aten::sum
    calling its other overload is one call; aten::mul with a second child is not folded. Every
    ProfilerStep#N is one row, ProfilerStep*."""
    t = Trace()
    t.host("user_annotation", "ProfilerStep#1", 0, 100)
    t.host("cpu_op", "aten::sum", 10, 40, [[2, 4], []])
    t.host("cpu_op", "aten::sum", 12, 36, [[2, 4], [], [], []])
    t.launch("cudaLaunchKernel", 20, 2, "sum_k", 30, 5)
    t.host("cpu_op", "aten::mul", 60, 30, [[2, 4], [2, 4]])
    t.host("cpu_op", "aten::mul", 62, 8, [[8], [8]])
    t.launch("cudaLaunchKernel", 75, 2, "mul_k", 80, 3)
    t.host("user_annotation", "ProfilerStep#2", 100, 20)
    tr = t.open(tmp_path)
    rows = {r["name"]: [r[c] for c in AVG_COLS] for r in tr.sql("select * from op_averages").to_dicts()}
    assert rows == {  # calls, self CPU, CPU total, self device, device total (µs)
        "ProfilerStep*": [2, (100 - 40 - 30 + 20) * US, 120 * US, 0, 8 * US],
        "aten::sum": [1, (4 + 34) * US, 40 * US, 5 * US, 5 * US],  # the inner one's self times, not its totals
        "aten::mul": [2, (30 - 8 - 2 + 8) * US, (30 + 8) * US, 3 * US, 3 * US],
        "cudaLaunchKernel": [2, 4 * US, 4 * US, 0, 0],
    }
    by_shape = tr.sql("select input_shapes, calls, self_cpu_ns from op_averages_by_shape where name = 'aten::sum'").rows()
    assert by_shape == [("[[2, 4], []]", 1, 38 * US)]  # under the parent's shapes


def test_ops_unique_args_by_hand(nested):
    rows = {(r["name"], r["input_dims"]): r for r in nested.sql("select * from ops_unique_args").to_dicts()}
    assert set(rows) == {
        ("aten::linear", "[[2, 3], [4, 3], [4]]"),
        ("aten::addmm", "[[4], [2, 3], [3, 4]]"),
        ("aten::add", "[[2, 4], [2, 4]]"),
        ("aten::add", "[[8], [8]]"),
        ("aten::cat", "[[[2, 3], [2, 3]], []]"),
    }
    cat = rows[("aten::cat", "[[[2, 3], [2, 3]], []]")]
    assert (cat["input_strides"], cat["count"], cat["kernels"], cat["kernel_names"]) == ("[[[3, 1], [3, 1]], []]", 1, 0, [])
    a = rows[("aten::add", "[[2, 4], [2, 4]]")]  # outer add (kernels 80–84 and 95–98) + last add (none)
    assert (a["count"], a["kernels"], a["kernel_sum_ns"], a["busy_ns"], a["mean_busy_ns"], a["kernel_names"]) == (
        2,
        2,
        7 * US,
        7 * US,
        3.5 * US,
        ["add_k"],
    )
    assert (a["input_types"], a["input_strides"], a["concrete_inputs"]) == ('["float","float"]', "[[1, 1], [1, 1]]", '["",""]')
    lin = rows[("aten::linear", "[[2, 3], [4, 3], [4]]")]
    assert (lin["count"], lin["kernels"], lin["busy_ns"], lin["kernel_names"]) == (1, 1, 10 * US, ["gemm"])


def test_tracelens_ops_unique_args_by_hand(nested):
    rows = {(r["name"], r["Input Dims"]): r for r in nested.sql("select * from tracelens_ops_unique_args").to_dicts()}
    # launchers: addmm (gemm), outer add (add_k 95–98), inner add (add_k 80–84), and the memcpy's
    # launch call itself (an annotation, not a cpu_op, is above it); aten::linear launched nothing
    assert set(rows) == {
        ("aten::addmm", "((4,), (2, 3), (3, 4))"),
        ("aten::add", "((2, 4), (2, 4))"),
        ("aten::add", "((8,), (8,))"),
        ("cudaMemcpyAsync", None),
    }
    outer = rows[("aten::add", "((2, 4), (2, 4))")]
    assert (
        outer["operation_count"],
        outer["total_direct_kernel_time_sum"],
        outer["total_subtree_kernel_time_sum"],
        outer["total_direct_kernel_time_std"],
    ) == (1, 3.0, 7.0, None)
    assert outer["Input type"] == "('float', 'float')" and outer["Concrete Inputs"] == "('', '')"
    assert (outer["process_name"], outer["process_label"], outer["thread_name"]) == ("python", "CPU", "thread 1 (python)")
    assert rows[("cudaMemcpyAsync", None)]["total_direct_kernel_time_sum"] == 6.0
    assert rows[("aten::addmm", "((4,), (2, 3), (3, 4))")]["Percentage (%)"] == pytest.approx(100 * 10 / 23)
    order = [r["name"] for r in nested.sql("select name from tracelens_ops_unique_args").to_dicts()]
    assert order == ["aten::addmm", "cudaMemcpyAsync", "aten::add", "aten::add"]


# --- a plain reference on real traces: walk each device event's launch call up the parent chain


def reference_op_averages(t):
    """{(name, cat): [calls, self CPU, CPU total, self device, device total]} from slices and
    kernels rows: every cpu_op / user_annotation above the launch call gets the event's
    duration; the nearest cpu_op gets it as self time, else the nearest user_annotation.
    A graph-replayed kernel's walk starts at its grafted op (beneath the graph launch).
    As in torch's table, an event that is its parent's only child and has its name is no call
    of its own and adds to no total (its self times count all the same), and every
    ProfilerStep#N is ProfilerStep*."""
    cats = ("cpu_op", "user_annotation", "cuda_runtime", "cuda_driver")
    sl = {
        r["uid"]: r for r in t.sql("select uid, name, cat, parent_uid, dur_ns, self_ns, uid < 0 as graph from slices").to_dicts()
    }
    children = collections.Counter(r["parent_uid"] for r in sl.values())

    def folded(r):
        p = sl.get(r["parent_uid"])
        return p is not None and p["name"] == r["name"] and children[p["uid"]] == 1

    def key(r):
        return ("ProfilerStep*" if r["name"].startswith("ProfilerStep#") else r["name"], r["cat"])

    out = collections.defaultdict(lambda: [0, 0, 0, 0, 0])
    for r in sl.values():
        if r["cat"] in cats:
            row = out[key(r)]
            row[1] += r["self_ns"]
            if not folded(r):
                row[0] += 1
                row[2] += r["dur_ns"]
    for k in t.sql("select launch_uid, op_uid, dur_ns from kernels where launch_uid is not null").to_dicts():
        grafted = k["op_uid"] is not None and sl[k["op_uid"]]["graph"]
        up, owner, ann_owner = k["op_uid"] if grafted else sl[k["launch_uid"]]["parent_uid"], None, None
        while up is not None:
            s = sl[up]
            if s["cat"] in ("cpu_op", "user_annotation"):
                if not folded(s):
                    out[key(s)][4] += k["dur_ns"]
                if s["cat"] == "cpu_op" and owner is None:
                    owner = s
                if s["cat"] == "user_annotation" and ann_owner is None:
                    ann_owner = s
            up = s["parent_uid"]
        owner = owner or ann_owner
        if owner is not None:
            out[key(owner)][3] += k["dur_ns"]
    return out


SAMPLES = [
    "generated/cpu_train_step.pt.trace.json.gz",
    "TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz",
    "HolisticTraceAnalysis/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
]


@pytest.mark.corpus
@pytest.mark.parametrize("path", SAMPLES + ["graph replay"])
def test_op_averages_against_reference(path):
    if path == "graph replay":  # vLLM decode, its graph replays grafted from the capture traces
        d = CORPUS / "TraceLens/tests/traces/inference/vllm_decode_full"
        t = tracecols.open(d / "graph_execution.json.gz", capture=d / "capture_traces")
    else:
        t = tracecols.open(CORPUS / path)
    want = reference_op_averages(t)
    got = {(r["name"], r["cat"]): [r[c] for c in AVG_COLS] for r in t.sql("select * from op_averages").to_dicts()}
    assert got == dict(want)
    assert sum(v[3] for v in want.values()) > 0 or "cpu_train_step" in path  # device time seen where there is some


# --- TraceLens's own ops_unique_args.csv

REFS = sorted(CORPUS.glob("TraceLens/**/*_perf_report_csvs/ops_unique_args.csv")) if CORPUS.is_dir() else []
ARGS = ("Input Dims", "Input type", "Input Strides", "Concrete Inputs")
STATS = ("mean", "median", "min", "max", "sum")


def _args(text):
    return None if text in (None, "") else ast.literal_eval(text)


def _key(r):
    return (r["name"], r["op category"], r["process_name"], r["thread_name"], *(_args(r[a]) for a in ARGS))


def _close(want, got, count):
    # 0.1 % relative, plus TraceLens's float-µs rounding (~1e-3 µs per interval edge)
    return math.isclose(float(want), got, rel_tol=1e-3, abs_tol=0.01 * max(count, 1))


@pytest.mark.corpus
def test_unique_args_references_present():
    assert len(REFS) == 7


@pytest.mark.corpus
@pytest.mark.parametrize("ref", REFS, ids=lambda p: p.parent.name.removesuffix("_perf_report_csvs"))
def test_tracelens_ops_unique_args_matches_csv(ref):
    with open(ref, newline="") as f:
        want = {_key(r): r for r in csv.DictReader(f)}
    t = tracecols.open(str(ref.parent).removesuffix("_perf_report_csvs") + ".json.gz")
    got_rows = t.sql("select * from tracelens_ops_unique_args").to_dicts()
    got = {_key(r): r for r in got_rows}
    assert len(got) == len(got_rows)  # the text of the argument lists keeps groups apart
    assert set(got) == set(want)
    for k, w in want.items():
        g, n = got[k], int(w["operation_count"])
        assert g["operation_count"] == n, k[0]
        assert g["process_label"] == w["process_label"]
        for kind in ("direct", "subtree"):
            for s in STATS:
                col = f"total_{kind}_kernel_time_{s}"
                assert _close(w[col], g[col], n if s == "sum" else 1), (k[0], col, w[col], g[col])
            col = f"total_{kind}_kernel_time_std"
            if w[col] == "":
                assert g[col] is None, (k[0], col)
            else:
                assert math.isclose(float(w[col]), g[col], rel_tol=1e-3, abs_tol=0.01), (k[0], col, w[col], g[col])
        for col in ("Percentage (%)", "Cumulative Percentage (%)"):
            assert math.isclose(float(w[col]), g[col], rel_tol=1e-3, abs_tol=1e-3), (k[0], col, w[col], g[col])


INFERENCE = {"vllm_decode_full": "graph_execution.json.gz", "sglang_decode": "sglang_Qwen3-8B_decode.json.gz"}


@pytest.mark.corpus
@pytest.mark.parametrize("case", sorted(INFERENCE))
def test_tracelens_ops_unique_args_matches_inference_csv(case):
    """The inference reports also split rows by parent module and kernel count (columns this
    view does not have): summed over those, counts and times agree."""
    d = CORPUS / "TraceLens/tests/traces/inference" / case
    t = tracecols.open(d / INFERENCE[case], capture=d / "capture_traces")

    def add(rows):
        out = collections.defaultdict(lambda: [0, 0.0, 0.0])
        for r in rows:
            o = out[(r["name"], *(_args(r[a]) for a in ARGS))]
            o[0] += int(r["operation_count"])
            o[1] += float(r["total_direct_kernel_time_sum"])
            o[2] += float(r["total_subtree_kernel_time_sum"])
        return out

    with open(d / "perf_csvs/ops_unique_args.csv", newline="") as f:
        want = add(csv.DictReader(f))
    got = add(t.sql("select * from tracelens_ops_unique_args").to_dicts())
    assert set(got) == set(want)
    for k, (n, direct, subtree) in want.items():
        assert got[k][0] == n, k[0]
        assert _close(direct, got[k][1], n) and _close(subtree, got[k][2], n), (k[0], want[k], got[k])


# (Input Dims, Input type) as the column holds them; TraceLens prints them as Python does
ARG_TEXT = [
    ([[512], [141, 512]], ["c10::BFloat16", ""]),
    ([], []),
    ([[]], ["float"]),
    ([[512]], ["Scalar"]),
    ([[-1, 2], [], [3]], ["a", "b", "c"]),
    ([[1, None], None, [None]], ["x", None]),
    ([None], [None]),
    ([[None]], [""]),
    ([[7], [8]], ["int", "int"]),
]


@pytest.mark.parametrize("dims, types", ARG_TEXT, ids=str)
def test_tracelens_argument_text_is_what_python_prints(dims, types):
    import duckdb

    from tracecols.engine import sqlfiles

    con = duckdb.connect()
    con.execute(sqlfiles.macro_modules()["python_text"])  # the module _tracelens_arg_text uses
    got = con.execute(
        "SELECT _tc_tl_arg_dims(d, j), _tc_tl_arg_strs(t) FROM (SELECT ?::BIGINT[][] AS d, ?::VARCHAR[] AS t, NULL::JSON AS j)",
        [dims, types],
    ).fetchall()[0]
    assert got == (str(tuple(None if d is None else tuple(d) for d in dims)), str(tuple(types)))
