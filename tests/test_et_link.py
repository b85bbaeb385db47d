"""Execution Trace reading and ET <-> Kineto linking, checked against plain json references."""

import glob
import gzip
import json
import os
import shutil
import subprocess
import sys
from decimal import Decimal

import polars as pl
import pytest
from conftest import CORPUS
from reference import load, raw_bytes

from tracecols.errors import NotATrace, Unsupported
from tracecols.model.et_link import link
from tracecols.pipeline import read_tables as ingest
from tracecols.read.execution_trace import read_execution_trace

pytestmark = pytest.mark.corpus

EXE = shutil.which("tracecols") or os.path.join(os.path.dirname(sys.executable), "tracecols")
HTA_ET = CORPUS / "HolisticTraceAnalysis/tests/data/execution_trace/benchmark_simple_add_et.json.gz"
HTA_K = CORPUS / "HolisticTraceAnalysis/tests/data/execution_trace/benchmark_simple_add_trace.json.gz"
GEN_ET = CORPUS / "generated/cpu_train_step_et.json"
GEN_K = CORPUS / "generated/cpu_train_step.pt.trace.json"
LIN_ET = CORPUS / "param/et_replay/tests/inputs/linear_et.json.gz"
LIN_K = CORPUS / "param/et_replay/tests/inputs/linear_kineto.json.gz"
DLRM = CORPUS / "param/et_replay/tests/inputs"


def dlrm_pair(r):
    et = DLRM / f"dlrm_pytorch_et.tar.gz.extracted/dlrm_pytorch_et/dlrm_eg_{r}.json"
    (k,) = glob.glob(str(DLRM / f"dlrm_kineto.tar.gz.extracted/dlrm_kineto/worker{r}_*.json"))
    return et, k


def ref_nodes(path):
    """(id, name, parent, rf_id, n_inputs) per node, from a json parse of either ET layout."""
    doc = json.loads(raw_bytes(path), parse_float=Decimal)
    out = []
    for n in doc["nodes"]:
        if "attrs" in n:
            attrs = {a["name"]: a["value"] for a in n["attrs"]}
            out.append((n["id"], n["name"], n["ctrl_deps"], attrs.get("rf_id"), len(n["inputs"]["types"])))
        else:
            out.append((n["id"], n["name"], n["parent"], n["rf_id"], len(n["input_types"])))
    return doc, out


@pytest.mark.parametrize(
    "path",
    [HTA_ET, GEN_ET, CORPUS / "param/et_replay/tests/inputs/1.1.0-chakra.0.0.4/resnet_2gpu_et.json.gz"],
    ids=["1.0.1", "1.1.1", "1.1.0"],
)
def test_reader_matches_json(path):
    doc, want = ref_nodes(path)
    et = read_execution_trace(path)
    n = et["nodes"].to_pydict()
    got = list(zip(n["node_id"], n["name"], n["parent_id"], n["rf_id"], n["n_inputs"]))
    assert got == want
    assert et["inputs"].num_rows == sum(w[4] for w in want)
    for key in ("schema", "pid", "start_ts", "finish_ts"):
        assert et["meta"][key] == doc[key]


def test_reader_rejects_kineto_trace():
    with pytest.raises(NotATrace, match="Kineto trace"):
        read_execution_trace(HTA_K)


def _link(et_path, k_path):
    et = read_execution_trace(et_path)
    tables, _ = ingest([str(k_path)])
    nodes, kern, s = link(et["nodes"], tables["events"], tables["slices"], tables["kernels"], et["meta"]["pid"])
    return pl.from_arrow(nodes), pl.from_arrow(kern), s


def _ops_stack_parent(events):
    """uid -> uid of the enclosing op (cpu_op/user_annotation), by a stack walk per thread."""
    ops = [
        (e["pid"], e["tid"], int(Decimal(str(e["ts"])) * 1000), int(Decimal(str(e.get("dur", 0))) * 1000), uid)
        for uid, e in enumerate(events)
        if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation")
    ]
    ops.sort(key=lambda o: (o[0], o[1], o[2], -o[3], o[4]))
    parent, stack, thread = {}, [], None
    for pid, tid, ts, dur, uid in ops:
        if (pid, tid) != thread:
            stack, thread = [], (pid, tid)
        while stack and stack[-1][1] <= ts:
            stack.pop()
        parent[uid] = stack[-1][0] if stack else None
        stack.append((uid, ts + dur))
    return parent, {o[4]: o[3] for o in ops}


