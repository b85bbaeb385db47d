"""The `kernels` table: device work (kernel, memcpy, memset) linked to the host call that launched it.

Links, in order of preference (docs/tree.md):
1. correlation: a host launch slice (cuda_runtime / cuda_driver, incl. hip and mtia runtime)
   and the device event share `correlation` within one trace. The device event does not say
   which host process launched it, so a correlation is used only when every launch slice
   carrying it sits in one host process (trace_id, pid): ids of different processes never
   link. Among several launch slices of that process with the id, the runtime call wins over
   the driver call, then the earliest. A graph launch (cudaGraphLaunch / hipGraphLaunch)
   owns every device event of its correlation.
2. flow: an `ac2g` arrow whose start sits on a launch slice (same pid, tid, ts) and whose
   finish sits on the device event (same pid, tid, ts) — used where 1. found nothing.

Overlaps on one stream (see clip_overlaps): the device events of one stream run one after
another, so an event that ends after the next one on its stream starts (seen in ROCm traces)
is cut short at that start. `dur_ns`/`end_ns` hold the clipped values every analysis uses,
`dur_raw_ns` the duration as written, `clipped` says which rows were cut (docs/schema.md).
A negative duration as written is taken as 0 in `dur_ns`, so that no sum of durations and no
busy-time union ever counts it (`dur_raw_ns` keeps it; traces.warnings counts such events).
"""

from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from .tree import lazy_events, nearest

KERNEL_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
LAUNCH_CATS = ("cuda_runtime", "cuda_driver")

_AT = ["trace_id", "pid", "pid_str", "tid", "tid_str", "ts_ns"]  # where a flow end sits

KERNELS_SCHEMA = pa.schema(
    [
        ("trace_id", pa.int32()),
        ("rank", pa.int32()),
        ("uid", pa.int64()),
        ("cat", pa.string()),
        ("name", pa.string()),
        ("pid", pa.int64()),
        ("tid", pa.int64()),
        ("device", pa.int64()),
        ("stream", pa.int64()),
        ("correlation", pa.int64()),
        ("ts_ns", pa.int64()),
        ("dur_ns", pa.int64()),
        ("end_ns", pa.int64()),
        ("kernel_class", pa.string()),
        ("launch_uid", pa.int64()),
        ("link", pa.string()),
        ("launch_name", pa.string()),
        ("launch_ts_ns", pa.int64()),
        ("launch_pid", pa.int64()),
        ("launch_tid", pa.int64()),
        ("op_uid", pa.int64()),
        ("top_op_uid", pa.int64()),
        ("launcher_uid", pa.int64()),
        ("op_path", pa.list_(pa.int64())),
        ("dur_raw_ns", pa.int64()),
        ("clipped", pa.bool_()),
    ]
)

# what makes a stream: the device and stream args (else pid and tid); where an arg is missing,
# the original pid/tid string too, so that two string pids never share a stream
STREAM_KEY = ["trace_id", "device", "stream", "_dev_str", "_stream_str"]

# kernel_class by name, first match wins (lower-cased name; cat decides memcpy/memset first)
_CLASSES = [
    (
        "communication",
        r"nccl|rccl|cross_device_reduce|all_?reduce|all_?gather|reduce_?scatter|all_?to_?all"
        r"|c10d::|sendrecv|broadcast_?kernel",
    ),
    ("memcpy", r"^memcpy|^dma_|^copybuffer|^\[?memcpy"),
    ("memset", r"^memset|^fillbuffer"),
    ("attention", r"flash|fmha|attention|_attn|attn_|sdpa|mha_|paged_?attention|flashinfer|unified_attention"),
    ("conv", r"conv|winograd|implicit_?gemm|igemm|wgrad|dgrad|fprop|cudnn::|miopensp|naive_conv"),
    ("norm", r"norm|batch_?norm|layer_?norm|rms_?norm|group_?norm|welford|bn_fw|bn_bw|_bn_"),
    (
        "gemm",
        r"gemm|gemv|cutlass|cublas|hipblas|matmul|_mm_|^mm_|xmma|wmma|nvjet|cijk_|tensile|"
        r"sm\d+_.*(h|s|bf16|fp8)[0-9]*gemm|splitk|triton_tem|_mm$|bmm|sgemm|hgemm|ampere_|volta_|turing_|hopper_",
    ),
    (
        "reduction",
        r"reduce|reduction|softmax|sum_|_sum|mean|argmax|argmin|max_|min_|cub::|scan|topk|sort|"
        r"triton_red|triton_per|cumsum|logsumexp|nll_loss|cross_entropy",
    ),
    (
        "elementwise",
        r"elementwise|vectorized|unrolled|pointwise|triton_poi|fill|copy|cat_?array|index|"
        r"gather|scatter|where|cast|clamp|arange|embedding|dropout|gelu|silu|relu|sigmoid|tanh|"
        r"add|mul|div|sub|neg|exp|pow|sqrt|rsqrt|lerp|foreach|adam|sgd|rotary|rope",
    ),
]


