"""The `slices` table: the host-side call tree of every thread, computed with sorts and searches.

A *slice* is a host-side complete event (ph X): cpu_op, user_annotation, python_function,
cuda_runtime, cuda_driver, cuda_sync, overhead, … — anything that is not device work.
Device work is any event of a device category (kernel, gpu_memcpy, gpu_memset,
gpu_user_annotation) and any event on a *device pid* (a pid that carries device-category
events and no cpu_op / python_function / user_annotation; MTIA writes device-side
`mtia_runtime` rows there, CUDA writes device-side `cuda_sync` rows there).

Nesting rule (docs/tree.md has the long form). Per thread (trace_id, pid, tid, pid_str,
tid_str) the slices are taken in the order (ts asc, end desc, uid asc); a slice is a child
of the innermost open slice when it starts before that slice's end and does not outlast it
by TOL_NS or more. A child that outlasts its parent by less than TOL_NS is kept as a child
(its end is clipped to the parent's for nesting purposes). A slice that outlasts the open
slice by TOL_NS or more closes that slice (it becomes a sibling or an ancestor's child).
That is exactly this stack walk:

    for s in sorted slices of a thread:
        while stack and (stack[-1].eff_end <= s.ts or s.end - stack[-1].eff_end >= TOL_NS):
            stack.pop()
        s.parent = stack[-1] if stack else None;  s.depth = len(stack)
        s.eff_end = min(s.end, s.parent.eff_end) if s.parent else s.end
        stack.append(s)

computed here without a per-event loop: the depth of a slice is the number of slices
before it (in thread order) whose *closing time* is after its start (a sorted search), its
parent the latest earlier slice one level up (an as-of search). Closing times start as the
ends; a pass then finds every parent/child pair that breaks the rule, clips the child or
closes the parent at the child's start, and the passes repeat until none is left (real
traces need one or two).
"""

import hashlib

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from .categories import DEVICE_CATS
from .frames import frame

TOL_NS = 1000  # a child may outlast its parent by less than 1 µs (timestamp rounding)

HOST_MARK_CATS = ("cpu_op", "python_function", "user_annotation")
_MAX_PASSES = 10_000

SLICES_SCHEMA = pa.schema(
    [
        ("trace_id", pa.int32()),
        ("rank", pa.int32()),
        ("uid", pa.int64()),
        ("cat", pa.string()),
        ("name", pa.string()),
        ("pid", pa.int64()),
        ("tid", pa.int64()),
        ("pid_str", pa.string()),
        ("tid_str", pa.string()),
        ("ts_ns", pa.int64()),
        ("dur_ns", pa.int64()),
        ("end_ns", pa.int64()),
        ("correlation", pa.int64()),
        ("external_id", pa.int64()),
        ("parent_uid", pa.int64()),
        ("depth", pa.int32()),
        ("root_uid", pa.int64()),
        ("op_uid", pa.int64()),
        ("top_op_uid", pa.int64()),
        ("py_uid", pa.int64()),
        ("module_uid", pa.int64()),
        ("annotation_uid", pa.int64()),
        ("pre", pa.int64()),
        ("subtree_end", pa.int64()),
        ("n_children", pa.int32()),
        ("self_ns", pa.int64()),
        ("is_recompute", pa.bool_()),
        ("stack_id", pa.int64()),
    ]
)

# the profiler's own span: it covers the whole capture, and is no frame of a stack
LEFT_OUT_OF_STACKS = "Trace"

# torch.utils.checkpoint re-runs a checkpointed forward inside this frame during backward
RECOMPUTE_FRAME = r"torch/utils/checkpoint\.py.*recompute_fn"

_THREAD = ["trace_id", "pid", "pid_str", "tid", "tid_str"]


def device_pids(ev):
    """polars frame of (trace_id, pid, pid_str) that are device processes (`ev`: events, polars)."""
    per = (
        ev.lazy()
        .filter(pl.col("ph") == "X")
        .group_by(["trace_id", "pid", "pid_str"])
        .agg(
            pl.col("cat").is_in(list(DEVICE_CATS)).any().alias("dev"),
            pl.col("cat").is_in(list(HOST_MARK_CATS)).any().alias("host"),
        )
        .filter(pl.col("dev") & ~pl.col("host"))
        .select(["trace_id", "pid", "pid_str"])
    )
    return per.collect(engine="streaming")


