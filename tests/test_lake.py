"""The lake: layout, manifest, atomic commits, re-runs, interrupted runs, executors, URLs, export."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest
from conftest import CORPUS, DATA_TRACE, REPO

import tracecols
from tracecols.fleet.ingest import InlineExecutor, ingest_lake
from tracecols.fleet.work import lake_tables

EXE = shutil.which("tracecols") or os.path.join(os.path.dirname(sys.executable), "tracecols")
SYNTH = REPO.parent / "shared" / "tools" / "synth_trace.py"
DLRM = CORPUS / "param/et_replay/tests/inputs/dlrm_kineto.tar.gz.extracted/dlrm_kineto"
BASE = lake_tables()  # what a lake holds per trace: the base tables and the summaries kept at ingest


def synth_fleet(d, world, steps):
    subprocess.run(
        [sys.executable, str(SYNTH), "--fleet", str(d), "--world", str(world), "--steps", str(steps)],
        check=True,
        capture_output=True,
    )
    return sorted(Path(d).glob("*.json"))


def lake_snapshot(root):
    """Everything a lake is: manifest (as data), its file list, and every table's rows."""
    root = Path(root)
    m = json.loads((root / "_tracecols.json").read_text())
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    tables = {}
    for rel in files:
        if rel.endswith(".parquet"):
            tables[rel] = pq.read_table(root / rel)
    return m, files, tables


def assert_same_lake(a, b):
    ma, fa, ta = lake_snapshot(a)
    mb, fb, tb = lake_snapshot(b)
    assert fa == fb
    assert ma == mb
    for rel in ta:
        assert ta[rel].equals(tb[rel]), rel


def test_single_trace_lake_equals_the_trace(tmp_path):
    out = tmp_path / "lake"
    res = ingest_lake([str(DATA_TRACE)], str(out), jobs=1)
    assert res.ok and len(res.added) == 1
    m = json.loads((out / "_tracecols.json").read_text())
    import hashlib

    (tr,) = m["traces"]
    assert tr["size"] == os.path.getsize(DATA_TRACE)
    assert tr["sha256"] == hashlib.sha256(DATA_TRACE.read_bytes()).hexdigest()
    assert tr["rank"] is None and tr["files"]["events"].startswith("events/rank=__HIVE_DEFAULT_PARTITION__/")
    with pytest.raises(tracecols.TraceError, match=r"is a lake .*tracecols.Lake\(path\)"):
        tracecols.open(str(out))  # typed to give a Trace: a lake is opened by Lake
    lake = tracecols.Lake(str(out))
    direct = tracecols.open(str(DATA_TRACE))
    for name in ("devices", "events", "kernels", "slices", "traces"):
        a = direct.table(name)
        b = lake.table(name).select(a.column_names)
        assert b.schema.equals(a.schema), name
        key = [("uid", "ascending")] if "uid" in a.column_names else [("trace_id", "ascending")]
        if name == "devices":
            key = [("device", "ascending")]
        assert b.sort_by(key).equals(a.sort_by(key)), name
    # the sql/ views work over the lake as over the trace
    q = "select count(*) as n from kernel_stats"
    assert lake.sql(q)["n"][0] == direct.sql(q)["n"][0]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


@pytest.mark.corpus
def test_rerun_skips_unchanged_and_adds_new(tmp_path):
    src = tmp_path / "job"
    src.mkdir()
    files = sorted(DLRM.glob("*.pt.trace.json"))
    for f in files[:3]:
        shutil.copy(f, src)
    out = tmp_path / "lake"
    r1 = ingest_lake([str(src)], str(out), jobs=2)
    assert len(r1.added) == 3
    m1 = json.loads((out / "_tracecols.json").read_text())
    mtimes = {p: p.stat().st_mtime_ns for p in out.rglob("*.parquet")}
    for f in files[3:5]:
        shutil.copy(f, src)
    r2 = ingest_lake([str(src)], str(out), jobs=2)
    assert len(r2.unchanged) == 3 and len(r2.added) == 2 and not r2.replaced
    m2 = json.loads((out / "_tracecols.json").read_text())
    assert m2["traces"][:3] == m1["traces"]  # same ids, same files
    assert [t["trace_id"] for t in m2["traces"]] == [0, 1, 2, 3, 4]
    assert all(p.stat().st_mtime_ns == t for p, t in mtimes.items())  # untouched
    r3 = ingest_lake([str(src)], str(out), jobs=2)
    assert len(r3.unchanged) == 5 and not r3.added
    assert json.loads((out / "_tracecols.json").read_text()) == m2
    # a changed input (same path, other bytes) is re-ingested under its old trace_id
    changed = src / files[1].name
    changed.write_text(changed.read_text() + "\n")
    r4 = ingest_lake([str(src)], str(out), jobs=1)
    assert r4.replaced == [str(changed)] and len(r4.unchanged) == 4
    m4 = json.loads((out / "_tracecols.json").read_text())
    (old,) = [t for t in m2["traces"] if t["path"] == str(changed)]
    (new,) = [t for t in m4["traces"] if t["path"] == str(changed)]
    assert new["trace_id"] == old["trace_id"] and new["sha256"] != old["sha256"]
    assert not (out / old["files"]["events"]).exists() and (out / new["files"]["events"]).exists()
    assert tracecols.Lake(out).sql("select count(distinct trace_id) as n from events")["n"][0] == 5


