"""Graph replays: the capture merge against TraceLens's inference reports, the pseudo op
without capture traces, and the kernel-sequence matcher against a plain reference."""

import csv
import math
import random
import subprocess
import sys

import polars as pl
import pytest
import tree_reference as ref
from conftest import CORPUS
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import assert_tracelens_gpu_timeline

import tracecols
from tracecols.model import capture

INFERENCE = CORPUS / "TraceLens/tests/traces/inference"
CASES = {"vllm_decode_full": "graph_execution.json.gz", "sglang_decode": "sglang_Qwen3-8B_decode.json.gz"}


def _close(a, b, count=1):
    # 0.1 % relative, plus TraceLens's float-µs rounding (~1e-3 µs per interval edge)
    return math.isclose(a, b, rel_tol=1e-3, abs_tol=0.01 * max(count, 1))


@pytest.fixture(scope="module", params=sorted(CASES))
def merged(request):
    d = INFERENCE / request.param
    return d, tracecols.open(d / CASES[request.param], capture=d / "capture_traces")


@pytest.mark.corpus
def test_cases_present():
    assert all((INFERENCE / c / f).exists() for c, f in CASES.items())


@pytest.mark.corpus
def test_ops_summary_matches_tracelens_inference_report(merged):
    d, t = merged
    with open(d / "perf_csvs/ops_summary.csv", newline="") as f:
        want = {(r["name"], r["parent_module"]): r for r in csv.DictReader(f)}
    got = {(r["name"], r["parent_module"] or "NA"): r for r in t.sql("select * from tracelens_ops_summary").iter_rows(named=True)}
    assert set(got) == set(want)
    for key, w in want.items():
        g, n = got[key], int(w["Count"])
        assert g["Count"] == n, key
        assert g["total_subtree_kernel_time_count"] == int(w["total_subtree_kernel_time_count"]), key
        for col in ("total_direct_kernel_time_sum", "total_subtree_kernel_time_sum"):
            assert _close(float(w[col]), g[col], n), (key, col, w[col], g[col])
        assert _close(float(w["total_direct_kernel_time_ms"]), g["total_direct_kernel_time_ms"], n / 1000), key
        assert g["call_stack_first"] == w["call_stack_first"], key
        assert g["Categories"] == w["Categories"], key
        assert math.isclose(float(w["Percentage (%)"]), g["Percentage (%)"], rel_tol=1e-3, abs_tol=1e-3), key


@pytest.mark.corpus
def test_gpu_timeline_matches_tracelens_inference_report(merged):
    d, t = merged
    assert_tracelens_gpu_timeline(d / "perf_csvs/gpu_timeline.csv", t)


@pytest.mark.corpus
def test_little_gpu_time_left_on_graph_launches(merged):
    _, t = merged
    r = t.sql("""
        WITH k AS (SELECT k.*, s.cat AS lcat, s.name AS lname FROM kernels k
                   LEFT JOIN slices s ON s.trace_id = k.trace_id AND s.uid = k.op_uid)
        SELECT (sum(dur_ns) FILTER (WHERE launch_name LIKE '%GraphLaunch%' AND (op_uid IS NULL
                    OR lname LIKE 'graph replay @%' OR lcat IS DISTINCT FROM 'cpu_op')))::BIGINT AS left_ns,
               (SELECT busy_ns FROM gpu_timeline WHERE device IS NULL) AS busy_ns,
               count(*) FILTER (WHERE launch_name LIKE '%GraphLaunch%' AND op_uid < 0) AS grafted
        FROM k""").row(0, named=True)
    assert r["grafted"] > 400
    assert (r["left_ns"] or 0) <= 0.01 * r["busy_ns"], r
    g = t.sql("select * from graph_replays").row(0, named=True)
    assert g["matched"] and g["candidates"] == 1 and g["mismatch_at"] is None