def test_record_function_id_pair():
    nodes, _kern, s = _link(GEN_ET, GEN_K)
    assert s["method"] == "record_function_id"
    events, _ = load(str(GEN_K))
    krf = {uid: e["args"]["Record function id"] for uid, e in enumerate(events) if "Record function id" in e.get("args", {})}
    assert len(krf) == 3466
    linked = nodes.filter(pl.col("kineto_uid").is_not_null())
    assert linked.height == 3466 and s["matched"] == 3466
    assert set(linked["kineto_uid"].to_list()) == set(krf)
    for row in linked.iter_rows(named=True):
        e = events[row["kineto_uid"]]
        assert krf[row["kineto_uid"]] == row["rf_id"] and e["name"] == row["name"]
        assert row["ts_ns"] == int(Decimal(str(e["ts"])) * 1000)
        assert row["dur_ns"] == int(Decimal(str(e["dur"])) * 1000)
    # exclusive duration = inclusive minus the child ops (plain stack walk)
    parent, dur = _ops_stack_parent(events)
    child_sum = {}
    for uid, p in parent.items():
        if p is not None:
            child_sum[p] = child_sum.get(p, 0) + dur[uid]
    excl = {r["kineto_uid"]: r["exclusive_ns"] for r in linked.iter_rows(named=True)}
    same = sum(excl[u] == max(dur[u] - child_sum.get(u, 0), 0) for u in excl)
    assert same / len(excl) > 0.99
    assert s["parent_consistent"] == 1.0


def test_external_id_pair_without_profiler_step():
    events, _ = load(str(HTA_K))
    assert not any(str(e.get("name", "")).startswith("ProfilerStep") for e in events)
    assert not any("Record function id" in e.get("args", {}) for e in events)
    nodes, kern, s = _link(HTA_ET, HTA_K)
    assert s["method"] == "external_id" and s["match_rate"] == 1.0 and s["matched"] == 36
    linked = nodes.filter(pl.col("kineto_uid").is_not_null())
    for row in linked.iter_rows(named=True):
        e = events[row["kineto_uid"]]
        assert e["args"]["External id"] == row["rf_id"] and e["name"] == row["name"]
    # each kernel belongs to the innermost linked op enclosing its launch call (plain reference)
    corr_launch = {
        e["args"]["correlation"]: e for e in events if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})
    }
    uid_of = {r["kineto_uid"]: r["node_id"] for r in linked.iter_rows(named=True)}
    want = {}
    for uid, e in enumerate(events):
        if e.get("cat") == "kernel":
            lc = corr_launch[e["args"]["correlation"]]
            enclosing = [
                (events[u]["ts"], u)
                for u in uid_of
                if events[u]["tid"] == lc["tid"]
                and events[u]["ts"] <= lc["ts"]
                and events[u]["ts"] + events[u]["dur"] >= lc["ts"] + lc["dur"]
            ]
            want[uid] = uid_of[max(enclosing)[1]]
    assert dict(zip(kern["uid"].to_list(), kern["node_id"].to_list())) == want and len(want) == 4
    sub = nodes.filter(pl.col("name").str.starts_with("[param|torch.add"))
    assert sub["n_kernels_subtree"].sum() >= 1


