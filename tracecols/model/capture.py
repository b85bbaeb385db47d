"""Graph replays: the device work of a CUDA/HIP graph launch, given to the ops that captured it.

A graph launch (cudaGraphLaunch / hipGraphLaunch) runs hundreds of kernels under one
correlation id, so the replay trace alone cannot say which op each kernel belongs to.
Serving frameworks can profile the graph capture too: in that *capture trace* every kernel
the graph holds appears as a launch call (hipLaunchKernel, cudaLaunchKernel, memcpy …) that
never ran (no device event has its correlation), under the op, Python frames and
`nn.Module` frames that issued it, in graph order.

Matching (docs/graphs.md): the device events of one graph launch, in (ts, uid) order, are a
*sequence*; equal sequences are matched once. A sequence of n events matches the captured
calls at positions o … o+n-1 of a capture file when every pair agrees on kind (kernel,
memcpy, memset) and, where the capture names the kernel (`args.kernel`, written by ROCm),
on name. The first window that matches in full wins (capture files in the order given,
then position); a sequence that matches no window in full is reported (graph_replays:
the window that came closest and its first disagreement) and never attributed.

Grafting: for each matched launch, the captured calls of its window and their ancestors
that matter (cpu_ops, user annotations, `nn.Module` frames, each op's nearest Python frame;
other Python frames are passed over) are copied under the graph launch slice as new slices
with negative uids, host time 0 (no host work happens at replay), the capture's names and
args (events rows with the same uids). The kernels then point at the grafted ops
(op_uid, top_op_uid, launcher_uid, op_path), while launch_uid stays the graph launch, the
call that really ran on the host. Every view keyed on those columns works unchanged.

Without a match (or without capture traces) the kernels of a graph launch get one pseudo
op, `graph replay @ <nearest own Python frame>`, so that none of their time is hidden.
"""

from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from .frames import frame
from .kernels import LAUNCH_CATS, op_paths, parent_index
from .tree import SLICES_SCHEMA, annotation_above, nearest, prev_greater, stack_ids, uid_column

GRAPH_LAUNCH = r"GraphLaunch"  # cudaGraphLaunch, hipGraphLaunch, cuGraphLaunch (and _v… variants)
_CAPTURED_CALL = r"(?i)launch|memcpy|memset"
_MODULE = "nn.Module: "

GRAPH_REPLAYS_SCHEMA = pa.schema(
    [
        ("trace_id", pa.int32()),
        ("rank", pa.int32()),
        ("launch_uid", pa.int64()),
        ("launch_name", pa.string()),
        ("ts_ns", pa.int64()),
        ("kernels", pa.int64()),
        ("kernel_sum_ns", pa.int64()),
        ("site", pa.string()),
        ("matched", pa.bool_()),
        ("capture_path", pa.string()),
        ("capture_batch_size", pa.int64()),
        ("capture_mode", pa.string()),
        ("capture_offset", pa.int64()),
        ("candidates", pa.int64()),
        ("mismatch_at", pa.int64()),
        ("mismatch_kernel", pa.string()),
        ("mismatch_captured", pa.string()),
    ]
)

GRAPH_NODES_SCHEMA = pa.schema(
    [
        ("trace_id", pa.int32()),
        ("uid", pa.int64()),
        ("graph_launch_uid", pa.int64()),
        ("capture_path", pa.string()),
        ("capture_uid", pa.int64()),
        ("pseudo", pa.bool_()),
    ]
)


def _kind(cat_or_name, is_call):
    low = pl.col(cat_or_name).fill_null("").str.to_lowercase()
    if is_call:
        return (
            pl.when(low.str.contains("memcpy"))
            .then(pl.lit("memcpy"))
            .when(low.str.contains("memset"))
            .then(pl.lit("memset"))
            .otherwise(pl.lit("kernel"))
        )
    return (
        pl.when(low == "gpu_memcpy")
        .then(pl.lit("memcpy"))
        .when(low == "gpu_memset")
        .then(pl.lit("memset"))
        .otherwise(pl.lit("kernel"))
    )


