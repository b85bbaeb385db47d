"""What one worker does for one trace: read it, build the base tables, write its lake files.

Top-level functions with plain arguments and results, so that any executor can ship them:
a local process pool, a Dask distributed cluster, or the calling thread.
"""

import contextlib
import os
import shutil
import time

import pyarrow as pa
import pyarrow.parquet as pq

from .. import memory
from ..read.source import file_size
from ..read.source import hash_file as source_hash
from ..store import lake as store
from ..store import parquet
from ..store.atomic import scratch_dir, temp_sibling, writing

# Views of one trace kept in the lake as tables, computed when the trace is ingested: what the
# views over many runs read (run_trend, step_outliers), so that they never read the events.
SUMMARIES = ("step_stats",)


def lake_tables():
    """The tables a lake holds per trace: the base tables of the data model and SUMMARIES."""
    from ..model.base_tables import BASE_TABLES

    return tuple(sorted(set(BASE_TABLES) | set(SUMMARIES)))


def hash_file(path):
    """(path, size, sha256) of the raw bytes of a file or URL."""
    return (path, *source_hash(path))


def size_of(path):
    try:
        return file_size(path)
    except (OSError, FileNotFoundError):
        return None


def ingest_one(path, trace_id, root, keep_secrets=False, parts=1, run=None, run_seq=None):
    """Ingest one trace into the lake at `root` as `trace_id`; returns its manifest record.

    The files are in place when this returns, but the trace is part of the lake only once the
    caller has written a manifest that lists them. The events stream to a temporary file
    while the trace is parsed, so memory does not grow with the trace. With `parts` > 1 a
    large uncompressed trace is parsed by that many processes (streaming.write_events).
    `run`, `run_seq`: the run label and its place in the lake's run order, written into the
    trace's `traces` row (null without a label). The SUMMARIES views are computed and kept.
    """
    from ..pipeline import ingest  # the one pipeline: the lake holds its base tables per trace

    t0 = time.perf_counter()
    lfs = store.LakeFS(root)
    with scratch_dir() as scratch:
        local, inputs, _ = ingest(
            [path],
            out=os.path.join(scratch, "out"),
            keep_secrets=keep_secrets,
            first_trace_id=trace_id,
            parts=parts,
            views=list(SUMMARIES),
        )
        memory.release()
        keep = set(lake_tables())
        local = {name: f for name, f in local.items() if name in keep}  # not the views the summaries read
        traces = _labelled(pq.read_table(local["traces"]), run, run_seq)
        parquet.write_table(local["traces"], traces)
        tr = traces.to_pylist()[0]
        rank, sha, size = tr["rank"], inputs[0]["sha256"], inputs[0]["size"]
        part, fname = store.partition(rank), store.file_name(trace_id, sha)
        files, placed = {}, []
        try:
            with writing(root):
                for name in sorted(local):
                    files[name] = f"{name}/{part}/{fname}"
                    if not lfs.exists(files[name]):
                        placed.append(files[name])
                    _place(lfs, files[name], local[name])
        except BaseException:  # a trace that cannot be committed leaves none of its new files behind
            for rel in placed:
                lfs.remove(rel)
                part_dir = os.path.dirname(os.path.join(lfs.root, rel))
                for d in () if lfs.remote else (part_dir, os.path.dirname(part_dir)):
                    with contextlib.suppress(OSError):  # the folders it made, when they hold nothing else
                        os.rmdir(d)
            raise
    return {
        "trace_id": trace_id,
        "path": path,
        "size": size,
        "sha256": sha,
        "rank": rank,
        "rank_source": tr["rank_source"],
        "world_size": tr["world_size"],
        "n_events": tr["n_events"],
        "files": dict(sorted(files.items())),
        "secrets_redacted": not keep_secrets,
        "run": run,
        "seconds": round(time.perf_counter() - t0, 3),
        "worker_pid": os.getpid(),
    }


def _labelled(traces, run, run_seq):
    """The `traces` table with its run columns set."""
    for name, value, kind in (("run", run, pa.string()), ("run_seq", run_seq, pa.int32())):
        i = traces.schema.get_field_index(name)
        traces = traces.set_column(i, name, pa.array([value] * traces.num_rows, kind))
    return traces


def _place(lfs, rel, local):
    """Move a finished local file to `rel` in the lake, atomically."""
    if lfs.remote:
        with open(local, "rb") as f:
            lfs.write_bytes(rel, f.read())
        return
    full = os.path.join(lfs.root, rel)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    tmp = temp_sibling(full)
    try:
        shutil.move(local, tmp)  # a rename on one filesystem, else a copy that a full disk can cut short
        os.replace(tmp, full)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
