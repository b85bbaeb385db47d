"""Ingest many traces into one lake, in parallel on any `concurrent.futures.Executor`.

The driver (this module) discovers the inputs, decides which are new or changed, hands one
task per trace to the executor (`work.ingest_one`: read, build tables, write the trace's
Parquet files), and commits each finished trace by rewriting the manifest. Only the driver
writes the manifest, so workers need no coordination and can run anywhere that reaches the
input and output paths (a Dask cluster with shared or object storage).

trace_id: an input keeps the id it got the first time (the manifest records it by path).
New inputs get the next free ids in natural path order; the ids a run plans are recorded in
the manifest (`reserved`) with its first commit, so a run that is killed and run again
assigns exactly the ids an uninterrupted run would have.

One run at a time writes a lake: on a local path the driver holds `store.LakeLock` (flock on
LAKE/_tracecols.lock, dropped by the kernel if the process dies) for the whole run, and a
second run waits for it; on URLs each commit checks the manifest is still the one the run
read or last wrote (`store.Committer`). Readers take no lock.
"""

import concurrent.futures as cf
import multiprocessing
import os
import time

from ..errors import OutputError, TraceError
from ..store import lake as store
from ..store import parquet
from ..store.atomic import write_failure, writing
from . import discover as _discover
from . import work
from .walk import Walk


def _base_tables():
    """The tables one trace's ingest produces: the single-trace pipeline's base tables, and the
    per-trace summaries the lake keeps (work.SUMMARIES)."""
    return work.lake_tables()


_RECORD_KEYS = (
    "trace_id",
    "path",
    "size",
    "sha256",
    "rank",
    "rank_source",
    "world_size",
    "n_events",
    "files",
    "secrets_redacted",
    "run",
)


class InlineExecutor(cf.Executor):
    """Runs each task in the calling thread when submitted (for -j 1 and for tests)."""

    def submit(self, fn, /, *args, **kwargs):
        f: cf.Future = cf.Future()
        try:
            f.set_result(fn(*args, **kwargs))
        except BaseException as e:  # noqa: BLE001 - handed to the caller through the future
            f.set_exception(e)
        return f


_THREAD_VARS = ("POLARS_MAX_THREADS", "OMP_NUM_THREADS")