@pytest.mark.parametrize("rank", range(8))
def test_dlrm_ranks(rank):
    et_path, k_path = dlrm_pair(rank)
    nodes, kern, s = _link(et_path, k_path)
    assert s["method"] == "external_id_aligned"
    assert s["match_rate"] > 0.99, s
    events, _ = load(k_path)
    linked = nodes.filter(pl.col("kineto_uid").is_not_null())
    assert linked["kineto_uid"].n_unique() == linked.height
    assert all(events[u]["name"] == n for u, n in zip(linked["kineto_uid"], linked["name"]))
    assert s["parent_consistent"] > 0.95
    kernels_total = sum(1 for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"))
    assert 0 < s["kernels_linked"] <= kernels_total


def test_linear_pair():
    nodes, kern, s = _link(LIN_ET, LIN_K)
    assert s["matched"] == s["et_ops"] == 928 and s["parent_consistent"] == 1.0
    assert kern.height > 200


def test_nothing_to_link_says_why(tmp_path):
    k = tmp_path / "k.json"
    k.write_text(
        json.dumps(
            {
                "traceEvents": [
                    {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 1, "dur": 2, "args": {}}
                ]
            }
        )
    )
    et = read_execution_trace(HTA_ET)
    tables, _ = ingest([str(k)])
    with pytest.raises(Unsupported, match="no 'Record function id' args and no 'External id'"):
        link(et["nodes"], tables["events"], tables["slices"], tables["kernels"])


def test_save_link_writes_what_it_returns(tmp_path):
    from tracecols.et import save_link

    saved = save_link(HTA_ET, HTA_K, tmp_path / "out")
    assert saved.directory == tmp_path / "out" and saved.et_plus == tmp_path / "out" / "et_plus.json"
    assert [i["kind"] for i in saved.inputs] == ["execution_trace", "kineto"]
    row = pl.read_parquet(saved.directory / "et_link.parquet").row(0, named=True)
    assert row["matched"] == saved.summary["matched"] == 36 and row["method"] == saved.summary["method"]
    assert json.loads(saved.et_plus.read_text())["nodes"]


def test_cli_link_writes_parquet_and_et_plus(tmp_path):
    out = tmp_path / "out"
    r = subprocess.run(
        [EXE, "link", "--et", str(HTA_ET), "--kineto", str(HTA_K), "-o", str(out), "--et-plus", str(tmp_path / "plus.json.gz")],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert "external_id" in r.stdout and "100.00%" in r.stdout
    nodes = pl.read_parquet(out / "et_nodes.parquet")
    assert nodes.height == 38 and nodes["kineto_uid"].is_not_null().sum() == 36
    plus = json.loads(gzip.decompress((tmp_path / "plus.json.gz").read_bytes()))
    orig = json.loads(raw_bytes(HTA_ET))
    host = {n["id"]: n for n in orig["nodes"]}
    gpu = [n for n in plus["nodes"] if n["id"] not in host]
    assert len(gpu) == 4 and all(n["ph"] == "X" and n["cat"] == "kernel" and "stream" in n for n in gpu)
    assert all(n["parent"] in host for n in gpu)
    for n in plus["nodes"]:
        if n["id"] in host:  # host nodes: the original plus timing keys only
            extra = set(n) - set(host[n["id"]])
            assert extra <= {"ts", "inclusive_dur", "exclusive_dur"}
            assert {k: n[k] for k in host[n["id"]]} == host[n["id"]]
    r = subprocess.run(
        [EXE, "link", "--et", str(HTA_K), "--kineto", str(HTA_K), "-o", str(tmp_path / "x")], capture_output=True, text=True
    )
    assert r.returncode == 2 and "Kineto trace" in r.stderr and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "region, want",
    [
        (b'{"a": [1]}], "x": [1, 2], "y": {"z": []}}\n', (10, {"x": [1, 2], "y": {"z": []}})),  # the leftmost
        (b'{"a": 1}]}', (8, {})),
        (b'{"a": 1}], "k": 1, "k": 2}', (8, {"k": 2})),  # the last of duplicate keys, as json.loads
        (b'{"a": "\xc3\xa9"}], "k": "\xe2\x82\xac]"}', (11, {"k": "\u20ac]"})),  # a byte offset
        (b'{"a": 1}], "traceEvents": []}', (27, {})),  # not a tail that names traceEvents
        (b'{"a": 1}], "k": 1} x', None),
        (b'{"a": {"b": [1], "c": 2}}, {"d": 3}', None),  # a ] inside an element
    ],
)
def test_find_tail(region, want):
    from tracecols.read.toplevel import find_tail

    assert find_tail(region) == want


def test_et_whose_cuts_fall_inside_nodes_reads_fast(monkeypatch):
    """Cut at any `}, {`, every block of GEN_ET ends inside a node's attrs, so its last part is the
    whole file, where find_tail looks for the end of `nodes` among thousands of `[]`: that took
    minutes when each candidate's remainder was parsed whole."""
    import time

    import tracecols.read.chunked as chunked

    monkeypatch.setattr(chunked, "_cut_patterns", lambda buf, start: (chunked._CUT,))
    t = time.perf_counter()
    et = read_execution_trace(GEN_ET)
    assert et["nodes"].num_rows == 3483 and et["meta"]["finish_ts"] == 411691
    assert time.perf_counter() - t < 30


def test_reader_parts_make_the_same_tables(monkeypatch):
    """Nodes become Arrow a part at a time: parts of 7 nodes give the tables of one part."""
    import tracecols.read.execution_trace as et_reader

    whole = read_execution_trace(GEN_ET)
    monkeypatch.setattr(et_reader, "NODES_PER_PART", 7)
    parts = read_execution_trace(GEN_ET)
    for key in ("nodes", "inputs", "outputs"):
        assert parts[key].equals(whole[key]), key
    assert parts["nodes"].num_rows == 3483 and parts["inputs"].num_rows > 3483


@pytest.mark.parametrize("et_path, k_path", [(GEN_ET, GEN_K), (HTA_ET, HTA_K), dlrm_pair(0)], ids=["generated", "hta", "dlrm0"])
@pytest.mark.parametrize("streamed", [False, True], ids=["in_memory", "streamed"])
def test_link_reads_only_its_columns_of_the_kineto_trace(monkeypatch, tmp_path, et_path, k_path, streamed):
    """`link` reads the Kineto trace's KINETO_COLUMNS only (read_columns: a projection of the
    tables in memory, or of the Parquet store a big trace is streamed into): the same link as
    from the whole tables, and nothing of the temporary store is left behind."""
    import tempfile

    import tracecols.pipeline as pipeline
    from tracecols.model.et_link import KINETO_COLUMNS
    from tracecols.pipeline import memory_or_disk

    et = read_execution_trace(et_path)
    whole, whole_inputs = ingest([str(k_path)])
    want = link(et["nodes"], whole["events"], whole["slices"], whole["kernels"], et["meta"]["pid"])
    if streamed:
        monkeypatch.setattr(memory_or_disk, "IN_MEMORY_BYTES", 0)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    got, inputs = pipeline.read_columns([str(k_path)], KINETO_COLUMNS)
    assert {k: t.column_names for k, t in got.items()} == {k: list(c) for k, c in KINETO_COLUMNS.items()}
    assert inputs == whole_inputs
    nodes, kern, s = link(et["nodes"], got["events"], got["slices"], got["kernels"], et["meta"]["pid"])
    assert nodes.equals(want[0]) and kern.equals(want[1]) and s == want[2]
    assert s["matched"] > 0
    assert list(tmp_path.iterdir()) == []


def test_kineto_columns_do_not_keep_the_whole_read_alive():
    """The projected columns are copies: a column of a batch imported through Arrow's C data
    interface holds the whole batch (every other column) until it is freed."""
    import pyarrow as pa

    from tracecols.pipeline.memory_or_disk import _copied

    t = pa.table({"a": pa.chunked_array([[1, 2], [3, None]]), "b": ["x", "y", "z", None]})
    c = _copied(t.select(["a"]))
    assert c.equals(t.select(["a"])) and c.column(0).num_chunks == 2
    for old, new in zip(t.column("a").chunks, c.column("a").chunks):
        assert {b.address for b in old.buffers() if b}.isdisjoint(b.address for b in new.buffers() if b)


def test_cli_link_names_an_et_that_is_no_et_before_reading_the_kineto_trace(tmp_path):
    """The ET's head is checked first: a wrong --et fails at once, not after the Kineto read."""
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    r = subprocess.run(
        [EXE, "link", "--et", str(bad), "--kineto", str(tmp_path / "missing.json"), "-o", str(tmp_path / "x")],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2 and "bad.json" in r.stderr and "missing.json" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "x").exists()