class Capture:
    """The captured calls of one capture trace, ready to be matched and grafted.

    `tables`: that trace's base tables (events, slices, kernels as Arrow); `path`,
    `batch_size`, `mode` describe it (execution_details.json)."""

    def __init__(self, index, path, tables, batch_size=None, mode=None):
        self.index, self.path, self.batch_size, self.mode = index, path, batch_size, mode
        sl = frame(tables["slices"]).sort("pre")
        self.slices = sl
        self.events = tables["events"]
        ran = frame(tables["kernels"].select(["launch_uid"])).drop_nulls().unique()
        args = frame(tables["events"].select(["uid", "args"]))
        calls = (
            sl.with_row_index("row")
            .filter(
                pl.col("cat").is_in(list(LAUNCH_CATS))
                & pl.col("name").str.contains(_CAPTURED_CALL)
                & ~pl.col("name").str.contains(GRAPH_LAUNCH)
            )
            .join(ran, left_on="uid", right_on="launch_uid", how="anti")
            .join(args, on="uid", how="left")
            .sort(["ts_ns", "uid"])
            .select(
                pl.lit(index, pl.Int32).alias("file"),
                pl.int_range(pl.len(), dtype=pl.Int64).alias("pos"),
                pl.col("row").cast(pl.Int64),
                "uid",
                _kind("name", True).alias("kind"),
                pl.col("args").str.json_path_match("$.kernel").alias("kname"),
            )
        )
        self.calls = calls
        # what every template reads, worked out once per capture file
        par = parent_index(sl)
        cat = sl["cat"].fill_null("")
        self.is_op = (cat == "cpu_op").to_numpy()
        self.is_py = (cat == "python_function").to_numpy()
        self.is_mod = self.is_py & sl["name"].fill_null("").str.starts_with(_MODULE).to_numpy()
        py_of_op = nearest(par, self.is_py, include_self=False)[self.is_op]
        keep = self.is_op | (cat == "user_annotation").to_numpy() | self.is_mod
        keep[py_of_op[py_of_op >= 0]] = True
        keep[calls["row"].to_numpy()] = True
        # each slice's nearest kept ancestor: a template climbs these, not the whole tree
        self.kpar = nearest(par, keep, include_self=False)
        self.execute = (sl["name"] == "execute").fill_null(False).to_numpy()
        self._templates = {}

    def template(self, offset, n):
        """The graft of the window [offset, offset + n) (see _template), computed once per window."""
        if (offset, n) not in self._templates:
            self._templates[(offset, n)] = self._template(offset, n)
        return self._templates[(offset, n)]

    def _template(self, offset, n):
        """The nodes grafted for a launch matched at [offset, offset + n): a polars frame in
        pre-order with local indices (j), local parent, depth, subtree end, op, top op,
        Python frame, module frame (-1: none within the graft), and per captured call its
        position in the window (i), launcher and op path (local indices)."""
        sl, kpar = self.slices, self.kpar
        rows = self.calls["row"].to_numpy()[offset : offset + n]
        is_op, is_py, is_mod = self.is_op, self.is_py, self.is_mod
        seen = np.zeros(sl.height, bool)
        front = np.unique(rows)
        while front.size:  # the window's calls and their kept ancestors, one level per step
            seen[front] = True
            up = kpar[front]
            up = np.unique(up[up >= 0])
            front = up[~seen[up]]
        local = np.full(sl.height, -1, np.int64)
        idx = np.flatnonzero(seen)  # rows in pre-order
        local[idx] = np.arange(idx.size)
        lpar_row = kpar[idx]
        lpar = np.where(lpar_row >= 0, local[np.maximum(lpar_row, 0)], -1)
        t = idx.size
        depth = np.zeros(t, np.int64)
        cur = lpar.copy()
        while (cur >= 0).any():
            depth += cur >= 0
            cur = np.where(cur >= 0, lpar[np.maximum(cur, 0)], -1)
        jr = prev_greater(-depth[::-1], -depth[::-1] - 1)[::-1]
        sub_end = np.where(jr >= 0, (t - 1 - jr) - 1, t - 1)
        is_op_l, is_py_l, is_mod_l = is_op[idx], is_py[idx], is_mod[idx]
        op = nearest(lpar, is_op_l)
        up_op = np.where(lpar >= 0, op[np.maximum(lpar, 0)], -1)
        top = op.copy()
        while True:  # outermost op: follow the op above while there is one
            nxt = np.where(top >= 0, up_op[np.maximum(top, 0)], -1)
            if not (nxt >= 0).any():
                break
            top = np.where(nxt >= 0, nxt, top)
        tsl = (
            sl[idx]
            .select(["cat", "name", "uid"])
            .with_columns(
                pl.int_range(pl.len(), dtype=pl.Int64).alias("j"),
                pl.Series("lpar", lpar),
                pl.Series("ldepth", depth),
                pl.Series("lsub", sub_end.astype(np.int64)),
                pl.Series("lop", op),
                pl.Series("ltop", top),
                pl.Series("lpy", nearest(lpar, is_py_l, include_self=False)),
                pl.Series("lmod", nearest(lpar, is_mod_l, include_self=False)),
                pl.Series("nchild", np.bincount(lpar[lpar >= 0], minlength=t).astype(np.int32)),
            )
        )
        # per call of the window: its launcher (kernels.launcher_map's rule: up from the call,
        # past Python frames and `execute` ops, the first cpu_op; else the call itself) and op path
        calls_local = local[rows]
        skip = is_py_l | (is_op_l & self.execute[idx])
        stop = nearest(lpar, ~skip, include_self=False)[calls_local]
        launcher = np.where((stop >= 0) & is_op_l[np.maximum(stop, 0)], stop, calls_local)
        tree = pl.DataFrame({"trace_id": np.zeros(t, np.int32), "uid": np.arange(t, dtype=np.int64), "cat": tsl["cat"]})
        paths = op_paths(
            tree,
            lpar,
            pl.DataFrame({"trace_id": np.zeros(n, np.int32), "uid": np.arange(n, dtype=np.int64), "_launch_row": calls_local}),
        )
        per_call = pl.DataFrame(
            {"i": np.arange(n, dtype=np.int64), "j": calls_local, "llauncher": launcher, "lpath": paths["op_path"]}
        )
        return tsl, per_call


