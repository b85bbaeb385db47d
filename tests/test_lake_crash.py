"""Crash safety of `tracecols ingest -o LAKE` (issue #8).

- SIGKILL at seeded random points: after each kill the lake reads and holds exactly the ranks
  whose commit happened, each one whole; a re-run completes it to the uninterrupted lake.
- Concurrent ingests into one local lake are serialised by LAKE/_tracecols.lock; readers do
  not need the lock, and the lock file is not part of the lake.
- On URLs (no lock) a run that finds the manifest changed by another stops instead of
  overwriting it; a re-run repairs a trace whose files went missing.
"""

import fcntl
import json
import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import DATA_TRACE
from test_lake import BASE, EXE, assert_same_lake, lake_snapshot, synth_fleet

import tracecols
from tracecols.fleet.ingest import InlineExecutor, Reporter, ingest_lake
from tracecols.store import lake as store

WORLD = 8
LOCK = "_tracecols.lock"


class Notes(Reporter):
    def __init__(self):
        self.lines = []

    def note(self, line):
        self.lines.append(line)


def cli(*args, env=None, timeout=120):
    return subprocess.run(
        [EXE, *map(str, args)], capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})}
    )


def fingerprint(lake):
    """{table: [(rank, rows, checksum of the rows without trace_id)]} over every base table."""
    out = {}
    for name in BASE:
        if name not in lake.manifest["tables"] or name not in lake.tables:
            out[name] = []
            continue
        out[name] = lake.sql(
            f"select rank, count(*) as n, sum(hash(t)::hugeint) as h "
            f"from (select * exclude (trace_id) from {name}) t group by rank order by rank"
        ).rows()
    return out


def only(fp, ranks):
    return {name: [row for row in rows if row[0] in ranks] for name, rows in fp.items()}


def check_lake(out, ref_fp, ref_records):
    """The ranks the lake at `out` holds, after checking that it reads and each of them is whole."""
    out = Path(out)
    if not (out / "_tracecols.json").exists():
        # killed before its first commit: no lake yet, and nothing there an ingest would refuse
        if out.exists():
            names = {p.name for p in out.iterdir()}
            assert names <= set(BASE) | {LOCK} | {n for n in names if n.startswith("._tracecols.json.tmp-")}, names
        with pytest.raises(tracecols.TraceError, match="not a tracecols lake"):
            tracecols.Lake(out)
        return set()
    m = json.loads((out / "_tracecols.json").read_text())  # whole: written under a temporary name, renamed
    ranks = [t["rank"] for t in m["traces"]]
    ids = [t["trace_id"] for t in m["traces"]]
    assert len(set(ranks)) == len(ranks) and len(set(ids)) == len(ids) and ranks
    assert not set(ids) & set(m["reserved"].values())
    assert m["next_trace_id"] > max(ids + list(m["reserved"].values()))
    assert [i["path"] for i in m["inputs"]] == [t["path"] for t in m["traces"]]
    for t in m["traces"]:  # every listed rank has all its tables, and they are the right bytes' tables
        assert sorted(t["files"]) == list(BASE)
        assert all((out / rel).is_file() for rel in t["files"].values())
        assert (t["size"], t["sha256"], t["rank"]) == ref_records[t["path"]]
    lake = tracecols.Lake(out)
    assert lake.ranks == sorted(ranks)
    # what queries see: exactly these ranks, each with the rows (and row checksums) of the reference
    assert fingerprint(lake) == only(ref_fp, set(ranks))
    assert lake.sql("select count(distinct trace_id) as n from events")["n"][0] == len(ranks)
    return set(ranks)


def reference(src, out):
    """The uninterrupted lake, written by the CLI (-j 1) like the runs it is compared with;
    returns the run's own time (after start-up)."""
    r = cli("ingest", src, "-o", out, "-j", "1")
    assert r.returncode == 0, r.stderr
    return float(r.stderr.strip().splitlines()[-1].rsplit(" in ", 1)[1].split()[0])


def wait_for_lock(proc, out, limit):
    """Wait until `proc` holds the lake's lock (its pid is in the lock file), or has ended."""
    lock = Path(out) / LOCK
    deadline = time.monotonic() + limit
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            if lock.read_text().split()[:1] == [str(proc.pid)]:
                return True
        except (OSError, IndexError):
            pass
        time.sleep(0.005)
    return False


