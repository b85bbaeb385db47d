"""What one worker does for one trace: read it, build the base tables, write its lake files.

Top-level functions with plain arguments and results, so that any executor can ship them:
a local process pool, a Dask distributed cluster, or the calling thread.
"""
import hashlib
import os
import time

import numpy as np
import pyarrow as pa

from ..read.source import file_size, is_url
from ..store import lake as store


def hash_file(path):
    """(size, sha256) of the raw bytes of a file or URL."""
    h = hashlib.sha256()
    if is_url(path):
        import fsspec

        f = fsspec.open(path, "rb").open()
    else:
        f = open(path, "rb")
    n = 0
    with f:
        while True:
            b = f.read(1 << 20)
            if not b:
                break
            h.update(b)
            n += len(b)
    return path, n, h.hexdigest()


def size_of(path):
    try:
        return file_size(path)
    except (OSError, FileNotFoundError):
        return None


def _with_trace_id(table, trace_id):
    i = table.schema.get_field_index("trace_id")
    if i < 0:
        return table
    col = pa.array(np.full(table.num_rows, trace_id, dtype=np.int32), pa.int32())
    return table.set_column(i, "trace_id", col)


def ingest_one(path, trace_id, root, keep_secrets=False):
    """Ingest one trace into the lake at `root` as `trace_id`; returns its manifest record.

    The files are in place when this returns, but the trace is part of the lake only once the
    caller has written a manifest that lists them.
    """
    from ..trace import ingest  # the single-trace pipeline: read -> events, slices, kernels, …

    t0 = time.perf_counter()
    tables, inputs = ingest([path], keep_secrets=keep_secrets)
    tr = tables["traces"].to_pylist()[0]
    rank, sha = tr["rank"], inputs[0]["sha256"]
    lfs = store.LakeFS(root)
    files = {}
    part, fname = store.partition(rank), store.file_name(trace_id, sha)
    for name in sorted(tables):
        rel = f"{name}/{part}/{fname}"
        lfs.write_parquet(rel, _with_trace_id(tables[name], trace_id))
        files[name] = rel
    return {
        "trace_id": trace_id, "path": path, "size": inputs[0]["size"], "sha256": sha,
        "rank": rank, "rank_source": tr["rank_source"], "world_size": tr["world_size"],
        "n_events": tr["n_events"], "files": files,
        "seconds": round(time.perf_counter() - t0, 3), "worker_pid": os.getpid(),
    }