def graph_kernels(kernels):
    """The device events of graph launches (polars), with their position `i` in the launch."""
    k = frame(kernels) if isinstance(kernels, pa.Table) else kernels
    return (
        k.filter(pl.col("launch_name").str.contains(GRAPH_LAUNCH).fill_null(False))
        .sort(["trace_id", "launch_uid", "ts_ns", "uid"])
        .with_columns(
            pl.int_range(pl.len(), dtype=pl.Int64).over(["trace_id", "launch_uid"]).alias("i"), _kind("cat", False).alias("kind")
        )
    )


def match(gk, captures, sizes=None):
    """One row per graph launch: (trace_id, launch_uid, n, file, offset, candidates, mismatch_at,
    mismatch_kernel, mismatch_captured); file/offset null where nothing matched in full.

    `sizes`: (trace_id, launch_uid, size), the batch size the serving framework wrote around
    a launch, if known. Among windows that match in full, those of the capture file whose
    batch size is the one a batch of that size runs in (the smallest captured size at least
    as large, as frameworks pad a batch up to a captured size) come first."""
    seq = gk.group_by(["trace_id", "launch_uid"], maintain_order=True).agg(
        pl.len().alias("n"), pl.concat_str([pl.col("kind"), pl.col("name").fill_null("")], separator="\x1f").hash().alias("h")
    )
    seq = seq.with_columns(pl.col("h").hash().alias("sig")).drop("h")
    seq = seq.join(_target_sizes(sizes, captures), on=["trace_id", "launch_uid"], how="left")
    reps = (
        seq.with_row_index("_o")
        .sort("_o")
        .unique(["sig", "n", "target"], keep="first", maintain_order=True)
        .with_row_index("seq")
        .select(["seq", "sig", "n", "target", "trace_id", "launch_uid"])
    )
    seq = seq.join(reps.select(["sig", "n", "target", "seq"]), on=["sig", "n", "target"], how="left", nulls_equal=True)
    if not captures or seq.height == 0:
        return seq.select(["trace_id", "launch_uid", "n"]).with_columns(
            pl.lit(None, pl.Int32).alias("file"),
            pl.lit(None, pl.Int64).alias("offset"),
            pl.lit(0, pl.Int64).alias("candidates"),
            pl.lit(None, pl.Int64).alias("mismatch_at"),
            pl.lit(None, pl.String).alias("mismatch_kernel"),
            pl.lit(None, pl.String).alias("mismatch_captured"),
        )
    rk = (
        gk.join(reps.select(["trace_id", "launch_uid", "seq"]), on=["trace_id", "launch_uid"])
        .sort(["seq", "i"])
        .select(["seq", "kind", "name"])
    )
    per_seq = _windows(rk, reps, captures)
    return seq.join(per_seq, on="seq", how="left").select(
        ["trace_id", "launch_uid", "n", "file", "offset", "candidates", "mismatch_at", "mismatch_kernel", "mismatch_captured"]
    )


_KINDS = {"kernel": 0, "memcpy": 1, "memset": 2}


