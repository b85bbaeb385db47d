"""Link Execution Trace (ET) nodes to the Kineto trace of the same run.

Which key links them:

1. `record_function_id` — the ET node's `rf_id` is written by the profiler as the op's
   `Record function id` arg (torch with the ExecutionTraceObserver attached to the profiler,
   2024 on). A plain equality join. A Kineto id shared by several ops (profilers without the
   observer write `Record function id: 0` on every op) is no key and is ignored.
2. `external_id` — older traces (2023) carry no `Record function id`. The ET's `rf_id` and
   Kineto's `External id` are both counters that number ops as they start, over all threads,
   but each side skips ops the other records (Kineto's `ProfilerStep#N`, the ET's late start),
   and a block can even come in another order on each side (DLRM's optimizer step), so the ids
   are not equal. The link aligns the two sequences by name (`_by_external_id`): runs of
   consecutive ops that agree are anchors, the gaps between them are filled in order. Where
   every link has `External id == rf_id` the method is reported as `external_id`, otherwise as
   `external_id_aligned`. The ET does not say which iteration it recorded: when several
   iterations fit equally well, the one with the smallest id difference is taken.

Names must agree: an id match whose names differ is counted (`name_mismatch`) and not linked.
The ET's own bookkeeping nodes (`[pytorch|profiler|execution_trace|…]`) have no Kineto
counterpart and are not counted in the match rate.

Each linked node gets its Kineto op's uid, pid, tid, start, inclusive duration and exclusive
duration (inclusive minus its child ops, cpu_op and user_annotation, on the host tree) and the
device work it launched: a kernel belongs to the nearest linked node at or above its launch call
(`et_kernels`), and every node counts the kernels launched anywhere in its subtree.
"""

import numpy as np
import polars as pl
import pyarrow as pa

from ..errors import Unsupported
from .frames import frame
from .tree import nearest

MIN_RUN = 3  # shortest run of consecutive same-name pairs taken as an anchor
OP_CATS = ("cpu_op", "user_annotation")
_ET_SELF = "[pytorch|profiler|execution_"  # the ET's own process/thread annotation nodes

LINK_COLUMNS = [
    ("kineto_uid", pa.int64()),
    ("link_key", pa.int64()),
    ("kineto_name", pa.string()),
    ("kineto_pid", pa.int64()),
    ("kineto_tid", pa.int64()),
    ("ts_ns", pa.int64()),
    ("dur_ns", pa.int64()),
    ("end_ns", pa.int64()),
    ("exclusive_ns", pa.int64()),
    ("n_kernels", pa.int64()),
    ("kernel_dur_ns", pa.int64()),
    ("n_kernels_subtree", pa.int64()),
    ("kernel_dur_subtree_ns", pa.int64()),
]

# the columns of the Kineto base tables that link() reads (all a caller needs to read of them)
KINETO_COLUMNS = {
    "events": ("trace_id", "uid", "record_function_id"),
    "slices": (
        "trace_id",
        "uid",
        "cat",
        "name",
        "pid",
        "tid",
        "ts_ns",
        "dur_ns",
        "end_ns",
        "external_id",
        "parent_uid",
        "pre",
        "subtree_end",
    ),
    "kernels": ("trace_id", "uid", "cat", "name", "device", "stream", "correlation", "ts_ns", "dur_ns", "launch_uid"),
}

KERNEL_SCHEMA = pa.schema(
    [
        ("node_id", pa.int64()),
        ("uid", pa.int64()),
        ("cat", pa.string()),
        ("name", pa.string()),
        ("device", pa.int64()),
        ("stream", pa.int64()),
        ("correlation", pa.int64()),
        ("ts_ns", pa.int64()),
        ("dur_ns", pa.int64()),
        ("launch_uid", pa.int64()),
    ]
)


