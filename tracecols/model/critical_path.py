"""The `critical_path_edges` table: the longest dependency path through each profiler step.

cp_graph builds the graph of host calls, device events and their launches and waits
(docs/analyses.md, critical_path); longest_path finds each window's longest path. One row per
edge of the path, in order; the views `critical_path` and `critical_path_summary` name the
events and say what bounds each part (sql/time/critical_path*.sql).
"""

import numpy as np
import polars as pl
import pyarrow as pa

from . import cp_graph, longest_path

SCHEMA = pa.schema(
    [
        ("trace_id", pa.int32()),
        ("rank", pa.int32()),
        ("window_uid", pa.int64()),
        ("step", pa.int64()),
        ("window_start_ns", pa.int64()),
        ("window_end_ns", pa.int64()),
        ("seq", pa.int32()),
        ("kind", pa.string()),
        ("uid", pa.int64()),
        ("src_uid", pa.int64()),
        ("dst_uid", pa.int64()),
        ("ts_ns", pa.int64()),
        ("end_ns", pa.int64()),
        ("weight_ns", pa.int64()),
    ]
)


def critical_path_edges(slices, kernels, syncs=None, pattern=cp_graph.STEP_PATTERN):
    """Arrow table (SCHEMA) of the longest path of every window. `slices`, `kernels`: the base
    tables (Arrow, or polars frames, lazy or not); `syncs`: cp_graph.sync_events() of the
    events (None: the trace has none); windows: the host slices whose name matches the SQL LIKE `pattern` (default: each
    ProfilerStep#N, and a trace without steps as one window)."""
    g = cp_graph.build(slices, kernels, syncs, pattern)
    dist, arg, best, _ = longest_path.solve(g)
    w, kind, src, dst, weight, uid = longest_path.paths(g, dist, arg, best)
    del dist, arg, best  # a big graph's memory: what the table needs of it is g.uid and g.t
    if len(w) == 0:
        return SCHEMA.empty_table()
    seq = np.arange(len(w)) - np.searchsorted(w, w, "left")  # paths come window by window
    win = g.windows
    # windows are numbered in (trace_id, start) order, so the rows come out in table order
    per = win.select(
        "trace_id",
        "rank",
        "window_uid",
        "step",
        pl.col("start_ns").alias("window_start_ns"),
        pl.col("end_ns").alias("window_end_ns"),
    )[w]
    cols = {name: per[name].to_arrow() for name in per.columns}
    cols.update(
        seq=pa.array(seq),
        kind=pl.Series(cp_graph.KINDS).gather(kind).to_arrow(),
        uid=pa.array(uid, mask=uid < 0),
        src_uid=pa.array(g.uid[src]),
        dst_uid=pa.array(g.uid[dst]),
        ts_ns=pa.array(g.t[src]),
        end_ns=pa.array(g.t[dst]),
        weight_ns=pa.array(weight),
    )
    return pa.table([cols[f.name].cast(f.type) for f in SCHEMA], schema=SCHEMA)