@pytest.mark.corpus
def test_grafted_tree_is_consistent(merged):
    """Grafted nodes hang under their graph launch; pre-order ranges nest; op_path runs up the tree."""
    _, t = merged
    bad = t.sql("""
        SELECT count(*) AS n FROM slices c JOIN slices p ON p.trace_id = c.trace_id AND p.uid = c.parent_uid
        WHERE NOT (p.pre < c.pre AND c.subtree_end <= p.subtree_end AND c.depth = p.depth + 1)""")["n"][0]
    assert bad == 0
    pres = t.sql("select count(*) AS n, count(distinct pre) AS d, max(pre) AS m from slices").row(0, named=True)
    assert pres["n"] == pres["d"] == pres["m"] + 1
    # every kernel's op_path is the chain of cpu_ops above its op, nearest first
    walk = t.sql("""
        WITH RECURSIVE up(kuid, lvl, uid) AS (
            SELECT k.uid, 1, k.op_uid FROM kernels k WHERE k.op_uid IS NOT NULL
            UNION ALL
            SELECT up.kuid, up.lvl + 1, s2.uid FROM up JOIN slices s ON s.uid = up.uid
            JOIN slices s2 ON s2.uid = (SELECT p.op_uid FROM slices p WHERE p.uid = s.parent_uid)
        )
        SELECT kuid, list(uid ORDER BY lvl) AS path FROM up GROUP BY kuid""")
    paths = dict(
        zip(
            t.sql("select uid, op_path from kernels where op_uid is not null")["uid"],
            t.sql("select uid, op_path from kernels where op_uid is not null")["op_path"],
        )
    )
    assert {k: list(v) for k, v in zip(walk["kuid"], walk["path"])} == {k: list(v) for k, v in paths.items()}


def test_grafted_slices_have_the_stacks_and_annotations_of_the_tree_they_hang_in(merged):
    """stack_id and annotation_uid over the tree with the grafts, against a plain walk up
    parent_uid: equal ids exactly for equal paths of names; the first user_annotation above."""
    _, t = merged
    rows = t.sql("select uid, parent_uid, cat, name, stack_id, annotation_uid from slices").rows()
    assert any(u < 0 for u, *_ in rows), "the replay has grafted slices: the check must reach them"
    parent, cat, name = ({r[0]: r[k] for r in rows} for k in (1, 2, 3))
    path = ref.stack_paths(parent, cat, name)
    ref.assert_one_to_one(((path[r[0]], r[4]) for r in rows), "stack ids")
    assert [r[5] for r in rows] == [ref.annotation_above(parent, cat, r[0]) for r in rows]


@pytest.mark.corpus
def test_grafted_ops_keep_their_shapes(merged):
    """op_perf sees the captured GEMMs: the grafted events carry the capture's Input Dims."""
    _, t = merged
    n = t.sql("select count(*) AS n from op_perf where uid < 0 and category = 'gemm' and flops > 0")["n"][0]
    assert n > 0


@pytest.mark.corpus
@pytest.mark.parametrize("case", sorted(CASES))
def test_without_capture_nothing_is_hidden(case, tmp_path):
    trace = INFERENCE / case / CASES[case]
    t = tracecols.open(trace)
    site = t.sql("select name, direct_busy_ns from op_gpu_time where name like 'graph replay @%'")
    assert site.height == 1 and site["direct_busy_ns"][0] > 0
    assert site["name"][0] != "graph replay @ " and "torch/" not in site["name"][0]
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from tracecols.cli import main; sys.exit(main())",
            "analyze",
            str(trace),
            "--top",
            "5",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    line = [x for x in (r.stdout + r.stderr).splitlines() if "graph replays" in x and "--capture" in x]
    assert len(line) == 1, r.stdout + r.stderr
    busy = t.sql("select sum(busy_ns) AS b from gpu_timeline where device is null")["b"][0]
    share = t.sql("select sum(kernel_sum_ns) AS s from graph_replays")["s"][0]
    assert f"{100 * share / busy:.1f}%" in line[0] or f"{min(100.0, 100 * share / busy):.1f}%" in line[0]
    shares = [float([w for w in x.split() if w.endswith("%")][-1].rstrip("%")) for x in _top_ops_rows(r.stdout)]
    assert math.isclose(sum(shares), 100.0, abs_tol=0.1 * len(shares)), shares
    from tracecols.report import write

    with open(write(trace, tmp_path / "r.html"), encoding="utf-8") as f:
        html = f.read()
    assert line[0].replace("'", "&#x27;") in html or line[0] in html


def _top_ops_rows(out):
    lines = out.splitlines()
    start = next(i for i, x in enumerate(lines) if x.startswith("Top ops by GPU time"))
    rows = []
    for x in lines[start + 2 :]:
        if not x.strip():
            break
        rows.append(x)
    return rows