def classify_expr(name="name", cat="cat"):
    """polars expression: kernel_class from the name and category."""
    low = pl.col(name).fill_null("").str.to_lowercase()
    expr: Any = pl.when(low.str.contains(_CLASSES[0][1])).then(pl.lit("communication"))  # Then, then ChainedThen
    expr = expr.when(pl.col(cat) == "gpu_memcpy").then(pl.lit("memcpy"))
    expr = expr.when(pl.col(cat) == "gpu_memset").then(pl.lit("memset"))
    for cls, pat in _CLASSES[1:]:
        expr = expr.when(low.str.contains(pat)).then(pl.lit(cls))
    return expr.otherwise(pl.lit("other"))


def kernel_classes(k):
    """(name, cat, kernel_class) of each distinct name and category of the device events `k`
    (polars): a trace runs few distinct kernels, so the patterns run over those only."""
    return k.select("name", "cat").unique().with_columns(classify_expr().alias("kernel_class"))


def classify(names, cats=None):
    """kernel_class for Python lists of names (and categories); for tests and ad-hoc use."""
    df = pl.DataFrame({"name": names, "cat": cats or ["kernel"] * len(names)}, schema={"name": pl.String, "cat": pl.String})
    return df.select(classify_expr().alias("c"))["c"].to_list()


# the columns of the events and of the slices build_kernels reads
_EVENT_COLUMNS = [
    "trace_id",
    "rank",
    "uid",
    "ph",
    "cat",
    "name",
    "pid",
    "tid",
    "pid_str",
    "tid_str",
    "ts_ns",
    "dur_ns",
    "end_ns",
    "device",
    "stream",
    "correlation",
    "flow_id",
]
_SLICE_COLUMNS = [
    "trace_id",
    "uid",
    "cat",
    "name",
    "pid",
    "tid",
    "pid_str",
    "tid_str",
    "ts_ns",
    "correlation",
    "parent_uid",
    "op_uid",
    "top_op_uid",
]


def build_kernels(ev, slices):
    """Arrow table `kernels` from the events (Arrow table, polars DataFrame or LazyFrame: only
    its device events and ac2g flows are read) and the `slices` (the same kinds, in slices order)."""
    ev = lazy_events(ev, _EVENT_COLUMNS)
    sl = lazy_events(slices, _SLICE_COLUMNS)
    # every slice with the few columns the walks up the tree read; the launch calls in full
    tree = sl.select(
        ["trace_id", "uid", "cat", "parent_uid", "op_uid", (pl.col("name") == "execute").fill_null(False).alias("execute")]
    ).collect(engine="streaming")
    launches = (
        sl.with_row_index("_row")
        .filter(pl.col("cat").is_in(list(LAUNCH_CATS)))
        .with_columns(pl.col("_row").cast(pl.Int64))
        .collect(engine="streaming")
    )
    # the wide columns are gathered once, in uid order; the links are worked out on narrow
    # frames in that same order and put beside them at the end (a join of the wide frame
    # would copy every column of millions of kernels each time)
    k = _device_events(ev)
    if k is None:
        return KERNELS_SCHEMA.empty_table()

    # 1. correlation, only where the id lives in a single host process
    by_corr = (
        launches.lazy()
        .filter(pl.col("correlation").is_not_null())
        .group_by(["trace_id", "correlation"])
        .agg(
            pl.col("pid").n_unique().alias("_npid"),
            pl.col("uid").sort_by([pl.col("cat") != "cuda_runtime", "ts_ns", "uid"]).first().alias("_l1"),
        )
        .filter(pl.col("_npid") == 1)
        .select(["trace_id", "correlation", "_l1"])
        .collect()
    )
    n = k.select(["trace_id", "uid", "correlation"]).join(
        by_corr, on=["trace_id", "correlation"], how="left", maintain_order="left"
    )
    # 2. ac2g flows: start on a launch slice, finish on the device event
    via = _flow_links(ev, launches, k)
    if via is not None:
        n = n.join(via, on=["trace_id", "uid"], how="left", maintain_order="left")
    else:
        n = n.with_columns(pl.lit(None, pl.Int64).alias("_l2"))
    n = n.with_columns(
        pl.coalesce(pl.col("_l1"), pl.col("_l2")).alias("launch_uid"),
        pl.when(pl.col("_l1").is_not_null())
        .then(pl.lit("correlation"))
        .when(pl.col("_l2").is_not_null())
        .then(pl.lit("flow"))
        .alias("link"),
    )
    # launcher in the sense of TraceLens's kernel-launcher view (see launcher_map)
    par = parent_index(tree)
    lmap = launcher_map(tree, par)
    info = launches.select(
        [
            "trace_id",
            pl.col("uid").alias("launch_uid"),
            pl.col("name").alias("launch_name"),
            pl.col("ts_ns").alias("launch_ts_ns"),
            pl.col("pid").alias("launch_pid"),
            pl.col("tid").alias("launch_tid"),
            "op_uid",
            "top_op_uid",
            pl.col("_row").alias("_launch_row"),
        ]
    ).join(lmap.rename({"uid": "launch_uid"}), on=["trace_id", "launch_uid"], how="left")
    n = n.join(info, on=["trace_id", "launch_uid"], how="left", maintain_order="left")
    n = n.with_columns(op_paths(tree, par, n)["op_path"])
    k = k.hstack(n.drop(["trace_id", "uid", "correlation"]))
    out = k.select([f.name for f in KERNELS_SCHEMA]).to_arrow()
    return pa.table([out.column(f.name).cast(f.type) for f in KERNELS_SCHEMA], schema=KERNELS_SCHEMA)


