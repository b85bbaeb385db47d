"""`tracecols merge`: every rank on one timeline, one Chrome-trace file.

Each rank's events are checked against the original file read with the `json` module: the
same count, the same time span shifted by the offset the output states, every event on a
process named after its rank. The clock rule is checked by hand: baseTimeNanoseconds moved
by a planted amount, or the end of the first collective that every rank ran (from the plain
reference of test_fleet).
"""

import gzip
import json
from decimal import Decimal
from pathlib import Path

import pytest
from conftest import CORPUS
from test_fleet import DLRM, reference
from test_secrets import run

import tracecols
from tracecols.fleet.merge import merge

pytestmark = pytest.mark.corpus

BASE_TIME = CORPUS / "HolisticTraceAnalysis/tests/data/triton_example/triton_example.json.gz"
HF = "hf_Q7xLmN2pR4sT6vW8yZ0aB1cD3eF5gH9jK2"


def _ns(v):
    return int(Decimal(str(v)) * 1000)


def _load(path):
    data = Path(path).read_bytes()
    return json.loads(gzip.decompress(data) if str(path).endswith(".gz") else data, parse_float=Decimal)


def _number(v):
    if isinstance(v, Decimal):
        return int(v) if v == v.to_integral_value() else float(v)
    raise TypeError(type(v))


def _span(events):
    """(count, first start, last end) in ns of a list of events (events without ts count, not timed)."""
    timed = [e for e in events if "ts" in e]
    return (
        len(events),
        min(_ns(e["ts"]) for e in timed),
        max(_ns(e["ts"]) + _ns(e.get("dur", 0)) for e in timed),
    )


def _by_rank(doc):
    out = {}
    for e in doc["traceEvents"]:
        r = e.get("args", {}).get("rank")
        if r is not None:
            out.setdefault(r, []).append(e)
    return out


@pytest.fixture(scope="module")
def dlrm(tmp_path_factory):
    out = tmp_path_factory.mktemp("merge") / "job.json.gz"
    r = run("merge", DLRM, "-o", out, "--overlay", "critical-path,queue-depth,memory-bw")
    assert r.returncode == 0, r.stderr
    return out, r


def test_dlrm_each_rank_back(dlrm):
    out, r = dlrm
    doc = _load(out)  # valid JSON, gzip by the name
    meta = doc["tracecols_merge"]
    assert meta["alignment"]["rule"] == "collective end"
    assert "clocks aligned by collective end" in r.stderr
    offsets = {x["rank"]: x["offset_ns"] for x in meta["ranks"]}
    assert sorted(offsets) == list(range(8))
    got = _by_rank(doc)
    named = [e["pid"] for e in doc["traceEvents"] if e.get("ph") == "M" and e["name"] == "process_name"]
    sorted_ = [e["pid"] for e in doc["traceEvents"] if e.get("ph") == "M" and e["name"] == "process_sort_index"]
    assert len(named) == len(set(named)) == len(sorted_) == len(set(sorted_)) and set(named) == set(sorted_)
    assert {e["pid"] for e in doc["traceEvents"]} == set(named)  # every process named once
    names = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"] if e.get("ph") == "M" and e["name"] == "process_name"}
    for p in sorted(DLRM.glob("*.pt.trace.json")):
        orig = _load(p)
        rank = orig["distributedInfo"]["rank"]
        n, start, end = _span(orig["traceEvents"])
        assert _span(got[rank]) == (n, start + offsets[rank], end + offsets[rank])
        assert {x["distributedInfo"]["rank"] for x in meta["ranks"] if x["rank"] == rank} == {rank}
        for e in got[rank]:  # every event on a process of its rank
            assert names[e["pid"]].startswith(f"rank {rank} · ")
            if e.get("cat") == "kernel":
                assert names[e["pid"]] == f"rank {rank} · GPU {e['args']['device']}"
            if e.get("cat") == "cpu_op":
                assert names[e["pid"]] == f"rank {rank} · CPU"
    # the rule, by hand: the first alltoall (the first collective of every rank) ends at one time
    ends = {}
    for p in sorted(DLRM.glob("*.pt.trace.json")):
        rank, _, _, colls = reference(p)
        first = min((c for c in colls if c[0] == "alltoall"), key=lambda c: c[2])
        ends[rank] = first[2] + first[3] + offsets[rank]
    assert len(set(ends.values())) == 1 and offsets[0] == 0