def _kineto_ops(events, slices):
    """polars frame of the Kineto ops (cpu_op, user_annotation slices) of trace 0 with their ids."""
    sl = frame(slices.select(["trace_id", "uid", "cat", "name", "pid", "tid", "ts_ns", "dur_ns", "end_ns", "external_id"]))
    sl = sl.filter((pl.col("trace_id") == 0) & pl.col("cat").is_in(list(OP_CATS)))
    ids = (
        frame(events.select(["trace_id", "uid", "record_function_id"]))
        .filter((pl.col("trace_id") == 0) & pl.col("record_function_id").is_not_null())
        .select(["uid", "record_function_id"])
    )
    return sl.join(ids, on="uid", how="left")


def _et_ops(nodes):
    et = frame(nodes.select(["node_id", "name", "parent_id", "rf_id", "tid"]))
    return et.with_columns(pl.col("name").fill_null("").str.starts_with(_ET_SELF).alias("et_self"))


def _by_record_function_id(et, ops):
    """(node_id -> kineto uid, name mismatches) by equality of rf_id and Record function id."""
    k = (
        ops.filter(pl.col("record_function_id").is_not_null())
        .with_columns(pl.len().over("record_function_id").alias("_n"))
        .filter(pl.col("_n") == 1)
        .select(
            [
                pl.col("record_function_id").alias("rf_id"),
                pl.col("uid").alias("kineto_uid"),
                pl.col("name").alias("kineto_name"),
                pl.col("record_function_id").alias("link_key"),
            ]
        )
    )
    cand = (
        et.filter(~pl.col("et_self") & pl.col("rf_id").is_not_null())
        .with_columns(pl.len().over("rf_id").alias("_m"))
        .filter(pl.col("_m") == 1)
        .join(k, on="rf_id", how="inner")
    )
    same = cand.filter(pl.col("name") == pl.col("kineto_name"))
    return same.select(["node_id", "kineto_uid", "link_key"]), cand.height - same.height


def _by_external_id(et, ops, min_run=MIN_RUN):
    """Align ET nodes (in rf_id order) with Kineto ops (in External id order); see the module doc.

    Positions, not raw ids, are compared: i numbers the ET nodes by rf_id, j the Kineto ops by
    External id. Every (i, j) with equal names is a candidate; candidates on one diagonal
    (j - i constant) at consecutive i form a run. Runs of at least `min_run` are taken longest
    first (ties: the smallest difference External id - rf_id, as both count from the start of
    the same process), each pair only while both ends are still free; this
    survives blocks that the two traces order differently (DLRM's optimizer step) and ops that
    only one side records. The gaps left between taken pairs are then filled in order: an
    unmatched node takes the first free op of its name between its neighbours' ops.
    """
    k = (
        ops.filter(pl.col("external_id").is_not_null())
        .sort(["external_id", "ts_ns", "uid"])
        .with_row_index("j")
        .select(["j", "name", "uid", "external_id"])
    )
    e = (
        et.filter(~pl.col("et_self") & pl.col("rf_id").is_not_null())
        .sort(["rf_id", "node_id"])
        .with_row_index("i")
        .select(["i", "name", "node_id", "rf_id"])
    )
    n_e, n_k = e.height, k.height
    empty = pl.DataFrame(schema={"node_id": pl.Int64, "kineto_uid": pl.Int64, "link_key": pl.Int64})
    if n_e == 0 or n_k == 0:
        return empty, 0
    pairs = e.select(["i", "name"]).join(k.select(["j", "name"]), on="name", how="inner")
    mi = np.full(n_e, -1, np.int64)  # ET position -> Kineto position
    used = np.zeros(n_k, bool)
    if pairs.height:
        rf = e["rf_id"].to_numpy()
        ext = k["external_id"].to_numpy()
        pi = pairs["i"].to_numpy().astype(np.int64)
        pd = pairs["j"].to_numpy().astype(np.int64) - pi
        key = np.sort((pd + n_e) * (n_e + 1) + pi)  # by diagonal, then i
        dg = key // (n_e + 1) - n_e
        ii = key % (n_e + 1)
        start = np.ones(len(key), bool)
        start[1:] = (dg[1:] != dg[:-1]) | (ii[1:] != ii[:-1] + 1)
        first = np.flatnonzero(start)
        ln = np.diff(np.concatenate([first, [len(key)]]))
        keep = ln >= min_run
        i0, dg, ln = ii[first][keep], dg[first][keep], ln[keep]
        drift = np.abs(ext[i0 + dg] - rf[i0]) if len(i0) else i0
        order = np.lexsort((i0, drift, -ln))  # longest first, then the smallest id drift
        left = n_e
        for r in order:
            ii = np.arange(i0[r], i0[r] + ln[r])
            jj = ii + dg[r]
            ok = (mi[ii] < 0) & ~used[jj]
            if ok.any():
                mi[ii[ok]] = jj[ok]
                used[jj[ok]] = True
                left -= int(ok.sum())
                if left == 0:
                    break
    _fill_gaps(mi, used, e["name"].to_list(), k["name"].to_list())
    got = np.flatnonzero(mi >= 0)
    links = pl.DataFrame(
        {
            "node_id": e["node_id"].to_numpy()[got],
            "kineto_uid": k["uid"].to_numpy()[mi[got]],
            "link_key": k["external_id"].to_numpy()[mi[got]],
        },
        schema={"node_id": pl.Int64, "kineto_uid": pl.Int64, "link_key": pl.Int64},
    )
    shifted = int((k["external_id"].to_numpy()[mi[got]] != e["rf_id"].to_numpy()[got]).sum())
    return links, shifted