def test_interrupted_ingest_then_rerun_equals_uninterrupted(tmp_path):
    src = tmp_path / "job"
    synth_fleet(src, world=12, steps=6)
    clean = tmp_path / "clean"
    assert ingest_lake([str(src)], str(clean), jobs=1).ok

    out = tmp_path / "lake"
    proc = subprocess.Popen(
        [EXE, "ingest", str(src), "-o", str(out), "-j", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    manifest = out / "_tracecols.json"
    deadline = time.time() + 120
    n = 0
    while time.time() < deadline and proc.poll() is None:
        if manifest.exists():
            try:
                n = len(json.loads(manifest.read_text())["traces"])
            except ValueError:
                n = 0
            if n >= 2:
                break
        time.sleep(0.01)
    assert proc.poll() is None, "ingest finished before it could be interrupted; make the job bigger"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    proc.stderr.close()

    # what the killed run left: only whole traces are in the lake
    m = json.loads(manifest.read_text())
    assert 2 <= len(m["traces"]) < 12
    assert len(m["reserved"]) == 12 - len(m["traces"])  # ids of the rest are already planned
    for t in m["traces"]:
        assert sorted(t["files"]) == list(BASE) and all((out / rel).is_file() for rel in t["files"].values())
    lake = tracecols.Lake(out)
    assert lake.sql("select count(distinct trace_id) as n from events")["n"][0] == len(m["traces"])
    # a leftover of a trace whose commit never happened (as if killed between write and commit)
    stray = out / "events" / "rank=11" / "t000999-deadbeef0000.parquet"
    stray.parent.mkdir(parents=True, exist_ok=True)
    stray.write_bytes(b"PAR1 half written")

    res = ingest_lake([str(src)], str(out), jobs=2)
    assert res.ok and len(res.unchanged) == len(m["traces"]) and len(res.added) == 12 - len(m["traces"])
    assert str(stray.relative_to(out)) in res.swept
    assert_same_lake(out, clean)


def test_synthetic_64_ranks(tmp_path):
    src = tmp_path / "job"
    synth_fleet(src, world=64, steps=1)
    out = tmp_path / "lake"
    res = ingest_lake([str(src)], str(out), jobs=2)
    assert res.ok and len(res.added) == 64
    L = tracecols.Lake(out)
    assert L.ranks == list(range(64))
    t = L.sql("select count(*) as n, count(distinct rank) as r, min(world_size) as w, max(world_size) as w2 from traces")
    assert t.row(0) == (64, 64, 64, 64)
    # rank r's file is rank<r>.pt.trace.json, and distributedInfo agrees
    for p, r in L.sql("select path, rank from traces").rows():
        assert Path(p).name == f"rank{r}.pt.trace.json"
    # each allreduce is matched across all 64 ranks
    sk = L.sql("select * from collective_skew")
    assert sk.height >= 1 and set(sk["ranks"]) == {64} and all(sk["complete"])
    c = L.sql("select distinct collective, group_size, bus_factor from collectives").rows()
    assert c == [("allreduce", 64, pytest.approx(2 * 63 / 64))]
    # trace_ids follow natural path order: rank2 before rank10
    ids = dict(L.sql("select rank, trace_id from traces").rows())
    assert [ids[r] for r in range(64)] == list(range(64))


@pytest.mark.corpus
def test_dask_local_cluster_and_memory_urls_give_the_same_lake(tmp_path):
    distributed = pytest.importorskip("distributed")
    import fsspec

    files = sorted(DLRM.glob("*.pt.trace.json"))[:4]
    local = tmp_path / "lake"
    assert ingest_lake([str(f) for f in files], str(local), jobs=2).ok
    ref = tracecols.Lake(local).sql("select rank, count(*) as n, sum(dur_ns) as d from events group by 1 order by 1")

    mem = fsspec.filesystem("memory")
    for f in files:
        mem.pipe(f"/fleet-in/{f.name}", f.read_bytes())
    # workers are threads of this process (so they share memory://), reached over loopback TCP
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, protocol="tcp://", host="127.0.0.1", dashboard_address=None
    ) as cluster:
        with distributed.Client(cluster.scheduler_address) as client:
            res = ingest_lake(["memory://fleet-in/"], "memory://fleet-lake", executor=client.get_executor())
            assert set(client.run(lambda: 1)) and len(client.scheduler_info()["workers"]) == 2
        # the CLI's --executor dask, against the same scheduler, on local paths
        r = subprocess.run(
            [
                EXE,
                "ingest",
                *map(str, files),
                "-o",
                str(tmp_path / "cli-lake"),
                "--executor",
                "dask",
                "--scheduler",
                cluster.scheduler_address,
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert r.returncode == 0, r.stderr
    assert res.ok and len(res.added) == 4
    assert_same_lake(tmp_path / "cli-lake", local)
    L = tracecols.Lake("memory://fleet-lake")
    assert L.sql("select rank, count(*) as n, sum(dur_ns) as d from events group by 1 order by 1").equals(ref)
    assert [(t["rank"], t["sha256"], t["size"]) for t in L.traces] == [
        (t["rank"], t["sha256"], t["size"]) for t in tracecols.Lake(local).traces
    ]
    # a re-run through another executor sees the same inputs as unchanged
    res2 = ingest_lake(["memory://fleet-in/"], "memory://fleet-lake", executor=InlineExecutor())
    assert len(res2.unchanged) == 4 and not res2.added
    mem.rm("/fleet-in", recursive=True)
    mem.rm("/fleet-lake", recursive=True)


def test_discovery_skips_other_formats_with_a_note(tmp_path):
    src = tmp_path / "mixed"
    src.mkdir()
    shutil.copy(DATA_TRACE, src / "worker0.1700000000000.pt.trace.json.gz")
    shutil.copy(DATA_TRACE, src / "renamed_trace.json.gz")  # not a tensorboard name: sniffed
    (src / "et.json").write_text(json.dumps({"schema": "1.0.1", "pid": 1, "nodes": []}))
    (src / "config.json").write_text(json.dumps({"lr": 0.1}))
    (src / "notes.txt").write_text("hello")
    r = subprocess.run([EXE, "ingest", str(src), "-o", str(tmp_path / "lake"), "-j", "1"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = r.stderr.strip().splitlines()
    assert any("et.json" in ln and "Execution Trace" in ln for ln in lines)
    assert any("config.json" in ln and "skipped" in ln for ln in lines)
    assert not any("notes.txt" in ln for ln in lines)
    assert "2 added" in lines[-1]
    assert "\r" not in r.stderr and "━" not in r.stderr  # no progress bar when stderr is not a terminal
    m = json.loads((tmp_path / "lake" / "_tracecols.json").read_text())
    assert sorted(Path(t["path"]).name for t in m["traces"]) == [
        "renamed_trace.json.gz",
        "worker0.1700000000000.pt.trace.json.gz",
    ]
    r = subprocess.run(
        [EXE, "ingest", str(tmp_path / "nothing-here"), "-o", str(tmp_path / "l2")], capture_output=True, text=True
    )
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1


def test_export_duckdb_file_of_views(tmp_path):
    out = tmp_path / "lake"
    assert ingest_lake([str(DATA_TRACE)], str(out), jobs=1).ok
    db = tmp_path / "job.duckdb"
    r = subprocess.run([EXE, "export", str(out), "--duckdb", str(db)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    con = duckdb.connect(str(db), read_only=True)
    views = {v for (v,) in con.execute("select view_name from duckdb_views() where not internal").fetchall()}
    tables = {v for (v,) in con.execute("select table_name from duckdb_tables() where not internal").fetchall()}
    # the big tables are views over the lake's files; the small metadata ones (redacted) and the
    # device peak table are stored in the file, so that op_perf and kernel_perf exist there too
    assert {"events", "kernels", "kernel_stats", "rank_summary", "collectives", "op_perf", "kernel_perf"} <= views
    assert {"traces", "devices", "device_specs"} <= tables
    # the private helpers are in a schema apart, and every public view still reads them
    listed = con.execute("select schema_name, view_name from duckdb_views() where not internal").fetchall()
    assert {v for s, v in listed if s == "main" and v.startswith("_")} == set()
    assert {"_launch_queue", "_op_time"} <= {v for s, v in listed if s == "tracecols_internal"}
    assert {s for s, _ in listed} == {"main", "tracecols_internal"}
    for v in sorted(v for s, v in listed if s == "main"):
        con.execute(f'select count(*) from "{v}"').fetchone()
    assert con.execute("select count(*) from events").fetchone()[0] == 2551
    assert (
        con.execute("select count(*) from kernels").fetchone()[0]
        == tracecols.open(str(DATA_TRACE)).sql("select count(*) as n from kernels")["n"][0]
    )
    con.close()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_lake_refuses_foreign_directory(tmp_path):
    d = tmp_path / "precious"
    d.mkdir()
    (d / "thesis.tex").write_text("x")
    r = subprocess.run([EXE, "ingest", str(DATA_TRACE), "-o", str(d)], capture_output=True, text=True)
    assert r.returncode == 2 and "not a tracecols lake" in r.stderr
    assert [p.name for p in d.iterdir()] == ["thesis.tex"]


def test_an_empty_lake_is_one_clear_line(tmp_path):
    # a manifest with no committed trace (ingest never writes one, but a lake may be copied mid-way)
    (tmp_path / "_tracecols.json").write_text(json.dumps({"layout": "lake", "tables": ["events"], "traces": []}))
    r = subprocess.run([EXE, "sql", str(tmp_path), "select count(*) from events"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "empty lake" in r.stderr
    with pytest.raises(tracecols.TraceError, match="empty lake"):
        tracecols.Lake(tmp_path)
