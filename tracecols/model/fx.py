"""FX markers: which compiled graph file and which FX node each host event and kernel belongs to.

Code compiled by torch.compile (Inductor) can wrap its work in record_function ranges named
`## /path/to/generated_module.py ##` (the compiled graph's file) and `## N ##` (FX node N of
that graph). They appear in the Kineto trace as host slices (user_annotation) that enclose the
ops and runtime launches they cover, on the same thread.

`fx_marks(slices, kernels)` gives every slice inside such a marker, and every kernel whose launch
call is inside one, the innermost enclosing file marker's path (`fx_file`) and node marker's
number (`fx_node`); a marker counts as inside itself. "Inside" is the host tree's nesting
(docs/tree.md), computed by pointer doubling over the parent links, so no per-event loop.
"""

import numpy as np
import polars as pl
import pyarrow as pa

from .frames import frame
from .tree import lazy_events, nearest

FILE_MARK = r"^## (.+\.py) ##$"
NODE_MARK = r"^## (\d+) ##$"

FX_SCHEMA = pa.schema(
    [("trace_id", pa.int32()), ("uid", pa.int64()), ("kind", pa.string()), ("fx_file", pa.string()), ("fx_node", pa.int64())]
)


def fx_marks(slices, kernels=None):
    """Arrow table (trace_id, uid, kind 'slice'|'kernel', fx_file, fx_node) for the events inside
    at least one marker. `slices`: Arrow table or polars LazyFrame; `kernels`: Arrow table."""
    src = lazy_events(slices, ["trace_id", "uid", "name", "parent_uid"])
    any_mark = src.select(pl.col("name").str.contains(FILE_MARK).any() | pl.col("name").str.contains(NODE_MARK).any())
    if not any_mark.collect(engine="streaming").item():  # most traces: no need to hold the names
        return FX_SCHEMA.empty_table()
    sl = src.collect()
    names = sl["name"].fill_null("")
    is_file = names.str.contains(FILE_MARK).to_numpy()
    is_node = names.str.contains(NODE_MARK).to_numpy()
    key = sl.select(["trace_id", "uid"]).with_row_index("_i")
    parent = (
        sl.select(["trace_id", pl.col("parent_uid").alias("uid")])
        .join(key, on=["trace_id", "uid"], how="left", maintain_order="left")["_i"]
        .fill_null(-1)
        .to_numpy()
        .astype(np.int64)
    )
    f = nearest(parent, is_file)
    d = nearest(parent, is_node)
    inside = (f >= 0) | (d >= 0)
    file_name = names.str.extract(FILE_MARK, 1).to_numpy()
    node_num = names.str.extract(NODE_MARK, 1).cast(pl.Int64).fill_null(-1).to_numpy()
    idx = np.flatnonzero(inside)
    fi, di = f[idx], d[idx]
    out = pl.DataFrame(
        {
            "trace_id": sl["trace_id"].to_numpy()[idx],
            "uid": sl["uid"].to_numpy()[idx],
            "kind": ["slice"] * len(idx),
            "fx_file": pl.Series(np.where(fi >= 0, file_name[np.maximum(fi, 0)], None), dtype=pl.String),
            "fx_node": pl.Series(node_num[np.maximum(di, 0)], dtype=pl.Int64),
        }
    ).with_columns(pl.when(pl.Series(di >= 0)).then(pl.col("fx_node")).alias("fx_node"))
    if kernels is not None and kernels.num_rows:
        k = frame(kernels.select(["trace_id", "uid", "launch_uid"])).filter(pl.col("launch_uid").is_not_null())
        kk = k.join(
            out.select(["trace_id", pl.col("uid").alias("launch_uid"), "fx_file", "fx_node"]),
            on=["trace_id", "launch_uid"],
            how="inner",
        ).select(["trace_id", "uid", pl.lit("kernel").alias("kind"), "fx_file", "fx_node"])
        out = pl.concat([out, kk.with_columns(pl.col("trace_id").cast(out.schema["trace_id"]))])
    t = out.sort(["trace_id", "uid"]).to_arrow()
    return pa.table([t.column(fl.name).cast(fl.type) for fl in FX_SCHEMA], schema=FX_SCHEMA)