def _fill_gaps(mi, used, et_names, k_names):
    """Match the nodes left between two taken pairs, in order, by name (a walk per gap)."""
    n_e, n_k = len(mi), len(used)
    i = 0
    while i < n_e:
        if mi[i] >= 0:
            i += 1
            continue
        a = i
        while i < n_e and mi[i] < 0:
            i += 1
        lo = mi[a - 1] + 1 if a > 0 else 0
        hi = mi[i] if i < n_e else n_k
        if hi <= lo:
            continue
        j = lo
        for g in range(a, i):
            want = et_names[g]
            q = j
            while q < hi and (used[q] or k_names[q] != want):
                q += 1
            if q < hi:
                mi[g] = q
                used[q] = True
                j = q + 1


def choose_method(ops):
    """('record_function_id' | 'external_id', why) for a Kineto ops frame; raises Unsupported if neither."""
    rfid = ops["record_function_id"].drop_nulls()
    n_ops = ops.height
    if n_ops == 0:
        raise Unsupported("kineto", "the Kineto trace has no cpu_op or user_annotation events to link to")
    if rfid.len() and (rfid != 0).any():
        return "record_function_id", f"'Record function id' on {rfid.len()} of {n_ops} ops"
    why = (
        "no 'Record function id' args"
        if rfid.len() == 0
        else "'Record function id' is 0 on every op (the profiler ran without an ExecutionTraceObserver)"
    )
    if ops["external_id"].drop_nulls().len():
        return "external_id", why + "; linking by 'External id' order"
    raise Unsupported(
        "kineto",
        f"cannot link: the Kineto trace has {why} and no 'External id' on its ops, "
        "so nothing identifies an op across the two traces; record both with "
        "torch.profiler.profile(execution_trace_observer=ExecutionTraceObserver(...))",
    )