def _device_events(ev):
    """The device events of `ev` (a LazyFrame) in uid order, classified, on their device and
    stream, and clipped where they overlap the next on their stream; None when there are none."""
    k = (
        ev.filter((pl.col("ph") == "X") & pl.col("cat").is_in(list(KERNEL_CATS)))
        .drop(["ph", "flow_id", "end_ns"])
        .collect(engine="streaming")
        .sort(["trace_id", "uid"])
    )
    if k.height == 0:
        return None
    k = k.join(kernel_classes(k), on=["name", "cat"], how="left", nulls_equal=True, maintain_order="left")
    k = k.with_columns(
        pl.coalesce(pl.col("device"), pl.col("pid")).alias("device"),
        pl.coalesce(pl.col("stream"), pl.col("tid")).alias("stream"),
        pl.when(pl.col("device").is_null()).then(pl.col("pid_str")).alias("_dev_str"),
        pl.when(pl.col("stream").is_null()).then(pl.col("tid_str")).alias("_stream_str"),
        pl.col("dur_ns").fill_null(0),
    )
    clipped = (
        clip_overlaps(k.select(["uid", "ts_ns", "dur_ns"] + STREAM_KEY))
        .sort(["trace_id", "uid"])
        .select(["dur_ns", "end_ns", "dur_raw_ns", "clipped"])
    )
    return k.drop(["dur_ns", "_dev_str", "_stream_str"]).hstack(clipped)


def _flow_links(ev, launches, k):
    """(trace_id, uid of a device event of `k`, _l2: the launch an ac2g flow ties it to), or
    None when the events hold no such flow."""
    fl = (
        ev.filter(pl.col("ph").is_in(["s", "f"]) & (pl.col("cat") == "ac2g"))
        .select(_AT + ["ph", "flow_id"])
        .collect(engine="streaming")
    )
    if not fl.height:
        return None
    s_ev = (
        fl.filter(pl.col("ph") == "s")
        .join(launches.select(_AT + [pl.col("uid").alias("_l2")]), on=_AT, how="inner", nulls_equal=True)
        .select(["trace_id", "flow_id", "_l2"])
        .unique(["trace_id", "flow_id"], keep="first")
    )
    f_ev = (
        fl.filter(pl.col("ph") == "f")
        .join(k.select(_AT + [pl.col("uid").alias("_k")]), on=_AT, how="inner", nulls_equal=True)
        .select(["trace_id", "flow_id", "_k"])
    )
    return (
        f_ev.join(s_ev, on=["trace_id", "flow_id"], how="inner")
        .unique(["trace_id", "_k"], keep="first")
        .select(["trace_id", pl.col("_k").alias("uid"), "_l2"])
    )


def clip_overlaps(k):
    """Cut each device event short where it runs past the start of the next one on its stream.

    `k`: polars frame with the STREAM_KEY columns, uid, ts_ns and dur_ns (nulls taken as 0
    before). A negative dur_ns is taken as 0: the event covers no time, so it never overlaps.
    Per stream, in (ts_ns, uid) order, an event whose end is after the next event's
    start gets dur_ns = next start - its start (so a tie on ts_ns gives the first, by uid, 0).
    Returns `k` with dur_ns and end_ns clipped, dur_raw_ns (dur_ns as it came) and clipped.
    Events without ts_ns are never cut and never cut another.
    """
    k = k.sort(STREAM_KEY + ["ts_ns", "uid"], nulls_last=True)
    k = k.with_columns(pl.col("dur_ns").alias("dur_raw_ns"), pl.col("dur_ns").clip(lower_bound=0))
    nxt = pl.col("ts_ns").shift(-1)
    same = pl.all_horizontal([pl.col(c).eq_missing(pl.col(c).shift(-1)) for c in STREAM_KEY])
    over = (same & (pl.col("ts_ns") + pl.col("dur_ns") > nxt)).fill_null(False)
    k = k.with_columns(
        over.alias("clipped"), pl.when(over).then(nxt - pl.col("ts_ns")).otherwise(pl.col("dur_ns")).alias("dur_ns")
    )
    return k.with_columns((pl.col("ts_ns") + pl.col("dur_ns")).alias("end_ns"))