def test_dlrm_reads_back_with_tracecols(dlrm):
    out, _ = dlrm
    doc = _load(out)
    offsets = {x["rank"]: x["offset_ns"] for x in doc["tracecols_merge"]["ranks"]}
    t = tracecols.open(out)
    rows = t.sql("""SELECT json_extract_string(args, '$.rank')::INTEGER AS r, count(*) AS n,
                           min(ts_ns) AS t0, max(coalesce(end_ns, ts_ns)) AS t1
                    FROM events WHERE json_extract_string(args, '$.rank') IS NOT NULL GROUP BY 1 ORDER BY 1""").rows()
    assert [r[0] for r in rows] == list(range(8))
    for p in sorted(DLRM.glob("*.pt.trace.json")):
        orig = _load(p)
        rank = orig["distributedInfo"]["rank"]
        n, start, end = _span(orig["traceEvents"])
        assert rows[rank][1:] == (n, start + offsets[rank], end + offsets[rank])
    assert t.sql("SELECT world_size FROM traces").item() == 8
    # correlations renumbered per rank: each device event links to a launch of its own rank,
    # as many as in the original (a device event whose correlation a runtime call there has)
    links = t.sql("""SELECT json_extract_string(e.args, '$.rank')::INTEGER AS r, count(k.launch_uid) AS linked,
                            count(*) FILTER (WHERE json_extract_string(l.args, '$.rank')::INTEGER <> r) AS other
                     FROM kernels k JOIN events e ON e.uid = k.uid LEFT JOIN events l ON l.uid = k.launch_uid
                     GROUP BY 1 ORDER BY 1""").rows()
    for p in sorted(DLRM.glob("*.pt.trace.json")):
        ev = _load(p)["traceEvents"]
        rank = _load(p)["distributedInfo"]["rank"]
        launches = {e["args"]["correlation"] for e in ev if e.get("cat") == "cuda_runtime" and "correlation" in e["args"]}
        device = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
        assert links[rank] == (rank, sum(e["args"].get("correlation") in launches for e in device), 0)


def test_dlrm_overlays(dlrm):
    out, r = dlrm
    doc = _load(out)
    names = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"] if e.get("ph") == "M" and e["name"] == "process_name"}
    spans = {rank: _span(evs) for rank, evs in _by_rank(doc).items()}
    path = [e for e in doc["traceEvents"] if e.get("cat") == "critical_path"]
    queue = [e for e in doc["traceEvents"] if e.get("ph") == "C" and e["name"].endswith(" queue")]
    assert path and queue
    for e in path:
        rank = int(names[e["pid"]].split(" ")[1])
        assert names[e["pid"]] == f"rank {rank} · critical path"
        assert spans[rank][1] <= _ns(e["ts"]) and _ns(e["ts"]) + _ns(e["dur"]) <= spans[rank][2]
    for e in queue:
        assert " · GPU " in names[e["pid"]] and e["args"]["length"] >= 0
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in doc["traceEvents"] if e.get("name") == "thread_name"}
    steps = {int(e["name"].split("#")[1]) for e in doc["traceEvents"] if e.get("name", "").startswith("ProfilerStep#")}
    assert {threads[e["pid"], e["tid"]] for e in path} == {f"ProfilerStep#{s}" for s in steps}
    assert "critical-path overlay" in r.stdout.decode()