def link(et_nodes, events, slices, kernels, et_pid=None):
    """Link an ET (et_nodes Arrow table) to a Kineto trace's base tables.

    Returns (et_nodes with the LINK_COLUMNS added, et_kernels Arrow table, summary dict).
    """
    ops = _kineto_ops(events, slices)
    et = _et_ops(et_nodes)
    method, why = choose_method(ops)
    mismatch = 0
    if method == "record_function_id":
        links, mismatch = _by_record_function_id(et, ops)
        shifted = 0
    else:
        links, shifted = _by_external_id(et, ops)
        if shifted:
            method = "external_id_aligned"
    eligible = et.filter(~pl.col("et_self")).height
    matched = links.height

    nodes_out, kern = _attach(et_nodes, links, slices, kernels)
    ops_in = ops.height
    pids = ops["pid"].unique().to_list()
    summary = {
        "method": method,
        "why": why,
        "et_nodes": et.height,
        "et_ops": eligible,
        "matched": matched,
        "match_rate": round(matched / eligible, 6) if eligible else 0.0,
        "kineto_ops": ops_in,
        "kineto_ops_matched": matched,
        "kineto_coverage": round(matched / ops_in, 6) if ops_in else 0.0,
        "name_mismatch": int(mismatch),
        "shifted_links": int(shifted),
        "kernels": int(kernels.num_rows),
        "kernels_linked": int(kern.num_rows),
        "et_pid": et_pid,
        "kineto_pids": sorted(p for p in pids if p is not None),
        "pid_match": None if et_pid is None else et_pid in pids,
    }
    summary["parent_consistent"] = _parent_consistency(nodes_out, slices)
    return nodes_out, kern, summary