def parent_index(sl):
    """Row of each slice's parent in `sl` (polars: trace_id, uid, parent_uid), -1 for roots."""
    key = sl.select(["trace_id", "uid"]).with_row_index("_i")
    return (
        sl.select(["trace_id", "parent_uid"])
        .with_row_index("_c")
        .join(key.rename({"uid": "parent_uid", "_i": "_p"}), on=["trace_id", "parent_uid"], how="left")
        .sort("_c")["_p"]
        .fill_null(-1)
        .to_numpy()
        .astype(np.int64)
    )


def launcher_map(sl, par=None):
    """(trace_id, uid, launcher_uid) for every launch slice; `sl`: every slice's trace_id, uid,
    cat, parent_uid and `execute` (its name is "execute"); `par`: its parent_index, if known.

    Walk up from the launch call's parent, passing over python_function frames and cpu_ops
    named `execute`; the first other cpu_op is the launcher. If the walk meets another kind
    of slice, or runs out, the launch call itself is the launcher.
    """
    n = sl.height
    if n == 0:
        return pl.DataFrame(schema={"trace_id": pl.Int32, "uid": pl.Int64, "launcher_uid": pl.Int64})
    par = parent_index(sl) if par is None else par
    # boolean masks from polars: to_numpy() of a string column makes one Python str per row
    cat = sl["cat"]
    is_op = (cat == "cpu_op").fill_null(False).to_numpy()
    skip = (cat == "python_function").fill_null(False).to_numpy() | (is_op & sl["execute"].to_numpy())
    stop = nearest(par, ~skip, include_self=True)  # first non-skipped at or above each slice
    start = np.where(par >= 0, stop[np.maximum(par, 0)], -1)  # from the parent upwards
    ok = start >= 0
    st = np.maximum(start, 0)
    hit = ok & is_op[st]
    uid = sl["uid"].to_numpy()
    launcher = np.where(hit, uid[st], uid)
    is_launch = cat.is_in(list(LAUNCH_CATS)).fill_null(False).to_numpy()
    return pl.DataFrame(
        {"trace_id": sl["trace_id"].filter(pl.Series(is_launch)), "uid": uid[is_launch], "launcher_uid": launcher[is_launch]}
    )


def op_paths(sl, par, k):
    """(trace_id, uid, op_path) per kernel: its op_uid and every cpu_op above it, nearest first.

    A kernel was launched beneath cpu_op X exactly when X is in its op_path, so subtree
    sums are equality joins on unnest(op_path) rather than range joins on the pre-order.
    `sl`: every slice's trace_id, uid and cat; `par`: its parent_index; `k`: the kernels
    (trace_id, uid, _launch_row: the row of their launch slice in `sl`). The walk is on row numbers: one step up per level for all
    kernels at once.
    """
    uid = sl["uid"].to_numpy()
    is_op = (sl["cat"] == "cpu_op").fill_null(False).to_numpy()
    op = nearest(par, is_op)  # the op at or above each slice (slices.op_uid, as a row)
    up = np.where(par >= 0, op[np.maximum(par, 0)], -1)  # the op strictly above
    launch = k["_launch_row"].cast(pl.Int64).fill_null(-1).to_numpy()
    row = op[launch] if len(op) else launch  # = the kernel's op_uid, as a row (op[-1] is never read)
    row = np.where(launch >= 0, row, -1)
    levels = []
    while (row >= 0).any():
        levels.append(row)
        row = np.where(row >= 0, up[np.maximum(row, 0)], -1)
    steps = np.stack(levels, axis=1) if levels else np.empty((k.height, 0), np.int64)
    have = steps >= 0  # each row: a run of True, then False
    lengths = have.sum(axis=1)
    offsets = np.zeros(k.height + 1, np.int32)
    np.cumsum(lengths, out=offsets[1:])
    paths = pa.ListArray.from_arrays(pa.array(offsets), pa.array(uid[steps[have]], pa.int64()), mask=pa.array(lengths == 0))
    return pl.DataFrame({"trace_id": k["trace_id"], "uid": k["uid"], "op_path": pl.from_arrow(paths)})