def test_base_time_alignment_and_flow_ids(tmp_path):
    """Two ranks of one trace, the second's baseTimeNanoseconds 5.000123 ms later; every flow
    id is the same in both (a planted collision): they stay two flows each."""
    orig = _load(BASE_TIME)
    base = int(orig["baseTimeNanoseconds"])
    shift = 5_000_123
    paths = []
    for rank in (0, 1):
        doc = _load(BASE_TIME)
        doc["distributedInfo"] = {"backend": "nccl", "rank": rank, "world_size": 2}
        doc["baseTimeNanoseconds"] = base + rank * shift
        p = tmp_path / f"rank{rank}.json"
        p.write_text(json.dumps(doc, default=_number))
        paths.append(p)
    out = tmp_path / "job.json"
    r = run("merge", *paths, "-o", out)
    assert r.returncode == 0, r.stderr
    doc = _load(out)
    assert doc["baseTimeNanoseconds"] == base
    assert doc["tracecols_merge"]["alignment"]["rule"] == "baseTimeNanoseconds"
    assert [x["offset_ns"] for x in doc["tracecols_merge"]["ranks"]] == [0, shift]
    got = _by_rank(doc)
    n, start, end = _span(orig["traceEvents"])
    assert _span(got[0]) == (n, start, end) and _span(got[1]) == (n, start + shift, end + shift)
    # each flow of each rank comes back whole, under an id no other rank uses
    want = sorted(_flows(orig["traceEvents"], 0).values())
    assert len(want) >= 2
    ranks_of_id = {}
    for rank, offset in ((0, 0), (1, shift)):
        assert sorted(_flows(got[rank], offset).values()) == want
        for e in got[rank]:
            if e.get("ph") in ("s", "f"):
                ranks_of_id.setdefault((e["cat"], e["id"]), set()).add(rank)
    assert len(ranks_of_id) == 2 * len(want) and all(len(v) == 1 for v in ranks_of_id.values())
    t = tracecols.open(out)
    assert t.sql("SELECT count(*) FROM flows").item() == 2 * tracecols.open(BASE_TIME).sql("SELECT count(*) FROM flows").item()


def _flows(events, offset):
    """{(cat, id): sorted (phase, tid, ts ns less `offset`) of its events}."""
    out = {}
    for e in events:
        if e.get("ph") in ("s", "f"):
            out.setdefault((e["cat"], e["id"]), []).append((e["ph"], e["tid"], _ns(e["ts"]) - offset))
    return {k: sorted(v) for k, v in out.items()}


def test_errors_are_one_line_and_leave_nothing(tmp_path):
    out = tmp_path / "job.json.gz"
    r = run("merge", DLRM, "-o", out, "--align", "base-time")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--align: unsupported: base-time" in r.stderr
    r = run("merge", DLRM, "-o", out, "--overlay", "nonsense")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "nonsense" in r.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    r = run("merge", empty, "-o", out)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "holds no trace" in r.stderr
    empty.rmdir()
    blocker = tmp_path / "file"
    blocker.write_text("x")
    r = run("merge", DLRM, "-o", blocker / "job.json")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "cannot write" in r.stderr
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["file"]
    src = tmp_path / "t.json.gz"
    src.write_bytes(BASE_TIME.read_bytes())
    r = run("merge", src, "-o", src)
    assert r.returncode == 2 and "is an input of this command" in r.stderr
    assert src.read_bytes() == BASE_TIME.read_bytes()


def test_secrets_redacted_unless_kept(tmp_path):
    doc = _load(BASE_TIME)
    op = next(e for e in doc["traceEvents"] if e.get("ph") == "X")
    op["name"] = f"load {HF}"
    op.setdefault("args", {})["api_key"] = "argsecretplant8"
    src = tmp_path / "t.json"
    src.write_text(json.dumps(doc, default=_number))
    out = tmp_path / "a.json"
    assert run("merge", src, "-o", out).returncode == 0
    text = out.read_text()
    assert HF not in text and "argsecretplant8" not in text and "<redacted>" in text
    assert run("merge", src, "-o", out, "--keep-secrets").returncode == 0
    text = out.read_text()
    assert HF in text and "argsecretplant8" in text
    # tables read keeping their secrets: the written text is redacted on the way out
    merge(tracecols.open(src, keep_secrets=True), out)
    text = out.read_text()
    assert HF not in text and "argsecretplant8" not in text
    json.loads(text)


