"""What one worker does for one trace: read it, build the base tables, write its lake files.

Top-level functions with plain arguments and results, so that any executor can ship them:
a local process pool, a Dask distributed cluster, or the calling thread.
"""
import os
import shutil
import time
import uuid

from .. import memory
from ..read.source import file_size
from ..read.source import hash_file as source_hash
from ..store import lake as store
from ..store.atomic import scratch_dir


def hash_file(path):
    """(path, size, sha256) of the raw bytes of a file or URL."""
    return (path, *source_hash(path))


def size_of(path):
    try:
        return file_size(path)
    except (OSError, FileNotFoundError):
        return None


def ingest_one(path, trace_id, root, keep_secrets=False, parts=1):
    """Ingest one trace into the lake at `root` as `trace_id`; returns its manifest record.

    The files are in place when this returns, but the trace is part of the lake only once the
    caller has written a manifest that lists them. The events stream to a temporary file
    while the trace is parsed, so memory does not grow with the trace. With `parts` > 1 a
    large uncompressed trace is parsed by that many processes (streaming.write_events).
    """
    from ..pipeline import derive_from_file, write_events  # the single-trace pipeline

    t0 = time.perf_counter()
    lfs = store.LakeFS(root)
    with scratch_dir() as scratch:
        ev_tmp, sl_tmp = os.path.join(scratch, "events.parquet"), os.path.join(scratch, "slices.parquet")
        info = write_events([path], ev_tmp, keep_secrets, first_trace_id=trace_id, parts=parts)[0]
        tables = derive_from_file(ev_tmp, [info], sl_tmp)
        memory.release()
        rank, sha = info["rank"], info["sha256"]
        part, fname = store.partition(rank), store.file_name(trace_id, sha)
        files = {}
        for name in sorted(tables):
            files[name] = f"{name}/{part}/{fname}"
            lfs.write_parquet(files[name], tables[name])
        for name, local in (("events", ev_tmp), ("slices", sl_tmp)):
            files[name] = f"{name}/{part}/{fname}"
            _place(lfs, files[name], local)
    tr = tables["traces"].to_pylist()[0]
    return {
        "trace_id": trace_id, "path": path, "size": info["size"], "sha256": sha,
        "rank": rank, "rank_source": tr["rank_source"], "world_size": tr["world_size"],
        "n_events": tr["n_events"], "files": dict(sorted(files.items())), "secrets_redacted": not keep_secrets,
        "seconds": round(time.perf_counter() - t0, 3), "worker_pid": os.getpid(),
    }


def _place(lfs, rel, local):
    """Move a finished local file to `rel` in the lake, atomically."""
    if lfs.remote:
        with open(local, "rb") as f:
            lfs.write_bytes(rel, f.read())
        return
    full = os.path.join(lfs.root, rel)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    tmp = os.path.join(os.path.dirname(full), f".{os.path.basename(full)}.tmp-{uuid.uuid4().hex[:8]}")
    shutil.move(local, tmp)  # a rename on one filesystem; a leftover is deleted by the next ingest
    os.replace(tmp, full)