def host_slices_frame(ev):
    """The host complete events of an events frame (polars; lazy in, lazy out), unsorted."""
    dev = device_pids(ev)
    x = ev.filter((pl.col("ph") == "X") & ~pl.col("cat").is_in(list(DEVICE_CATS)).fill_null(False))
    if dev.height:
        x = x.join(
            dev.lazy() if isinstance(x, pl.LazyFrame) else dev, on=["trace_id", "pid", "pid_str"], how="anti", nulls_equal=True
        )
    return x


def prev_greater(a, x):
    """For each i: the largest j < i with a[j] > x[i], or -1 (vectorised segment-tree search).

    Each step works on the searches still going only: most end within a few levels (a
    slice's parent is mostly just before it), so a step over every search would be mostly
    wasted."""
    n = len(a)
    if n == 0:
        return np.empty(0, np.int64)
    size = 1 << max(1, int(n - 1).bit_length())
    lo = np.iinfo(a.dtype).min if a.dtype.kind == "i" else -np.inf
    tree = np.full(2 * size, lo, dtype=a.dtype)
    tree[size : size + n] = a
    for lvl in range(size.bit_length() - 2, -1, -1):  # build parents level by level
        s0, s1 = 1 << lvl, 1 << (lvl + 1)
        tree[s0:s1] = np.maximum(tree[2 * s0 : 2 * s1 : 2], tree[2 * s0 + 1 : 2 * s1 : 2])
    out = np.full(n, -1, dtype=np.int64)
    # up: from leaf i, the first left sibling on the way to the root whose maximum exceeds x[i]
    i = np.arange(n, dtype=np.int64)
    v = i + size
    xi = x
    hits_i, hits_v = [], []
    while len(i):
        hit = (v & 1).astype(bool) & (tree[v - 1] > xi)
        hits_i.append(i[hit])
        hits_v.append(v[hit] - 1)
        go = ~hit & (v > 3)  # v of 2 or 3 has the root above it: nothing left of it there
        i, v, xi = i[go], v[go] >> 1, xi[go]
    # down: from that sibling to its last leaf whose value exceeds x[i]
    i, v = np.concatenate(hits_i), np.concatenate(hits_v)
    xi = x[i]
    while len(i):
        leaf = v >= size
        out[i[leaf]] = v[leaf] - size
        i, v, xi = i[~leaf], v[~leaf], xi[~leaf]
        r = 2 * v + 1
        v = np.where(tree[r] > xi, r, r - 1)
    return out


def chain_reduce(parent, values, op):
    """op-reduce `values` over each node's ancestors-or-self (pointer doubling)."""
    acc = values.copy()
    ptr = parent.copy()
    while True:
        live = ptr >= 0
        if not live.any():
            return acc
        p = np.where(live, ptr, 0)
        acc = np.where(live, op(acc, acc[p]), acc)
        ptr = np.where(live, ptr[p], -1)


def nest(group, ts, end, tol=TOL_NS):
    """Parent index and depth of slices already sorted by (group, ts asc, end desc, uid asc).

    group: int64 array, non-decreasing; ts, end: int64 ns. Returns (parent, depth, eff)
    with parent = -1 for roots and eff = the end used for nesting (clipped to the parent's).

    The stack walk's parent of slice i is the latest earlier slice j of its thread with
    eff[j] > max(ts[i], end[i] - tol) (docs/tree.md proves it), and eff is the minimum end
    over a slice's ancestors-or-self. Starting from eff = end, each pass computes parents
    from eff and eff from parents; a slice's answer depends only on earlier slices, so the
    passes reach the stack walk's answer and stop when nothing changes (one or two passes
    on real traces, since clipping is rare).
    """
    n = len(ts)
    if n == 0:
        e = np.empty(0, np.int64)
        return e, e.copy(), e.copy()
    pos = np.arange(n, dtype=np.int64)
    newg = np.ones(n, bool)
    newg[1:] = group[1:] != group[:-1]
    gstart = np.maximum.accumulate(np.where(newg, pos, 0))
    thr = np.maximum(ts, end - tol)
    eff = end
    parent = None
    for _ in range(_MAX_PASSES):
        j = prev_greater(eff, thr)
        new_parent = np.where(j >= gstart, j, -1)
        if parent is not None and np.array_equal(new_parent, parent):
            break
        parent = new_parent
        new_eff = chain_reduce(parent, end, np.minimum)
        if np.array_equal(new_eff, eff):  # nothing clipped: the next pass would find the same parents
            break
        eff = new_eff
    else:
        raise RuntimeError("tracecols: host tree did not settle (please report this trace)")
    depth = chain_reduce(parent, (parent >= 0).astype(np.int64), np.add)
    # chain_reduce with add over ancestors-or-self of "has a parent" = number of ancestors
    return parent, depth, eff