def test_lake_merges_as_its_traces(tmp_path):
    """A lake of three ranks is merged from its Parquet as the three files are from theirs."""
    from tracecols.fleet.ingest import ingest_lake

    files = sorted(DLRM.glob("*.pt.trace.json"))[:3]
    lake = tmp_path / "lake"
    assert ingest_lake([str(f) for f in files], str(lake), jobs=1).ok
    a, b = tmp_path / "lake.json", tmp_path / "files.json"
    assert run("merge", lake, "-o", a).returncode == 0
    assert run("merge", *files, "-o", b).returncode == 0
    from_lake, from_files = _load(a), _load(b)
    assert from_lake["traceEvents"] == from_files["traceEvents"]
    assert [x["rank"] for x in from_lake["tracecols_merge"]["ranks"]] == [0, 1, 2]


def test_repeated_ranks_are_named_by_trace(tmp_path):
    """Two runs of rank 0 (a lake of several runs): two processes each, named by trace, and
    each event keeps rank 0 in its args."""
    paths = []
    for i in (0, 1):
        doc = _load(BASE_TIME)
        doc["distributedInfo"] = {"backend": "nccl", "rank": 0, "world_size": 2}
        p = tmp_path / f"run{i}.json"
        p.write_text(json.dumps(doc, default=_number))
        paths.append(p)
    out = tmp_path / "job.json"
    assert run("merge", *paths, "-o", out).returncode == 0
    doc = _load(out)
    labels = [x["label"] for x in doc["tracecols_merge"]["ranks"]]
    assert labels == ["trace 0 (rank 0)", "trace 1 (rank 0)"]
    names = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"] if e.get("ph") == "M" and e["name"] == "process_name"}
    n = len(_load(BASE_TIME)["traceEvents"])
    for label in labels:
        mine = [e for e in doc["traceEvents"] if names[e["pid"]].startswith(label + " · ") and "rank" in e["args"]]
        assert len(mine) == n and {e["args"]["rank"] for e in mine} == {0}


def test_slow_steps_overlay_marks_the_steps_a_robust_z_calls_slow(tmp_path):
    """base_a (an H200 training run, tests/data/runs): the steps whose duration lies more than
    3.5 robust spreads above the median step, by a plain reference over the JSON's ProfilerStep
    durations, are the slices of the overlay, at their times."""
    import statistics

    src = Path(__file__).parent / "data" / "runs" / "base_a.pt.trace.json.gz"
    with gzip.open(src, "rt") as f:
        steps = [
            e for e in json.load(f)["traceEvents"] if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")
        ]
    durs = [round(Decimal(str(e["dur"])) * 1000) for e in steps]
    med = statistics.median(durs)
    spread = max(1.4826 * statistics.median(abs(d - med) for d in durs), 0.01 * float(med))
    want = sorted((e["ts"], int(e["name"].split("#")[1])) for e, d in zip(steps, durs) if (d - float(med)) / spread > 3.5)
    assert want  # the warm-up steps and one more are slow in this run

    out = tmp_path / "m.json"
    merge(tracecols.open(src), out, overlays=("slow-steps",))
    doc = json.loads(out.read_text())
    got = sorted((e["ts"], e["args"]["step"]) for e in doc["traceEvents"] if e.get("cat") == "tracecols_slow_step")
    assert [(pytest.approx(ts, abs=1e-3), f"ProfilerStep#{n}") for ts, n in want] == got
    assert doc["tracecols_merge"]["overlays"] == ["slow-steps"]