# --- the matcher against a plain reference ---------------------------------------------------


def _plain_match(replay, files):
    """First full match over files then offsets; else the closest window (most agreeing pairs,
    then lowest file and offset) among windows whose first pair agrees, and its first
    disagreement. `replay`: [(kind, name)]; files: [[(kind, kname or None)]]."""

    def ok(r, c):
        return r[0] == c[0] and (c[1] is None or c[1] == r[1])

    n = len(replay)
    windows = [(f, o) for f, calls in enumerate(files) for o in range(len(calls) - n + 1) if ok(replay[0], calls[o])]
    full = [(f, o) for f, o in windows if all(ok(replay[i], files[f][o + i]) for i in range(n))]
    if full:
        return {"file": full[0][0], "offset": full[0][1], "candidates": len(full), "mismatch_at": None}
    if not windows:
        return {"file": None, "offset": None, "candidates": 0, "mismatch_at": 0}
    score = {w: sum(ok(replay[i], files[w[0]][w[1] + i]) for i in range(n)) for w in windows}
    best = max(windows, key=lambda w: (score[w], -w[0], -w[1]))
    bad = next(i for i in range(n) if not ok(replay[i], files[best[0]][best[1] + i]))
    return {"file": None, "offset": None, "candidates": 0, "mismatch_at": bad}


class _Calls:
    """The part of a capture.Capture that matching reads."""

    def __init__(self, index, calls, batch_size=None):
        self.index, self.batch_size = index, batch_size
        self.calls = pl.DataFrame(
            {
                "file": [index] * len(calls),
                "pos": list(range(len(calls))),
                "row": list(range(len(calls))),
                "uid": list(range(len(calls))),
                "kind": [c[0] for c in calls],
                "kname": [c[1] for c in calls],
            },
            schema={"file": pl.Int32, "pos": pl.Int64, "row": pl.Int64, "uid": pl.Int64, "kind": pl.String, "kname": pl.String},
        )


_KERNEL = st.tuples(st.sampled_from(["kernel", "kernel", "kernel", "memcpy"]), st.sampled_from("abcd"))


@settings(max_examples=150, deadline=None)
@given(
    files=st.lists(st.lists(_KERNEL, min_size=1, max_size=12), min_size=1, max_size=3),
    pick=st.integers(0, 10_000),
    edit=st.sampled_from(["none", "swap", "extra", "missing"]),
    named=st.booleans(),
)
def test_matcher_agrees_with_plain_reference(files, pick, edit, named):
    rnd = random.Random(pick)
    f = rnd.randrange(len(files))
    o = rnd.randrange(len(files[f]))
    replay = list(files[f][o : o + 1 + rnd.randrange(len(files[f]) - o)])
    i = rnd.randrange(len(replay))
    if edit == "swap":
        replay[i] = (replay[i][0], "z")
    elif edit == "extra":
        replay.insert(i, ("kernel", "y"))
    elif edit == "missing" and len(replay) > 1:
        replay.pop(i)
    cap = [[(k, n if named else None) for k, n in calls] for calls in files]
    gk = pl.DataFrame(
        {
            "trace_id": [0] * len(replay),
            "launch_uid": [7] * len(replay),
            "i": list(range(len(replay))),
            "kind": [r[0] for r in replay],
            "name": [r[1] for r in replay],
        },
        schema={"trace_id": pl.Int32, "launch_uid": pl.Int64, "i": pl.Int64, "kind": pl.String, "name": pl.String},
    )
    got = capture.match(gk, [_Calls(k, c) for k, c in enumerate(cap)]).row(0, named=True)
    want = _plain_match(replay, cap)
    assert {k: got[k] for k in want} == want