def _attach(et_nodes, links, slices, kernels):
    """Add the Kineto columns to et_nodes and collect the kernels of each linked node."""
    sl = frame(
        slices.select(
            ["trace_id", "uid", "cat", "name", "pid", "tid", "ts_ns", "dur_ns", "end_ns", "parent_uid", "pre", "subtree_end"]
        )
    )
    sl = sl.filter(pl.col("trace_id") == 0).sort("pre")
    n = sl.height
    uid = sl["uid"].to_numpy()
    pos_of = pl.DataFrame({"uid": uid, "_i": np.arange(n, dtype=np.int64)})
    parent = (
        (
            sl.select(pl.col("parent_uid").alias("uid"))
            .join(pos_of, on="uid", how="left", maintain_order="left")["_i"]
            .fill_null(-1)
            .to_numpy()
            .astype(np.int64)
        )
        if n
        else np.empty(0, np.int64)
    )
    cat = sl["cat"].fill_null("").to_numpy()
    is_op = np.isin(cat, list(OP_CATS))
    dur = sl["dur_ns"].fill_null(0).to_numpy().astype(np.int64)
    # exclusive: inclusive minus the child ops (nearest op strictly above is the node)
    up = nearest(parent, is_op, include_self=False) if n else np.empty(0, np.int64)
    child = is_op & (up >= 0)
    child_sum = np.bincount(up[child], weights=dur[child], minlength=n).astype(np.int64) if n else up
    excl = np.maximum(dur - child_sum, 0)
    # linked slices, and the nearest linked slice at or above each slice
    lk = links.join(pos_of.rename({"uid": "kineto_uid"}), on="kineto_uid", how="inner")
    linked = np.zeros(n, bool)
    node_of = np.full(n, -1, np.int64)
    li = lk["_i"].to_numpy()
    linked[li] = True
    node_of[li] = lk["node_id"].to_numpy()
    owner = nearest(parent, linked) if n else np.empty(0, np.int64)

    k = frame(
        kernels.select(["trace_id", "uid", "cat", "name", "device", "stream", "correlation", "ts_ns", "dur_ns", "launch_uid"])
    )
    k = k.filter((pl.col("trace_id") == 0) & pl.col("launch_uid").is_not_null())
    k = k.join(pos_of.rename({"uid": "launch_uid"}), on="launch_uid", how="inner")
    ki = k["_i"].to_numpy().astype(np.int64)
    kown = owner[ki] if len(ki) else ki
    kdur = k["dur_ns"].fill_null(0).to_numpy().astype(np.int64)
    has = kown >= 0
    kern = (
        k.with_columns(pl.Series("node_id", np.where(has, node_of[np.maximum(kown, 0)], -1)))
        .filter(pl.Series(has))
        .sort(["node_id", "ts_ns", "uid"])
    )
    kern_t = pa.table([kern[f.name].to_arrow().cast(f.type) for f in KERNEL_SCHEMA], schema=KERNEL_SCHEMA)
    n_direct = np.bincount(kown[has], minlength=n) if n else np.empty(0, np.int64)
    d_direct = np.bincount(kown[has], weights=kdur[has], minlength=n).astype(np.int64) if n else n_direct
    # subtree: kernels whose launch slice lies in [pre, subtree_end] (slices sorted by pre = positions)
    order = np.argsort(ki, kind="stable")
    ks = ki[order]
    csum = np.concatenate([[0], np.cumsum(kdur[order])])
    pre = np.arange(n, dtype=np.int64)
    sub_end = sl["subtree_end"].to_numpy().astype(np.int64) - (sl["pre"].to_numpy().astype(np.int64) - pre)
    lo = np.searchsorted(ks, pre, "left")
    hi = np.searchsorted(ks, sub_end, "right")

    per = (
        pl.DataFrame(
            {
                "_i": li,
                "node_id": lk["node_id"].to_numpy(),
                "kineto_uid": lk["kineto_uid"].to_numpy(),
                "link_key": lk["link_key"].to_numpy(),
            }
        )
        .with_columns(
            pl.Series("kineto_name", sl["name"].to_numpy()[li] if n else []),
            pl.Series("kineto_pid", sl["pid"].to_numpy()[li] if n else [], dtype=pl.Int64),
            pl.Series("kineto_tid", sl["tid"].to_numpy()[li] if n else [], dtype=pl.Int64),
            pl.Series("ts_ns", sl["ts_ns"].to_numpy()[li] if n else [], dtype=pl.Int64),
            pl.Series("dur_ns", dur[li], dtype=pl.Int64),
            pl.Series("end_ns", sl["ts_ns"].to_numpy()[li] + dur[li] if n else [], dtype=pl.Int64),
            pl.Series("exclusive_ns", excl[li], dtype=pl.Int64),
            pl.Series("n_kernels", n_direct[li], dtype=pl.Int64),
            pl.Series("kernel_dur_ns", d_direct[li], dtype=pl.Int64),
            pl.Series("n_kernels_subtree", (hi - lo)[li], dtype=pl.Int64),
            pl.Series("kernel_dur_subtree_ns", (csum[hi] - csum[lo])[li], dtype=pl.Int64),
        )
        .drop("_i")
    )
    base = frame(et_nodes.select(["node_id"])).with_row_index("_row")  # the node's own columns stay Arrow
    out = base.join(per, on="node_id", how="left").sort("_row").drop("_row")
    cols = [et_nodes.column(name) for name in et_nodes.column_names]
    fields = list(et_nodes.schema)
    for name, typ in LINK_COLUMNS:
        cols.append(out[name].to_arrow().cast(typ))
        fields.append(pa.field(name, typ))
    return pa.table(cols, schema=pa.schema(fields)), kern_t


def _parent_consistency(nodes, slices):
    """Share of linked nodes with a linked ET parent whose Kineto op is an ancestor of the node's
    Kineto op on the host tree (a check of the link that does not use the ids)."""
    nd = frame(nodes.select(["node_id", "parent_id", "kineto_uid"]))
    pairs = (
        nd.filter(pl.col("kineto_uid").is_not_null())
        .join(nd.select([pl.col("node_id").alias("parent_id"), pl.col("kineto_uid").alias("p_uid")]), on="parent_id", how="inner")
        .filter(pl.col("p_uid").is_not_null())
    )
    if pairs.height == 0:
        return None
    sl = frame(slices.select(["trace_id", "uid", "pre", "subtree_end", "pid", "tid"])).filter(pl.col("trace_id") == 0)
    a = pairs.join(sl.select([pl.col("uid").alias("kineto_uid"), "pre"]), on="kineto_uid").join(
        sl.select([pl.col("uid").alias("p_uid"), pl.col("pre").alias("p_pre"), "subtree_end"]), on="p_uid"
    )
    ok = a.filter((pl.col("pre") > pl.col("p_pre")) & (pl.col("pre") <= pl.col("subtree_end"))).height
    return round(ok / a.height, 6) if a.height else None