def nearest(parent, target, include_self=True):
    """Index of the nearest ancestor(-or-self) where `target` holds, -1 if none (pointer doubling)."""
    n = len(parent)
    idx = np.arange(n, dtype=np.int64)
    res = np.where(target, idx, parent) if include_self else parent.copy()
    while True:
        live = res >= 0
        r = np.where(live, res, 0)
        step = live & ~target[r]
        if not step.any():
            return res
        res = np.where(step, res[r], res)
        # res[r] for a non-target r is its own pointer, which is already "one level further"


_SLICE_INPUT = [
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
    "correlation",
    "external_id",
]


def lazy_events(ev, columns):
    """`columns` of the events `ev` (Arrow table, polars DataFrame or LazyFrame) as a LazyFrame.
    A LazyFrame (a scan of events.parquet) stays lazy: only the rows and columns asked for
    are ever read."""
    if isinstance(ev, pa.Table):
        return frame(ev.select(columns)).lazy()
    return ev.lazy().select(columns)


def build_slices(ev, tol=TOL_NS):
    """Arrow table `slices` from the events (Arrow table, polars DataFrame or LazyFrame)."""
    ev = lazy_events(ev, _SLICE_INPUT)
    x = (
        host_slices_frame(ev)
        .filter(pl.col("ts_ns").is_not_null())  # no time, no place in the tree
        .with_columns(pl.col("dur_ns").fill_null(0).clip(lower_bound=0))
        .sort(_THREAD + ["ts_ns", "dur_ns", "uid"], descending=[False] * 6 + [True, False], nulls_last=True)
        .collect()
    )
    return slices_of_sorted(x, 0, tol)


def slices_in_chunks(frames, chunk_rows, tol=TOL_NS):
    """The slices table in parts of about `chunk_rows` rows (Arrow tables), each a run of whole
    trees, from host complete events already filtered as host_slices_frame does, with dur_ns
    clipped to >= 0 and sorted by (_THREAD, ts_ns, dur_ns desc, uid): `frames` is any split of
    them into polars DataFrames of _SLICE_INPUT columns, in order.

    A thread's tree can be cut before a slice that starts at or after the end of every earlier
    slice of its thread: the stack walk has popped them all, so no later slice nests in them.
    Parts are cut there, which bounds the memory of a trace of any length (but not of one
    tree bigger than the memory).
    """
    pending, offset = None, 0
    for f in frames:
        pending = f if pending is None else pl.concat([pending, f], rechunk=False)
        if pending.height < chunk_rows:
            continue
        cut = _last_tree_start(pending)
        if cut > 0:
            yield slices_of_sorted(pending.slice(0, cut), offset, tol)
            offset += cut
            pending = pending.slice(cut)
    if pending is not None and pending.height:
        yield slices_of_sorted(pending, offset, tol)


def _last_tree_start(x):
    """Index of the last row of `x` (sorted as slices_in_chunks says, starting a tree) that
    starts a new tree: a new thread, or a start at or after every earlier end of its thread."""
    run = pl.any_horizontal([pl.col(c).ne_missing(pl.col(c).shift(1)) for c in _THREAD]).fill_null(True).cum_sum()
    starts = (
        x.lazy()
        .select(pl.col("ts_ns"), (pl.col("ts_ns") + pl.col("dur_ns")).alias("end"), run.alias("run"))
        .with_columns(pl.col("end").cum_max().shift(1).over("run").alias("before"))
        .select(pl.col("before").is_null() | (pl.col("ts_ns") >= pl.col("before")))
        .collect()
        .to_series()
        .to_numpy()
    )
    starts[0] = False
    hit = np.flatnonzero(starts)
    return int(hit[-1]) if len(hit) else 0


def slices_of_sorted(x, offset=0, tol=TOL_NS):
    """The slices of host complete events `x` (polars, _SLICE_INPUT, sorted and clipped as
    slices_in_chunks says), whole trees only; `offset` is the position of x's first row in
    the whole thread order (slices.pre)."""
    if x.height == 0:
        return SLICES_SCHEMA.empty_table()
    x = x.with_columns((pl.col("ts_ns") + pl.col("dur_ns")).alias("end_ns"))
    chg = (
        x.select(pl.any_horizontal([pl.col(c).ne_missing(pl.col(c).shift(1)) for c in _THREAD]).alias("chg"))
        .get_column("chg")
        .to_numpy()
        .copy()
    )
    chg[0] = True
    group = np.cumsum(chg).astype(np.int64)
    ts = x.get_column("ts_ns").to_numpy().astype(np.int64)
    end = x.get_column("end_ns").to_numpy().astype(np.int64)
    parent, depth, _ = nest(group, ts, end, tol)
    return _derive(x, parent, depth, ts, offset)