def test_sigkill_at_random_points_then_rerun_completes(tmp_path):
    all_ranks = set(range(6))  # ranks
    src = tmp_path / "job"
    synth_fleet(src, world=len(all_ranks), steps=1)
    ref = tmp_path / "ref"
    duration = reference(src, ref)
    ref_lake = tracecols.Lake(ref)
    assert ref_lake.ranks == sorted(all_ranks)
    ref_fp = fingerprint(ref_lake)
    ref_records = {t["path"]: (t["size"], t["sha256"], t["rank"]) for t in ref_lake.traces}

    rng = random.Random(2024)
    out = tmp_path / "lake"
    seen = []
    before = set()
    for i in range(6):
        jobs = rng.choice(["1", "1", "2"])
        # most points: a time into the run proper (from when it holds the lock), over the
        # reference run's length; some: a time after the process started (start-up, discovery)
        early = rng.random() < 0.2
        at = rng.uniform(0.0, 1.0 if early else 1.1 * duration)
        with open(tmp_path / f"stderr{i}", "w") as err:
            proc = subprocess.Popen(
                [EXE, "ingest", str(src), "-o", str(out), "-j", jobs],
                stdout=subprocess.DEVNULL,
                stderr=err,
                start_new_session=True,
            )
            if not early:
                wait_for_lock(proc, out, 60)
            try:
                rc = proc.wait(timeout=at)  # the run ended before its kill time: still a valid point
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)  # the driver and its pool workers
                proc.wait()
                rc = "killed"
        assert rc in ("killed", 0), (tmp_path / f"stderr{i}").read_text()
        committed = check_lake(out, ref_fp, ref_records)
        assert committed >= before  # a resumed run never loses what an earlier one committed
        assert rc == "killed" or committed == all_ranks
        # the kernel released the killed run's lock: a leftover lock file is free to take
        if (out / LOCK).exists():
            with open(out / LOCK, "rb") as f:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if i in (0, 4):  # readers need no lock; the CLI reads the same ranks
            r = cli("sql", out, "select count(distinct rank) as n from events", "--format", "csv")
            if committed:
                assert r.returncode == 0 and r.stdout.split() == ["n", str(len(committed))], r.stderr
            else:
                assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        seen.append(("start" if early else "lock", round(at, 2), jobs, rc, len(committed)))
        before = committed
        if committed == all_ranks:  # complete: start the next point on a fresh lake
            shutil.rmtree(out)
            before = set()
    print("kill points (from, s, -j, outcome, ranks committed):", seen)

    # the re-run after a kill that left a partial lake: exactly the uninterrupted lake
    if not before:  # (the points above left an empty or complete lake: one more kill, after a commit)
        proc = subprocess.Popen(
            [EXE, "ingest", str(src), "-o", str(out), "-j", "1"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        manifest = out / "_tracecols.json"
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            if manifest.exists() and len(json.loads(manifest.read_text())["traces"]) >= 1:
                break
            time.sleep(0.01)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        check_lake(out, ref_fp, ref_records)
    r = cli("ingest", src, "-o", out, "-j", "2")
    assert r.returncode == 0, r.stderr
    assert "waiting" not in r.stderr  # no stale lock
    assert_same_lake(out, ref)  # manifest, file list and every file's rows
    assert check_lake(out, ref_fp, ref_records) == all_ranks
    assert not (out / LOCK).exists()


def test_concurrent_ingests_are_serialised_by_the_lock(tmp_path):
    src = tmp_path / "job"
    files = synth_fleet(src, world=WORLD, steps=1)
    files.sort(key=lambda p: int(p.name[len("rank") :].split(".")[0]))
    ref = tmp_path / "ref"
    reference(src, ref)
    ref_lake = tracecols.Lake(ref)
    ref_fp = fingerprint(ref_lake)
    ref_records = {t["path"]: (t["size"], t["sha256"], t["rank"]) for t in ref_lake.traces}

    out = tmp_path / "lake"
    # hold the lock while both start, so that both are surely waiting when it is let go
    held = store.LakeLock(store.LakeFS(out)).acquire()
    assert (out / LOCK).read_text().split()[0] == str(os.getpid())
    procs, errs = [], []
    for k, part in enumerate((files[:5], files[3:])):  # ranks 0-4 and 3-7: ranks 3 and 4 in both
        errs.append(open(tmp_path / f"stderr{k}", "w+"))  # noqa: SIM115 - closed after the processes end
        procs.append(
            subprocess.Popen(
                [EXE, "ingest", *map(str, part), "-o", str(out), "-j", "1"],
                stdout=subprocess.DEVNULL,
                stderr=errs[-1],
                start_new_session=True,
            )
        )
    waiting = f"tracecols: waiting for another ingest into {out} (pid {os.getpid()})"
    deadline = time.monotonic() + 60
    try:
        while not all(waiting in (tmp_path / f"stderr{k}").read_text() for k in range(2)):
            assert time.monotonic() < deadline and all(p.poll() is None for p in procs), [
                (tmp_path / f"stderr{k}").read_text() for k in range(2)
            ]
            time.sleep(0.05)
        assert not (out / "_tracecols.json").exists()  # neither got in
    finally:
        held.release()
    rcs = [p.wait(timeout=120) for p in procs]
    stderr = [e.seek(0) or e.read() for e in errs]
    for e in errs:
        e.close()
    assert rcs == [0, 0], stderr
    summaries = sorted(s.strip().splitlines()[-1].split(": ", 2)[2] for s in stderr)
    assert [s.split(" in ")[0] for s in summaries] == ["3 added, 2 unchanged", "5 added, 0 unchanged"]

    # every rank once, each whole, with the reference's rows; the manifest is consistent
    assert check_lake(out, ref_fp, ref_records) == set(range(WORLD))
    m = json.loads((out / "_tracecols.json").read_text())
    assert sorted(t["trace_id"] for t in m["traces"]) == list(range(WORLD))
    assert m["reserved"] == {} and m["next_trace_id"] == WORLD
    listed = {rel for t in m["traces"] for rel in t["files"].values()}
    on_disk = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}
    assert on_disk == listed | {"_tracecols.json"}  # no duplicate, orphan or lock file left

    # while an ingest holds the lock: readers go ahead, the lock file is not a table, and an
    # ingest that may not wait fails at once with one line
    before = lake_snapshot(out)
    with store.LakeLock(store.LakeFS(out)):
        assert (out / LOCK).exists()
        lake = tracecols.Lake(str(out))
        assert isinstance(lake, tracecols.Lake) and lake.ranks == list(range(WORLD))
        assert not [n for n in lake.tables if "lock" in n or n.startswith("_tracecols")]
        r = cli("sql", out, "select count(*) as n from traces", "--format", "csv")
        assert r.returncode == 0 and r.stdout.split() == ["n", str(WORLD)], r.stderr
        t0 = time.monotonic()
        r = cli("ingest", src, "-o", out, env={"TRACECOLS_LOCK_TIMEOUT": "0"})
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert f"{out}: lake busy: another ingest (pid {os.getpid()})" in r.stderr
        assert time.monotonic() - t0 < 30
    after = lake_snapshot(out)  # untouched by the refused run
    assert after[:2] == before[:2] and all(after[2][rel].equals(t) for rel, t in before[2].items())

    # a lock file left by a killed ingest (no process holds it) neither blocks nor is in the way
    (out / LOCK).write_text("999999 elsewhere\n")
    assert tracecols.Lake(out).ranks == list(range(WORLD))
    res = ingest_lake([str(src)], str(out), jobs=1, lock_timeout=0)
    assert res.ok and len(res.unchanged) == WORLD and not res.added
    assert not (out / LOCK).exists()
    fresh = tmp_path / "fresh"  # a directory holding only a leftover lock file is written into
    fresh.mkdir()
    (fresh / LOCK).write_text("")
    assert ingest_lake([str(files[0])], str(fresh), lock_timeout=0).ok
    assert sorted(p.name for p in fresh.iterdir()) == ["_tracecols.json", *sorted(BASE)]
    # a run that finds nothing to ingest leaves no directory (nor lock file) behind
    (tmp_path / "empty-dir").mkdir()
    assert not ingest_lake([str(tmp_path / "empty-dir")], str(tmp_path / "none"), jobs=1).added
    assert not (tmp_path / "none").exists()


def test_lock_timeout_setting(tmp_path, monkeypatch, capsys):
    from tracecols.cli import main

    monkeypatch.setenv("TRACECOLS_LOCK_TIMEOUT", "soon")
    assert main(["ingest", str(tmp_path), "-o", str(tmp_path / "lake")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "TRACECOLS_LOCK_TIMEOUT" in err[0] and "'soon'" in err[0]
    assert not (tmp_path / "lake").exists()


def test_in_process_ingests_wait_for_each_other(tmp_path):
    """The lock is per open file, so two runs in one process (threads) are serialised too."""
    import threading

    src = tmp_path / "job"
    files = synth_fleet(src, world=4, steps=1)
    out = tmp_path / "lake"
    notes = Notes()
    held = store.LakeLock(store.LakeFS(out)).acquire()
    results = []
    threads = [
        threading.Thread(
            target=lambda part=part: results.append(
                ingest_lake([str(f) for f in part], str(out), executor=InlineExecutor(), reporter=notes)
            )
        )
        for part in (files[:3], files[1:])
    ]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 30
    while sum("waiting for another ingest" in n for n in notes.lines) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    held.release()
    for t in threads:
        t.join(60)
    assert sum("waiting for another ingest" in n for n in notes.lines) == 2
    assert all(r.ok for r in results) and sorted(len(r.added) for r in results) == [1, 3]
    assert tracecols.Lake(out).ranks == [0, 1, 2, 3]
    with pytest.raises(store.LakeBusy, match="gave up after"), store.LakeLock(store.LakeFS(out)):
        ingest_lake([str(files[0])], str(out), lock_timeout=0.3)


def test_file_system_without_flock_runs_unlocked(tmp_path, monkeypatch):
    import errno

    def no_flock(fd, op):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(store.fcntl, "flock", no_flock)
    notes = Notes()
    res = ingest_lake([str(DATA_TRACE)], str(tmp_path / "lake"), jobs=1, reporter=notes)
    assert res.ok and len(res.added) == 1
    assert any("cannot lock" in n and "No locks available" in n for n in notes.lines)
    assert not (tmp_path / "lake" / LOCK).exists() and tracecols.Lake(tmp_path / "lake").traces


def test_url_lake_stops_when_another_ingest_commits_meanwhile(tmp_path):
    """No lock on URLs: the manifest is read-modify-write, so a run whose manifest was changed
    by another since it read it stops (LakeBusy) rather than overwrite the other's commits."""
    import fsspec

    src = tmp_path / "job"
    files = [str(f) for f in sorted(synth_fleet(src, world=4, steps=1))]
    url = "memory://crash-test-lake"
    mem = fsspec.filesystem("memory")

    class Intruder(InlineExecutor):
        """Before the first trace of the outer run, another run commits two traces."""

        def __init__(self):
            self.done = False

        def submit(self, fn, /, *args, **kwargs):
            if fn.__name__ == "ingest_one" and not self.done:
                self.done = True
                assert ingest_lake(files[2:], url, executor=InlineExecutor()).ok
            return super().submit(fn, *args, **kwargs)

    try:
        with pytest.raises(store.LakeBusy, match="another ingest committed to this lake"):
            ingest_lake(files[:2], url, executor=Intruder())
        lake = tracecols.Lake(url)  # the other run's commits are intact
        assert sorted(Path(t["path"]).name for t in lake.traces) == ["rank2.pt.trace.json", "rank3.pt.trace.json"]
        assert lake.sql("select count(distinct rank) as n from events")["n"][0] == 2
        res = ingest_lake(files, url, executor=InlineExecutor())  # the re-run completes it
        assert res.ok and len(res.added) == 2 and len(res.unchanged) == 2
        lake = tracecols.Lake(url)
        assert lake.ranks == [0, 1, 2, 3] and sorted(t["trace_id"] for t in lake.traces) == [0, 1, 2, 3]
        assert not [p for p in mem.find("/crash-test-lake") if p.endswith(LOCK)]

        # a run with nothing to commit that swept leftovers while another committed says so
        mem.pipe("/crash-test-lake/events/rank=9/t000999-0123456789ab.parquet", b"PAR1 in flight")

        class Committing(InlineExecutor):
            def map(self, fn, *iterables, **kwargs):
                text = mem.cat("/crash-test-lake/_tracecols.json")
                mem.pipe("/crash-test-lake/_tracecols.json", text + b"\n")  # as if another run committed
                return super().map(fn, *iterables, **kwargs)

        with pytest.raises(store.LakeBusy, match="may have been that run's"):
            ingest_lake(files, url, executor=Committing())
        assert tracecols.Lake(url).ranks == [0, 1, 2, 3]
    finally:
        if mem.exists("/crash-test-lake"):
            mem.rm("/crash-test-lake", recursive=True)


def test_rerun_repairs_a_trace_whose_files_are_missing(tmp_path):
    src = tmp_path / "job"
    synth_fleet(src, world=3, steps=1)
    ref = tmp_path / "ref"
    assert ingest_lake([str(src)], str(ref), jobs=1).ok
    out = tmp_path / "lake"
    shutil.copytree(ref, out)
    m = json.loads((out / "_tracecols.json").read_text())  # files are named relative to the lake
    victim = m["traces"][1]
    (out / victim["files"]["kernels"]).unlink()
    notes = Notes()
    res = ingest_lake([str(src)], str(out), jobs=1, reporter=notes)
    assert res.ok and res.replaced == [victim["path"]] and len(res.unchanged) == 2
    assert any("miss some of their files" in n for n in notes.lines)
    assert_same_lake(out, ref)