@pytest.mark.corpus
def test_a_capture_of_another_model_is_reported_not_attributed():
    """vLLM's replay against SGLang's capture: nothing matches, so nothing is attributed."""
    replay = INFERENCE / "vllm_decode_full" / CASES["vllm_decode_full"]
    t = tracecols.open(replay, capture=INFERENCE / "sglang_decode" / "capture_traces")
    g = t.sql("select * from graph_replays").row(0, named=True)
    assert not g["matched"] and g["candidates"] == 0 and g["capture_path"] is None
    assert g["mismatch_at"] is not None and g["mismatch_kernel"]
    assert t.sql("select count(*) AS n from graph_nodes where not pseudo")["n"][0] == 0
    assert t.sql("select count(*) AS n from events where uid < 0")["n"][0] == 0
    s = t.sql("select * from graph_replay_share").row(0, named=True)
    assert s["mismatched"] == 1 and s["first_mismatch"].startswith(f"kernel {g['mismatch_at']} of 421")


def _cli(*args):
    return subprocess.run(
        [sys.executable, "-c", "import sys; from tracecols.cli import main; sys.exit(main())", *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.corpus
def test_capture_on_the_command_line(tmp_path):
    d = INFERENCE / "sglang_decode"
    r = _cli(
        "sql",
        d / CASES["sglang_decode"],
        "--capture",
        d / "capture_traces",
        "--format",
        "csv",
        "select count(*) AS n from graph_nodes where not pseudo",
    )
    assert r.returncode == 0, r.stderr
    assert int(r.stdout.split()[-1]) > 1000
    r = _cli("tree", d / CASES["sglang_decode"], "--capture", d / "capture_traces", "--name", "aten::mm")
    assert r.returncode == 0 and "aten::mm" in r.stdout, r.stderr
    r = _cli("sql", d / CASES["sglang_decode"], "--capture", tmp_path / "nowhere", "select 1")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "capture" in r.stderr
    bad = tmp_path / "caps"
    bad.mkdir()
    (bad / "execution_details.json").write_text('{"file": 1}')
    r = _cli("sql", d / CASES["sglang_decode"], "--capture", bad, "select 1")
    assert r.returncode == 2 and "execution_details.json" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.corpus
def test_streaming_ingest_grafts_the_same(merged, tmp_path):
    """`analyze -o` (streaming, Parquet) and tc.open (in memory) give the same merged tables."""
    from tracecols.pipeline import ingest_to_dir, read_captures

    d, t = merged
    out = ingest_to_dir(
        [d / CASES[d.name]],
        tmp_path / "out",
        views=["tracelens_ops_summary", "op_gpu_time"],
        captures=read_captures(d / "capture_traces"),
    )
    s = tracecols.open(out)
    for q in (
        "select * from tracelens_ops_summary order by all",
        "select uid, name, parent_module, direct_busy_ns, subtree_busy_ns from op_gpu_time order by all",
        "select * exclude (rank) from slices order by uid",
        "select * from kernels order by uid",
        "select * from events where uid < 0 order by uid",
    ):
        assert s.sql(q).equals(t.sql(q)), q


@pytest.mark.parametrize(("size", "want"), [(30, 1), (32, 1), (8, 0), (16, 0), (64, 1), (None, 0)])
def test_the_batch_size_around_a_launch_picks_among_equal_captures(size, want):
    """Two capture files hold the same graph (batch sizes 16 and 32): a launch in a step of
    `size` tokens runs in the smallest captured size that holds it (the largest if none does);
    without a size, the first file."""
    calls = [("kernel", "a"), ("kernel", "b")]
    gk = pl.DataFrame(
        {"trace_id": [0, 0], "launch_uid": [7, 7], "i": [0, 1], "kind": ["kernel"] * 2, "name": ["a", "b"]},
        schema={"trace_id": pl.Int32, "launch_uid": pl.Int64, "i": pl.Int64, "kind": pl.String, "name": pl.String},
    )
    sizes = pl.DataFrame(
        {"trace_id": [0], "launch_uid": [7], "size": [size]},
        schema={"trace_id": pl.Int32, "launch_uid": pl.Int64, "size": pl.Int64},
    )
    got = capture.match(gk, [_Calls(0, calls, 16), _Calls(1, calls, 32)], sizes).row(0, named=True)
    assert (got["file"], got["offset"], got["candidates"]) == (want, 0, 2)


@pytest.mark.corpus
def test_one_capture_file_is_enough():
    d = INFERENCE / "sglang_decode"
    t = tracecols.open(d / CASES["sglang_decode"], capture=d / "capture_traces" / "bs_32_rank0.json.gz")
    g = t.sql("select matched, capture_batch_size from graph_replays").row(0)
    assert g == (True, None)