def _derive(x, parent, depth, ts, offset):
    n = x.height
    pos = np.arange(n, dtype=np.int64)
    uid = x.get_column("uid").to_numpy()
    cat = x.get_column("cat")  # masks from polars: to_numpy() of strings makes a str per row
    is_op = (cat == "cpu_op").fill_null(False).to_numpy()
    is_py = (cat == "python_function").fill_null(False).to_numpy()
    has = parent >= 0
    p = np.where(has, parent, 0)
    root = nearest(parent, depth == 0)
    op = nearest(parent, is_op)
    up_op = np.where(has, op[p], -1)  # nearest op strictly above
    # outermost op: follow up_op among ops until none (pointer doubling)
    jump = np.where(is_op & (up_op >= 0), up_op, pos)
    while True:
        nj = jump[jump]
        if np.array_equal(nj, jump):
            break
        jump = nj
    top_i = np.where(op >= 0, jump[np.maximum(op, 0)], -1)
    py = nearest(parent, is_py, include_self=False)
    is_mod = is_py & x.get_column("name").str.starts_with("nn.Module: ").fill_null(False).to_numpy()
    mod = nearest(parent, is_mod, include_self=False)
    ann = annotation_above(parent, cat)
    is_rc = is_py & x.get_column("name").str.contains(RECOMPUTE_FRAME).fill_null(False).to_numpy()
    recompute = nearest(parent, is_rc) >= 0
    d = depth.astype(np.int64)
    sub_end = subtree_ends(parent, d)
    stack = stack_ids(x.get_column("name"), cat, d, sub_end)  # before the columns: its temporaries add to them
    n_children = np.bincount(p[has], minlength=n).astype(np.int32)
    dur = x.get_column("dur_ns").to_numpy().astype(np.int64)
    child_dur = np.bincount(p[has], weights=dur[has], minlength=n)
    self_ns = np.maximum(dur - child_dur.astype(np.int64), 0)

    def uid_of(ix):
        return uid_column(uid, ix)

    cols = {
        "trace_id": x.get_column("trace_id").to_arrow().cast(pa.int32()),
        "rank": x.get_column("rank").to_arrow().cast(pa.int32()),
        "uid": pa.array(uid, pa.int64()),
        "cat": x.get_column("cat").to_arrow().cast(pa.string()),
        "name": x.get_column("name").to_arrow().cast(pa.string()),
        "pid": x.get_column("pid").to_arrow(),
        "tid": x.get_column("tid").to_arrow(),
        "pid_str": x.get_column("pid_str").to_arrow().cast(pa.string()),
        "tid_str": x.get_column("tid_str").to_arrow().cast(pa.string()),
        "ts_ns": pa.array(ts, pa.int64()),
        "dur_ns": pa.array(dur, pa.int64()),
        "end_ns": x.get_column("end_ns").to_arrow(),
        "correlation": x.get_column("correlation").to_arrow(),
        "external_id": x.get_column("external_id").to_arrow(),
        "parent_uid": uid_of(parent),
        "depth": pa.array(depth.astype(np.int32), pa.int32()),
        "root_uid": uid_of(root),
        "op_uid": uid_of(op),
        "top_op_uid": uid_of(top_i),
        "py_uid": uid_of(py),
        "module_uid": uid_of(mod),
        "annotation_uid": uid_of(ann),
        "pre": pa.array(pos + offset, pa.int64()),
        "subtree_end": pa.array(sub_end + offset, pa.int64()),
        "n_children": pa.array(n_children, pa.int32()),
        "self_ns": pa.array(self_ns, pa.int64()),
        "is_recompute": pa.array(recompute, pa.bool_()),
        "stack_id": pa.array(stack, pa.int64()),
    }
    return pa.table([cols[f.name].cast(f.type) for f in SLICES_SCHEMA], schema=SLICES_SCHEMA)