def process_pool(jobs=None):
    """A process pool whose workers fork from a server that has the ingest code imported.

    The server starts with the thread pools of polars and Arrow sized cores // jobs, so that
    N single-trace workers on N cores do not each spin up N threads.
    """
    from multiprocessing import forkserver

    cores = os.cpu_count() or 1
    jobs = jobs or cores
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["tracecols.fleet.work", "tracecols.pipeline"])
    saved = {k: os.environ.get(k) for k in _THREAD_VARS}
    os.environ.update({k: str(max(1, cores // jobs)) for k in _THREAD_VARS})
    try:
        forkserver.ensure_running()  # inherits the environment now; a running server is kept as is
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return cf.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx)


class Reporter:
    """What the driver tells as it goes; the CLI's progress bar implements the same methods."""

    def note(self, line):
        pass

    def start(self, n_files, n_bytes):
        pass

    def done(self, record):
        pass

    def failed(self, path, error):
        pass

    def finish(self):
        pass


def _new_manifest():
    return parquet.manifest(
        _base_tables(),
        layout=store.LAYOUT,
        partitioning={"rank": "INTEGER", "null": store.NULL_PARTITION},
        traces=[],
        reserved={},
        next_trace_id=0,
        runs=[],
    )


def _finalise(manifest):
    manifest["traces"].sort(key=lambda t: t["trace_id"])
    manifest["tables"] = sorted({n for t in manifest["traces"] for n in t["files"]} | set(manifest["tables"]))
    manifest["inputs"] = [{"path": t["path"], "size": t["size"], "sha256": t["sha256"]} for t in manifest["traces"]]
    manifest.update(parquet.versions())
    return manifest


class Result:
    def __init__(self):
        self.added, self.replaced, self.unchanged, self.failed, self.skipped = [], [], [], [], []
        self.swept = []
        self.seconds = 0.0
        self.root = None

    @property
    def ok(self):
        return not self.failed


def _as_completed(executor, tasks, futures):
    """(key, future) of each task as it finishes; `futures` collects what was submitted.

    An InlineExecutor runs a task when it is submitted, so its tasks are submitted one at a
    time, each after the previous one was handed back (and committed): submitting them all
    first would commit nothing until every trace was done, and a killed `-j 1` run would keep
    nothing of its work.
    """
    if isinstance(executor, InlineExecutor):
        for key, (fn, *args) in tasks:
            fut = executor.submit(fn, *args)
            futures[fut] = key
            yield key, fut
        return
    for key, (fn, *args) in tasks:
        futures[executor.submit(fn, *args)] = key
    for fut in cf.as_completed(futures):
        yield futures[fut], fut


def ingest_lake(sources, out, executor=None, jobs=None, reporter=None, keep_secrets=False, lock_timeout=None, run=None):
    """Ingest the traces found in `sources` into the lake at `out`; returns a Result.

    Secret-looking metadata values are redacted before they are written, unless `keep_secrets`.

    `run`: the label of the run these traces belong to (a commit, a date, a config name),
    written into their `traces` rows with its place in the lake's run order: the order in which
    labels were first ingested (the manifest's `runs`). An input already in the lake under
    another label (or none) is ingested again with this one.

    executor: any concurrent.futures.Executor (default: a process pool of `jobs` processes,
    one per core; jobs=1 runs in this process).

    One ingest at a time writes a local lake: the run holds an exclusive lock on it
    (`store.LakeLock`, LAKE/_tracecols.lock) from before it reads the manifest to its last
    commit. Another run waits for it (told through `reporter.note`), for at most
    `lock_timeout` seconds if given (0: fail at once), then raises `store.LakeBusy`. On URLs
    there is no lock; each commit checks that no other run changed the manifest (`store.Committer`).
    """
    rep = reporter or Reporter()
    res = Result()
    t0 = time.perf_counter()
    lfs = store.LakeFS(out)
    res.root = lfs.root
    # refuse a single-trace output or a foreign directory before creating anything in it
    before = store.read_manifest(lfs)
    store.check_writable(lfs, sorted(set(_base_tables()) | set((before or {}).get("tables", []))))
    walk = Walk()
    paths, skipped = _discover.discover(sources, exclude=[] if lfs.remote else [lfs.root], walk=walk)
    res.skipped = skipped
    for p, why in skipped:
        rep.note(f"skipped {p}: {why}")
    if walk.note():
        rep.note(walk.note())
    lock = store.LakeLock(lfs, timeout=lock_timeout, on_wait=rep.note)
    try:
        with writing(lfs.root):  # a full disk or a read-only lake: one line, and the run stops
            if paths or lfs.exists():
                lock.acquire()
                if lock.unsupported:
                    rep.note(
                        f"cannot lock {lfs.root} ({lock.unsupported}); "
                        "running without a lock: do not start another ingest into it meanwhile"
                    )
            _ingest_locked(paths, lfs, executor, jobs, rep, res, keep_secrets, verify=not lock.held, run=run)
    finally:
        lock.release()
        rep.finish()
    res.seconds = time.perf_counter() - t0
    return res


def _plan_ids(m, todo, known):
    """{path: trace_id} for the traces to ingest: a known trace keeps its id, one reserved by an
    earlier run that did not finish gets that one, a new one the next free id. The new ones are
    reserved in manifest `m`, and its next free id moved on."""
    reserved = dict(m.get("reserved", {}))
    nxt = max([m.get("next_trace_id", 0)] + [t["trace_id"] + 1 for t in m["traces"]] + [i + 1 for i in reserved.values()])
    plan = {}
    for p in todo:  # paths come in natural order: ids follow it
        if p in known:
            plan[p] = known[p]["trace_id"]
        elif p in reserved:
            plan[p] = reserved[p]
        else:
            plan[p], nxt = nxt, nxt + 1
    m["reserved"] = {p: i for p, i in plan.items() if p not in known}
    m["next_trace_id"] = nxt
    return plan


def _run_seq(m, run, todo):
    """The place of run label `run` in the lake's run order (manifest `m`'s `runs`: the order in
    which labels first reach the lake, written with the run's first commit); None without one."""
    runs = m.setdefault("runs", [])
    if run is not None and todo and run not in runs:
        runs.append(run)
    return None if run is None else runs.index(run) if run in runs else None


def _ingest_locked(paths, lfs, executor, jobs, rep, res, keep_secrets, verify, run=None):
    """The run proper, with the lake locked (or, `verify`, every commit checked instead)."""
    committer = store.Committer(lfs, verify=verify)  # the manifest as it is now that no one else writes
    manifest = committer.manifest
    tables = sorted(set(_base_tables()) | set((manifest or {}).get("tables", [])))
    store.check_writable(lfs, tables)
    present: set[str] = set()  # the lake's files that exist, relative to its root
    res.swept = store.sweep(lfs, manifest, tables, present) if lfs.exists() else []
    if res.swept:
        rep.note(f"removed {len(res.swept)} file(s) of traces an earlier run did not finish")
    known = {t["path"]: t for t in (manifest or {}).get("traces", [])}
    # a committed trace some of whose files are gone is ingested again, under its trace_id
    damaged = {p for p, t in known.items() if not set(t["files"].values()) <= present}
    if damaged:
        found = damaged & set(paths)
        rep.note(
            f"{len(damaged)} trace(s) of the lake miss some of their files; "
            f"{len(found)} of them ingested again" + ("" if found == damaged else ", the others' inputs were not given")
        )

    own_pool = executor is None
    if own_pool:
        executor = InlineExecutor() if (jobs or os.cpu_count() or 1) == 1 or len(paths) <= 1 else process_pool(jobs)
    try:
        # which known inputs changed: size first, the hash only when the size agrees
        same_size = [p for p in paths if p in known and p not in damaged and work.size_of(p) == known[p]["size"]]
        digests = {p: sha for p, _, sha in executor.map(work.hash_file, same_size)} if same_size else {}
        todo, relabelled = [], 0
        for p in paths:
            if p in known and digests.get(p) == known[p]["sha256"] and known[p].get("run") == run:
                res.unchanged.append(p)
            else:
                todo.append(p)
                relabelled += p in known and digests.get(p) == known[p]["sha256"]
        if relabelled:
            rep.note(f"{relabelled} unchanged trace(s) ingested again: the lake has them under another run label")

        m = manifest or _new_manifest()
        plan = _plan_ids(m, todo, known)
        run_seq = _run_seq(m, run, todo)

        sizes = {p: work.size_of(p) or 0 for p in todo}
        rep.start(len(todo), sum(sizes.values()))
        # largest first: the long poles start early and the pool drains evenly
        order = sorted(todo, key=lambda p: (-sizes[p], plan[p]))
        # fewer traces than cores: each trace is read in parts (read/split.py) by its worker
        parts = max(1, (jobs or os.cpu_count() or 1) // max(1, len(todo))) if own_pool else 1
        tasks = [(p, (work.ingest_one, p, plan[p], lfs.root, keep_secrets, parts, run, run_seq)) for p in order]
        futures: dict[cf.Future, str] = {}  # what was submitted: the trace it reads
        try:
            for p, fut in _as_completed(executor, tasks, futures):
                try:
                    rec = fut.result()
                except OutputError:
                    raise  # the lake's disk is full or read-only: the next traces would fail the same way
                except TraceError as e:
                    res.failed.append((p, e.line()))
                    rep.failed(p, e.line())
                    continue
                except Exception as e:  # noqa: BLE001 - one bad trace must not sink the others
                    if write_failure(lfs.root, e) is not None:
                        raise
                    msg = f"{p}: internal error: {type(e).__name__}: {' '.join(str(e).split())}"
                    res.failed.append((p, msg))
                    rep.failed(p, msg)
                    continue
                old = known.get(p)
                entry = {k: rec[k] for k in _RECORD_KEYS}
                m["traces"] = [t for t in m["traces"] if t["trace_id"] != entry["trace_id"]] + [entry]
                m["reserved"].pop(p, None)
                committer.commit(_finalise(m))  # the commit
                if old:
                    for rel in set(old["files"].values()) - set(entry["files"].values()):
                        lfs.remove(rel)
                    res.replaced.append(p)
                else:
                    res.added.append(p)
                rep.done(rec)
        except BaseException:
            for f in futures:
                f.cancel()
            raise
        if m["traces"] and (todo or manifest is None or m.get("reserved")):
            m["reserved"] = {p: i for p, i in m["reserved"].items() if p in plan and p not in res.added}
            if not m["reserved"]:
                m["reserved"] = {}
            committer.commit(_finalise(m))
        if verify and res.swept and committer.changed():
            raise store.LakeBusy(
                lfs.root,
                "another ingest committed to this lake while this one ran (concurrent "
                "ingests into a URL are not supported); files this run removed as "
                "leftovers may have been that run's: run ingest again once it has "
                "finished, to repair them",
            )
    finally:
        if own_pool:
            executor.shutdown(wait=True, cancel_futures=True)