def _windows(rk, reps, captures):
    """Per distinct sequence: the window of the capture files it matches in full (the first by
    file and position, those of the target batch size first) and how many do; else the closest
    window among those whose first pair agrees (most agreeing pairs, then the first) and its
    first disagreement. All windows of a file are compared at once (a 2-D gather), so the only
    Python loops are over distinct sequences and capture files."""
    names = (
        pl.concat([rk["name"], *[c.calls["kname"] for c in captures]])
        .drop_nulls()
        .unique()
        .to_frame("name")
        .with_row_index("code")
    )

    def codes(col):  # a name's code, -1 for none: a join, not a Python loop over the kernels
        return (
            col.to_frame("name")
            .join(names, on="name", how="left", maintain_order="left")["code"]
            .cast(pl.Int64)
            .fill_null(-1)
            .to_numpy()
        )

    def kinds(col):
        return col.replace_strict(_KINDS, return_dtype=pl.Int64).to_numpy()

    rkind, rname = kinds(rk["kind"]), codes(rk["name"])
    starts = np.searchsorted(rk["seq"].to_numpy(), np.arange(reps.height + 1))
    files = [(c.index, c.batch_size, kinds(c.calls["kind"]), codes(c.calls["kname"])) for c in captures]
    by_index = {c.index: c for c in captures}
    rows: list[tuple[Any, ...]] = []
    for sq, target in enumerate(reps["target"].to_list()):
        a, b = starts[sq], starts[sq + 1]
        kind, name, n = rkind[a:b], rname[a:b], b - a
        full, close = [], None  # full: (other size, file, offset); close: (-good, file, offset, bad)
        for f, fsize, ck, cn in files:
            if len(ck) < n:
                continue
            first = np.flatnonzero(
                (ck[: len(ck) - n + 1] == kind[0]) & ((cn[: len(ck) - n + 1] < 0) | (cn[: len(ck) - n + 1] == name[0]))
            )
            for chunk in np.array_split(first, max(1, len(first) * n // 4_000_000 + 1)):
                if not len(chunk):
                    continue
                at = chunk[:, None] + np.arange(n)[None, :]
                ok = (ck[at] == kind) & ((cn[at] < 0) | (cn[at] == name))
                good = ok.sum(axis=1)
                other = target is not None and fsize != target
                full += [(other, f, int(o)) for o in chunk[good == n]]
                part = np.flatnonzero(good < n)
                if len(part):
                    best = part[np.argmax(good[part])]  # the first of the most agreeing
                    cand = (-int(good[best]), f, int(chunk[best]), int(np.argmin(ok[best])))
                    close = cand if close is None or cand < close else close
        if full:
            _, f, o = min(full)
            rows.append((sq, f, o, len(full), None, None, None))
        elif close is None:
            rows.append((sq, None, None, 0, 0, rk["name"][int(a)], None))
        else:
            _, f, o, bad = close
            call = by_index[f].calls.row(o + bad, named=True)
            rows.append((sq, None, None, 0, bad, rk["name"][int(a + bad)], call["kname"] or call["kind"]))
    return pl.DataFrame(
        rows,
        orient="row",
        schema={
            "seq": pl.UInt32,
            "file": pl.Int32,
            "offset": pl.Int64,
            "candidates": pl.Int64,
            "mismatch_at": pl.Int64,
            "mismatch_kernel": pl.String,
            "mismatch_captured": pl.String,
        },
    )


def _target_sizes(sizes, captures):
    """(trace_id, launch_uid, target): the captured batch size each sized launch should run in."""
    caps = sorted({c.batch_size for c in captures if getattr(c, "batch_size", None) is not None})
    schema = {"trace_id": pl.Int32, "launch_uid": pl.Int64, "target": pl.Int64}
    if sizes is None or not caps or sizes.height == 0:
        return pl.DataFrame(schema=schema)
    at = np.searchsorted(np.array(caps), sizes["size"].fill_null(-1).to_numpy(), side="left")
    target = np.array(caps + [caps[-1]])[at]
    return sizes.select(
        "trace_id", "launch_uid", pl.when(pl.col("size").is_not_null()).then(pl.Series(target)).alias("target")
    ).cast(schema)


_SERVING_STEP = r"^execute_\d+_context_\d+\(.*\)_generation_\d+\(|^step\[[A-Za-z]+"


def _launch_sizes(sl, launch_rows, par, launches):
    """(trace_id, launch_uid, size) from the serving step annotation around each graph launch:
    execute_<tokens>_… (vLLM) or step[… bs=N] (SGLang)."""
    name = sl["name"].fill_null("")
    step = ((sl["cat"] == "user_annotation").fill_null(False) & name.str.contains(_SERVING_STEP)).to_numpy()
    around = nearest(par, step, include_self=False)[launch_rows]
    names = pl.Series([name[int(a)] if a >= 0 else None for a in around], dtype=pl.String)
    size = pl.coalesce(names.str.extract(r"^execute_(\d+)_", 1), names.str.extract(r"bs=(\d+)", 1)).cast(pl.Int64)
    return launches.select("trace_id", "launch_uid").with_columns(size.alias("size"))


def _site(sl, launch_rows, par):
    """`graph replay @ file.py(line): function` per launch row: the nearest Python frame above
    the launch that is the program's own (not torch's, not a built-in)."""
    name = sl["name"].fill_null("")
    own = (
        (sl["cat"] == "python_function").fill_null(False)
        & ~name.str.starts_with("<built-in")
        & ~name.str.contains(r"(^|/)torch/")
    ).to_numpy()
    frame = nearest(par, own, include_self=False)[launch_rows]
    names = name.to_numpy()
    short = pl.Series([names[f] if f >= 0 else None for f in frame], dtype=pl.String)
    short = short.str.replace(r"^.*/([^/]+\.py\()", "$1")
    launch = pl.Series(names[launch_rows], dtype=pl.String)
    return ("graph replay @ " + pl.coalesce(short, launch)).alias("site")


def _mapped(local, off):
    """The uid of a grafted node: local index j of an instance at `off` -> -(off + j + 1); -1 -> null."""
    return pl.when(pl.col(local) >= 0).then(-(pl.col(off) + pl.col(local) + 1))


# what grafted nodes take of their graph launch's slice
_LAUNCH_COLUMNS = [
    "trace_id",
    "rank",
    pl.col("uid").alias("launch_uid"),
    pl.col("name").alias("launch_name"),
    "pid",
    "tid",
    "pid_str",
    "tid_str",
    "ts_ns",
    "depth",
    "root_uid",
    "op_uid",
    "top_op_uid",
    "py_uid",
    "module_uid",
    "pre",
]


def merge(slices, kernels, events_schema=None, captures=()):
    """Give graph-replayed device events to their captured ops (or a pseudo op per launch).

    `slices` (Arrow, or a polars LazyFrame), `kernels` (Arrow): the replay trace(s);
    `captures`: Capture objects. Without graph launches `slices` comes back as it came.
    Returns {"slices", "kernels", "graph_replays", "graph_nodes", "events"}: the new slices
    and kernels tables, the two graph tables, and the events rows of the grafted nodes
    (to be added to `events`)."""
    if events_schema is None:
        from .events import events_table

        events_schema = events_table([], 0, None).schema
    gk = graph_kernels(kernels)
    if gk.height == 0:
        return {
            "slices": slices,
            "kernels": kernels,
            "graph_replays": GRAPH_REPLAYS_SCHEMA.empty_table(),
            "graph_nodes": GRAPH_NODES_SCHEMA.empty_table(),
            "events": events_schema.empty_table(),
        }
    sl = (slices.collect() if isinstance(slices, pl.LazyFrame) else frame(slices)).sort(["trace_id", "pre"])
    par = parent_index(sl)
    # the graph launches' rows in slices
    lrows = sl.with_row_index("row").join(
        gk.select(["trace_id", pl.col("launch_uid").alias("uid")]).unique(), on=["trace_id", "uid"], how="semi"
    )
    sizes = None
    if captures:
        sizes = _launch_sizes(
            sl, lrows["row"].cast(pl.Int64).to_numpy(), par, lrows.select("trace_id", pl.col("uid").alias("launch_uid"))
        )
    m = match(gk, list(captures), sizes)
    by_file = {c.index: c for c in captures}
    launch = lrows.select(_LAUNCH_COLUMNS).with_columns(_site(sl, lrows["row"].cast(pl.Int64).to_numpy(), par))
    inst = m.join(launch, on=["trace_id", "launch_uid"], how="left").with_columns(pl.col("file").is_not_null().alias("matched"))
    # one template per matched window; one node per unmatched launch
    windows = inst.filter(pl.col("matched")).select(["file", "offset", "n"]).unique(maintain_order=True)
    windows = windows.with_row_index("tmpl").with_columns(pl.col("tmpl").cast(pl.Int64))
    tnodes, tcalls = [], []
    for w in windows.iter_rows(named=True):  # one per distinct graph, not per kernel
        tsl, per_call = by_file[w["file"]].template(w["offset"], w["n"])
        tnodes.append(tsl.with_columns(pl.lit(w["tmpl"]).alias("tmpl"), pl.lit(w["file"], pl.Int32).alias("file")))
        tcalls.append(per_call.with_columns(pl.lit(w["tmpl"]).alias("tmpl")))
    pseudo_node = _pseudo_node()
    nodes = pl.concat([pseudo_node] + [t.select(pseudo_node.columns).cast(pseudo_node.schema) for t in tnodes])
    sizes = nodes.group_by("tmpl").agg(pl.len().alias("T"), (pl.col("lpar") < 0).sum().alias("roots"))
    inst = (
        inst.join(windows.select(["file", "offset", "n", "tmpl"]), on=["file", "offset", "n"], how="left")
        .with_columns(pl.col("tmpl").fill_null(-1))
        .join(sizes, on="tmpl", how="left")
        .sort(["trace_id", "pre"])
        .with_columns((pl.col("T").cum_sum() - pl.col("T")).alias("off"))
    )
    # the grafted slices
    g = inst.join(nodes, on="tmpl", how="inner")
    g = g.with_columns(
        _mapped("j", "off").alias("uid_new"),
        pl.coalesce(_mapped("lpar", "off"), pl.col("launch_uid")).alias("parent_uid"),
        pl.coalesce(_mapped("lop", "off"), pl.col("op_uid")).alias("op_uid_new"),
        pl.coalesce(pl.col("top_op_uid"), _mapped("ltop", "off")).alias("top_op_uid_new"),
        pl.coalesce(_mapped("lpy", "off"), pl.col("py_uid")).alias("py_uid_new"),
        pl.coalesce(_mapped("lmod", "off"), pl.col("module_uid")).alias("module_uid_new"),
        pl.when(pl.col("tmpl") < 0).then(pl.col("site")).otherwise(pl.col("name")).alias("name_new"),
    )
    # pre-order numbers: every slice after a graph launch moves down by the nodes grafted before it
    pre_new, end_new, launch_pre = _renumber(sl, inst)
    sl_new = sl.with_columns(pl.Series("pre", pre_new), pl.Series("subtree_end", end_new))
    sl_new = (
        sl_new.join(
            inst.select(["trace_id", pl.col("launch_uid").alias("uid"), "roots"]),
            on=["trace_id", "uid"],
            how="left",
            maintain_order="left",
        )
        .with_columns((pl.col("n_children") + pl.col("roots").fill_null(0)).cast(pl.Int32).alias("n_children"))
        .drop("roots")
    )
    g = g.join(launch_pre, on=["trace_id", "launch_uid"], how="left")
    grafted = _grafted_slices(g)
    out_slices = pl.concat(
        [sl_new.select(SLICES_SCHEMA.names), grafted.cast({f.name: sl_new.schema[f.name] for f in SLICES_SCHEMA})]
    ).sort(["trace_id", "pre"])
    if grafted.height:  # the existing slices keep theirs: a graft adds nothing above them
        out_slices = _over_the_grafted_tree(out_slices)
    out_slices = _as_table(out_slices, SLICES_SCHEMA)
    out_kernels = _relink(kernels, gk, inst, tcalls, nodes)
    return {
        "slices": out_slices,
        "kernels": out_kernels,
        "graph_replays": _replays(inst, gk, by_file),
        "graph_nodes": _nodes_table(g, by_file),
        "events": _grafted_events(g, by_file, events_schema),
    }


def _pseudo_node():
    """The one node of the template of a graph launch no capture matched: a pseudo op."""
    return pl.DataFrame(
        {
            "cat": ["cpu_op"],
            "name": [None],
            "uid": [None],
            "j": [0],
            "lpar": [-1],
            "ldepth": [0],
            "lsub": [0],
            "lop": [0],
            "ltop": [0],
            "lpy": [-1],
            "lmod": [-1],
            "nchild": [0],
            "tmpl": [-1],
            "file": [None],
        },
        schema={
            "cat": pl.String,
            "name": pl.String,
            "uid": pl.Int64,
            "j": pl.Int64,
            "lpar": pl.Int64,
            "ldepth": pl.Int64,
            "lsub": pl.Int64,
            "lop": pl.Int64,
            "ltop": pl.Int64,
            "lpy": pl.Int64,
            "lmod": pl.Int64,
            "nchild": pl.Int32,
            "tmpl": pl.Int64,
            "file": pl.Int32,
        },
    )


def _grafted_slices(g):
    """The slices rows of the grafted nodes `g` (a node joined to its launch and its numbers)."""
    return g.select(
        "trace_id",
        "rank",
        pl.col("uid_new").alias("uid"),
        "cat",
        pl.col("name_new").alias("name"),
        "pid",
        "tid",
        "pid_str",
        "tid_str",
        "ts_ns",
        pl.lit(0, pl.Int64).alias("dur_ns"),
        pl.col("ts_ns").alias("end_ns"),
        pl.lit(None, pl.Int64).alias("correlation"),
        pl.lit(None, pl.Int64).alias("external_id"),
        "parent_uid",
        (pl.col("depth") + 1 + pl.col("ldepth")).alias("depth"),
        "root_uid",
        pl.col("op_uid_new").alias("op_uid"),
        pl.col("top_op_uid_new").alias("top_op_uid"),
        pl.col("py_uid_new").alias("py_uid"),
        pl.col("module_uid_new").alias("module_uid"),
        pl.lit(None, pl.Int64).alias("annotation_uid"),  # both set over the new tree below
        (pl.col("lpre") + 1 + pl.col("j")).alias("pre"),
        (pl.col("lpre") + 1 + pl.col("lsub")).alias("subtree_end"),
        pl.col("nchild").alias("n_children"),
        pl.lit(0, pl.Int64).alias("self_ns"),
        pl.lit(False).alias("is_recompute"),
        pl.lit(0, pl.Int64).alias("stack_id"),
    )


def _nodes_table(g, by_file):
    """The graph_nodes table of the grafted nodes `g`."""
    return _as_table(
        g.select(
            "trace_id",
            pl.col("uid_new").alias("uid"),
            pl.col("launch_uid").alias("graph_launch_uid"),
            pl.col("file").map_elements(lambda f: by_file[f].path, return_dtype=pl.String).alias("capture_path"),
            pl.col("uid").alias("capture_uid"),
            (pl.col("tmpl") < 0).alias("pseudo"),
        ),
        GRAPH_NODES_SCHEMA,
    )


def _over_the_grafted_tree(sl):
    """The columns that follow from a slice's ancestors and are not carried from its template,
    computed again over the tree with the grafts (`sl` in pre-order): its stack and the user
    annotation it runs in (model/tree.py)."""
    ends = np.arange(sl.height, dtype=np.int64) + (sl.get_column("subtree_end") - sl.get_column("pre")).to_numpy()
    ann = annotation_above(parent_index(sl), sl.get_column("cat"))
    return sl.with_columns(
        pl.Series("annotation_uid", uid_column(sl.get_column("uid").to_numpy(), ann)),
        pl.Series(
            "stack_id",
            stack_ids(sl.get_column("name"), sl.get_column("cat"), sl.get_column("depth").to_numpy(), ends),
        ),
    )


def _as_table(df, schema):
    t = df.to_arrow()
    return pa.table([t.column(f.name).cast(f.type) for f in schema], schema=schema)


def _renumber(sl, inst):
    """(new pre, new subtree_end) of the existing slices and each launch's new pre, per trace."""
    pre = sl["pre"].to_numpy().astype(np.int64)
    end = sl["subtree_end"].to_numpy().astype(np.int64)
    tid = sl["trace_id"].to_numpy()
    pre_new, end_new = pre.copy(), end.copy()
    lp = []
    for t in np.unique(inst["trace_id"].to_numpy()):
        mine = inst.filter(pl.col("trace_id") == t)
        p = mine["pre"].to_numpy().astype(np.int64)
        cum = np.concatenate([[0], np.cumsum(mine["T"].to_numpy().astype(np.int64))])
        rows = tid == t
        pre_new[rows] = pre[rows] + cum[np.searchsorted(p, pre[rows], side="left")]
        end_new[rows] = end[rows] + cum[np.searchsorted(p, end[rows], side="right")]
        lp.append(
            pl.DataFrame(
                {
                    "trace_id": mine["trace_id"],
                    "launch_uid": mine["launch_uid"],
                    "lpre": p + cum[np.searchsorted(p, p, side="left")],
                }
            )
        )
    return pre_new, end_new, pl.concat(lp)


def _relink(kernels, gk, inst, tcalls, nodes):
    """kernels with the graph-replayed rows pointing at their grafted ops."""
    k = frame(kernels.select(["trace_id", "uid", "op_uid", "top_op_uid", "launcher_uid", "op_path"]))
    calls = (
        pl.concat(tcalls)
        if tcalls
        else pl.DataFrame(
            schema={"i": pl.Int64, "j": pl.Int64, "llauncher": pl.Int64, "lpath": pl.List(pl.Int64), "tmpl": pl.Int64}
        )
    )
    calls = calls.join(nodes.filter(pl.col("tmpl") >= 0).select(["tmpl", "j", "lop", "ltop"]), on=["tmpl", "j"])
    link = (
        gk.select(["trace_id", "uid", "launch_uid", "i", "op_path"])
        .join(inst.select(["trace_id", "launch_uid", "tmpl", "off", "top_op_uid", "op_uid"]), on=["trace_id", "launch_uid"])
        .join(calls, on=["tmpl", "i"], how="left")
        .with_columns(
            pl.when(pl.col("tmpl") < 0).then(0).otherwise(pl.col("lop")).alias("lop"),
            pl.when(pl.col("tmpl") < 0).then(0).otherwise(pl.col("ltop")).alias("ltop"),
            pl.when(pl.col("tmpl") < 0).then(0).otherwise(pl.col("llauncher")).alias("llauncher"),
            pl.when(pl.col("tmpl") < 0).then(pl.lit([0], pl.List(pl.Int64))).otherwise(pl.col("lpath")).alias("lpath"),
        )
    )
    path = (
        link.select(["trace_id", "uid", "off", "lpath"])
        .explode("lpath")
        .with_columns(_mapped("lpath", "off").alias("p"))
        .group_by(["trace_id", "uid"], maintain_order=True)
        .agg(pl.col("p").drop_nulls().alias("gpath"))
    )
    link = link.join(path, on=["trace_id", "uid"], how="left").select(
        "trace_id",
        "uid",
        pl.coalesce(_mapped("lop", "off"), pl.col("op_uid")).alias("_op"),
        pl.coalesce(pl.col("top_op_uid"), _mapped("ltop", "off")).alias("_top"),
        _mapped("llauncher", "off").alias("_launcher"),
        pl.concat_list([pl.col("gpath"), pl.col("op_path").fill_null(pl.lit([], pl.List(pl.Int64)))]).alias("_path"),
    )
    # only the four columns change: worked out on a narrow frame, put in place in the Arrow table
    cols = ["op_uid", "top_op_uid", "launcher_uid", "op_path"]
    hit = pl.col("_launcher").is_not_null()
    new = (
        k.select(["trace_id", "uid"] + cols)
        .join(link, on=["trace_id", "uid"], how="left", maintain_order="left")
        .select(
            pl.when(hit).then(pl.col("_op")).otherwise(pl.col("op_uid")).alias("op_uid"),
            pl.when(hit).then(pl.col("_top")).otherwise(pl.col("top_op_uid")).alias("top_op_uid"),
            pl.when(hit).then(pl.col("_launcher")).otherwise(pl.col("launcher_uid")).alias("launcher_uid"),
            pl.when(hit).then(pl.col("_path")).otherwise(pl.col("op_path")).alias("op_path"),
        )
    )
    out = kernels
    for c in cols:
        i = out.schema.get_field_index(c)
        out = out.set_column(i, out.schema.field(c), new[c].to_arrow().cast(out.schema.field(c).type))
    return out


def _replays(inst, gk, by_file):
    sums = gk.group_by(["trace_id", "launch_uid"]).agg(pl.col("dur_ns").sum().alias("kernel_sum_ns"))
    info = pl.DataFrame(
        {
            "file": list(by_file),
            "capture_path": [c.path for c in by_file.values()],
            "capture_batch_size": [c.batch_size for c in by_file.values()],
            "capture_mode": [c.mode for c in by_file.values()],
        },
        schema={"file": pl.Int32, "capture_path": pl.String, "capture_batch_size": pl.Int64, "capture_mode": pl.String},
    )
    df = (
        inst.join(sums, on=["trace_id", "launch_uid"], how="left")
        .join(info, on="file", how="left")
        .sort(["trace_id", "ts_ns"])
        .select(
            "trace_id",
            "rank",
            "launch_uid",
            "launch_name",
            "ts_ns",
            pl.col("n").alias("kernels"),
            "kernel_sum_ns",
            "site",
            "matched",
            "capture_path",
            "capture_batch_size",
            "capture_mode",
            pl.col("offset").alias("capture_offset"),
            "candidates",
            "mismatch_at",
            "mismatch_kernel",
            "mismatch_captured",
        )
    )
    return _as_table(df, GRAPH_REPLAYS_SCHEMA)


def _grafted_events(g, by_file, schema):
    """events rows of the grafted captured ops: the captured event's fields (ids that belong
    to the capture trace cleared), at the graph launch's place and time, host duration 0.
    Only cpu_ops get one (their shapes are what the analyses read from events; the other
    grafted slices are in the capture trace, graph_nodes says where), and pseudo ops none:
    `events` stays the file's own events when nothing was captured."""
    place = ["trace_id", "rank", "uid", "pid", "tid", "pid_str", "tid_str", "ts_ns", "dur_ns", "end_ns"]
    cleared = ("correlation", "external_id", "flow_id", "flow_id_str")
    new = g.filter(pl.col("file").is_not_null() & (pl.col("cat") == "cpu_op")).select(
        "file",
        pl.col("uid").alias("capture_uid"),
        "trace_id",
        "rank",
        pl.col("uid_new").alias("uid"),
        "pid",
        "tid",
        "pid_str",
        "tid_str",
        "ts_ns",
        pl.lit(0, pl.Int64).alias("dur_ns"),
        pl.col("ts_ns").alias("end_ns"),
    )
    parts = []
    for f, c in by_file.items():  # Arrow throughout: the events are wide, the rows few
        mine = new.filter(pl.col("file") == f)
        if mine.height == 0:
            continue
        want = mine["capture_uid"].to_arrow()
        # one chunk first: take() over many chunks of nested columns is slow
        ev = c.events.filter(pc.is_in(c.events.column("uid"), value_set=want.unique())).combine_chunks()
        rows = ev.take(pc.index_in(want, value_set=ev.column("uid")))
        cols = []
        for fld in schema:
            if fld.name in place:
                cols.append(mine[fld.name].to_arrow().cast(fld.type))
            elif fld.name in cleared:
                cols.append(pa.nulls(rows.num_rows, fld.type))
            else:
                cols.append(rows.column(fld.name).cast(fld.type))
        parts.append(pa.table(cols, schema=schema))
    return pa.concat_tables(parts) if parts else schema.empty_table()