def subtree_ends(parent, depth):
    """Row of the last slice of each slice's subtree (rows in pre-order, whole trees; `parent`:
    rows, -1 for roots; `depth`: int64). Pre-order = thread order, so a subtree is its root
    and the run of following slices deeper than it, and ends where its last child's does:
    worked out level by level from the deepest up."""
    sub = np.arange(len(depth), dtype=np.int64)
    if len(depth) == 0:
        return sub
    order = np.argsort(depth, kind="stable")
    top = int(depth[order[-1]])
    cuts = np.searchsorted(depth[order], np.arange(top + 2))
    for lvl in range(top, 0, -1):
        rows = order[cuts[lvl] : cuts[lvl + 1]]
        np.maximum.at(sub, parent[rows], sub[rows])
    return sub


def uid_column(uid, ix):
    """uid[ix] as an Arrow int64 column, null where ix < 0 (no such slice)."""
    return pa.array(np.where(ix >= 0, uid[np.maximum(ix, 0)], 0), pa.int64(), mask=ix < 0)


def annotation_above(parent, cat):
    """Row of the nearest user_annotation strictly above each slice, -1 if none (`parent`: rows;
    `cat`: a polars Series): what slices.annotation_uid names."""
    return nearest(parent, (cat == "user_annotation").fill_null(False).to_numpy(), include_self=False)


def stack_frame(name):
    """A slice's name as a frame of a folded stack: `;` separates frames and newlines end lines
    there, so they become `,` and spaces; no name is `(unnamed)` (sql/ops/stacks.sql writes the
    same text)."""
    frame = (name or "").replace(";", ",").replace("\r", " ").replace("\n", " ")
    return frame or "(unnamed)"


def stack_ids(name, cat, depth, sub_end):
    """`slices.stack_id` of slices in pre-order (polars name and cat Series, numpy depth and
    subtree end as row positions): equal for two slices exactly when the frames (stack_frame)
    of their ancestors-or-self, the profiler's own span left out, are equal, root first.

    Each frame at a level (its place in the stack: the depth less the left-out slices above)
    gets 64 bits, splitmix64(md5(frame) XOR level * golden ratio), the level keeping a frame
    repeated at two places from cancelling itself; the id is the XOR of those over the stack.
    In pre-order that is a running XOR over starts and the ends that undo them (an end at
    subtree_end + 1): one pass, no walk up the tree. Each distinct name is hashed once (a
    trace repeats few: 684 for the vLLM capture trace's 127k slices), found by Arrow's
    dictionary encoding. Two different stacks share an id with a probability of about 2^-64
    a pair. Rows must be whole trees."""
    n = len(depth)
    out = (cat == LEFT_OUT_OF_STACKS).fill_null(False).to_numpy()
    level = depth.astype(np.int64)
    held = out & (sub_end > np.arange(n))
    if held.any():  # slices under a left-out one: their level is less than their depth
        open_ = np.zeros(n + 1, np.int64)
        np.add.at(open_, np.flatnonzero(held) + 1, 1)
        np.add.at(open_, sub_end[held] + 1, -1)
        level = level - np.cumsum(open_)[:n]
    # the names as Arrow views of polars' own buffers, not a copy (a part of a big trace: 1M slices)
    words = pc.dictionary_encode(name.to_arrow(compat_level=pl.CompatLevel.newest()))
    if isinstance(words, pa.ChunkedArray):
        words = words.combine_chunks()
    names = words.dictionary.to_pylist() + [None]  # the last: a null name, (unnamed) as an empty one
    frames = np.array([int.from_bytes(hashlib.md5(stack_frame(w).encode()).digest()[:8], "little") for w in names], np.uint64)
    h = frames[pc.fill_null(words.indices, len(names) - 1).to_numpy()]
    del words
    # in place, one array at a time: this runs beside a whole part's columns
    with np.errstate(over="ignore"):  # multiplication modulo 2^64 is the point
        lv = level.astype(np.uint64)
        lv *= _GOLDEN
        h ^= lv
        del lv
        _splitmix64(h)
    h[out] = 0
    run = np.zeros(n + 1, np.uint64)
    run[:n] = h
    np.bitwise_xor.at(run, sub_end + 1, h)
    del h
    np.bitwise_xor.accumulate(run, out=run)
    return run[:n].view(np.int64)


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _splitmix64(z):
    """splitmix64's finaliser, elementwise and in place (uint64): a bijection that spreads every
    input bit."""
    t = np.empty_like(z)
    z += _GOLDEN
    for shift, mult in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB)):
        np.right_shift(z, np.uint64(shift), out=t)
        z ^= t
        z *= np.uint64(mult)
    np.right_shift(z, np.uint64(31), out=t)
    z ^= t
