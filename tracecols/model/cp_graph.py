"""The dependency graph of critical path analysis, built with sorts and joins (no per-event loop).

A node is a point in time: the start or the end of a host call or of a device event. Nodes come
in *runs*, contiguous sequences whose consecutive nodes are linked, and *cross edges* join runs.
Per window (a ProfilerStep, or the annotation asked for; the whole trace when it has none):

- Host: per thread, the starts and ends of the `cpu_op`, `cuda_runtime` and `cuda_driver`
  slices (dur > 0) that start in the window, in the order of the host tree (enter a slice,
  its children, leave it): one run per thread. A link weighs the time between its nodes, except
  into the start of an outermost such slice (a `dependency`: the time between outermost ops
  is not counted) and into the end of a blocking call (BLOCKING: its time is waiting, which the
  device side accounts for). The time of a link goes to the slice it is spent in: the one just
  entered, else the one just left, else (between two siblings) their parent.
- Device: per stream, the start and end of every kernel, memcpy and memset whose launch call
  is a host node of the window, in time order. Start -> end weighs the duration; end -> start
  of the next one (`kernel_kernel`, its gap) links them only when the next one did not start
  on its own launch: then a `launch` cross edge from the launch call's start weighs the delay.
  A launch counts when the stream was empty as the host launched it and as the device started
  it (its queue depth, as in the queue_depth view, was 1 after the launch and 0 after the start)
  and when what it waited for had ended before the launch call started.
- Synchronisation, zero weight: `sync` from the end of the last device event a blocking call
  waited for to the end of that call, and `wait` from the end of the device event an event
  recorded after to the start of the device event queued behind `cudaStreamWaitEvent`. With
  CUDA sync events in the trace (cat `cuda_sync`: Stream Sync, Context Sync, Event Sync, Stream
  Wait Event) they say what waited for what; without them, `cudaDeviceSynchronize` waits for
  the last event of every stream and `cudaStreamSynchronize` for the last event of the stream
  its thread last launched on, each only if that event ended before the call returned.

These are the rules of HTA's critical path analysis (docs/analyses.md says where they differ).
"""

from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from .tree import TOL_NS, lazy_events

# link and edge kinds (codes in Graph arrays; names in the critical_path_edges table)
KINDS = ("start", "cpu", "dependency", "kernel", "kernel_kernel", "launch", "sync", "wait")
START, CPU, DEPENDENCY, KERNEL, KERNEL_KERNEL, LAUNCH, SYNC, WAIT = range(len(KINDS))

HOST_CATS = ("cpu_op", "cuda_runtime", "cuda_driver")
# calls whose own time is waiting for the device
BLOCKING = (
    "cudaDeviceSynchronize",
    "cudaStreamSynchronize",
    "cudaEventSynchronize",
    "cudaEventQuery",
    "cudaMemcpy",
    "cudaMemcpyAsync",
    "hipDeviceSynchronize",
    "hipStreamSynchronize",
    "hipEventSynchronize",
    "hipEventQuery",
    "hipMemcpy",
    "hipMemcpyAsync",
    "hipMemcpyWithStream",
)
DEVICE_SYNC = ("cudaDeviceSynchronize", "hipDeviceSynchronize")
STREAM_SYNC = ("cudaStreamSynchronize", "hipStreamSynchronize")
STEP_PATTERN = "ProfilerStep#%"

SLICE_COLUMNS = [
    "trace_id",
    "rank",
    "uid",
    "cat",
    "name",
    "pid",
    "tid",
    "pid_str",
    "tid_str",
    "ts_ns",
    "dur_ns",
    "end_ns",
    "correlation",
    "parent_uid",
    "depth",
    "pre",
    "subtree_end",
]
KERNEL_COLUMNS = [
    "trace_id",
    "uid",
    "device",
    "stream",
    "ts_ns",
    "end_ns",
    "dur_ns",
    "launch_uid",
    "launch_ts_ns",
    "launch_pid",
    "launch_tid",
]
SYNC_COLUMNS = ["trace_id", "uid", "name", "ts_ns", "dur_ns", "device", "stream", "correlation", "args"]
SYNC_SCHEMA = {
    "trace_id": pl.Int32,
    "uid": pl.Int64,
    "name": pl.String,
    "ts_ns": pl.Int64,
    "end_ns": pl.Int64,
    "device": pl.Int64,
    "stream": pl.Int64,
    "correlation": pl.Int64,
    "wait_stream": pl.Int64,
    "record_corr": pl.Int64,
}


@dataclass
class Graph:
    """Nodes in run order (a run is a contiguous range; node i is linked from i - 1 unless it
    heads its run) and the cross edges. `link_*[i]` describe the link into node i."""

    window: np.ndarray  # window index of each node (a row of `windows`)
    head: np.ndarray  # index of the first node of its run
    t: np.ndarray  # ns
    uid: np.ndarray  # the event the node is the start or end of
    link_kind: np.ndarray  # KINDS code (START for a run head)
    link_w: np.ndarray  # ns the link counts
    link_uid: np.ndarray  # the event its time is spent in (-1: none)
    x_src: np.ndarray  # cross edges, in order of their destination: from node
    x_dst: np.ndarray  # to node
    x_w: np.ndarray  # ns
    x_kind: np.ndarray  # LAUNCH, SYNC or WAIT
    windows: pl.DataFrame  # w, trace_id, rank, window_uid, step, start_ns, end_ns


# the characters polars' regular expressions give a meaning; every other one stands for itself
# (escaped, `<` and `>` would be word boundaries, and a letter a class)
_REGEX_META = frozenset("\\.+*?()|[]{}^$#&-~")


def like_regex(pattern):
    """A SQL LIKE pattern (% any text, _ one character; no escape character, as DuckDB's LIKE
    without ESCAPE) as an anchored regular expression; every other character matches itself."""
    out = []
    for ch in pattern:
        out.append(".*" if ch == "%" else "." if ch == "_" else "\\" + ch if ch in _REGEX_META else ch)
    return "(?s)^" + "".join(out) + "$"


def sync_events(ev):
    """The CUDA sync events (cat cuda_sync) of an events table or scan, with the ids in their args:
    wait_stream (the stream an event was recorded on), record_corr (that cudaEventRecord's
    correlation). Small: a few rows per synchronisation."""
    if isinstance(ev, pa.Table):  # pick the rows before polars copies the whole args column
        ev = ev.select(SYNC_COLUMNS + ["cat", "ph"]).filter(pc.equal(ev.column("cat"), "cuda_sync"))
    x = lazy_events(ev, SYNC_COLUMNS + ["cat", "ph"]).filter((pl.col("cat") == "cuda_sync") & (pl.col("ph") == "X"))
    return (
        x.select(
            "trace_id",
            "uid",
            "name",
            "ts_ns",
            (pl.col("ts_ns") + pl.col("dur_ns").fill_null(0)).alias("end_ns"),
            "device",
            "stream",
            "correlation",
            pl.col("args").str.json_path_match("$.wait_on_stream").cast(pl.Int64, strict=False).alias("wait_stream"),
            pl.col("args")
            .str.json_path_match("$.wait_on_cuda_event_record_corr_id")
            .cast(pl.Int64, strict=False)
            .alias("record_corr"),
        )
        .collect()
        .cast(SYNC_SCHEMA)
    )


def _asof(left, left_on, right, right_on, by, strategy):
    """join_asof on `by`, the frames sorted by their keys here (so within every `by` group too,
    which polars cannot check and would warn about; a filter of warnings would not hold in the
    threads a lake's Dask workers run in)."""
    return left.sort(left_on).join_asof(
        right.sort(right_on), left_on=left_on, right_on=right_on, by=by, strategy=strategy, check_sortedness=False
    )


def _windows(sl, pattern, rel):
    """One row per window: the host slices whose name matches `pattern`; with the default
    pattern (ProfilerStep#N), a trace without any is one window over all its host nodes (`rel`)."""
    ann = sl
    if pattern == STEP_PATTERN:  # as the _profiler_steps view takes the steps
        ann = ann.filter(pl.col("name").str.starts_with("ProfilerStep#") & pl.col("cat").is_in(["user_annotation", "cpu_op"]))
    ann = ann.filter(pl.col("name").str.contains(like_regex(pattern)).fill_null(False))
    ann = ann.select(
        pl.col("trace_id").cast(pl.Int32),
        pl.col("rank").cast(pl.Int32),
        pl.col("uid").alias("window_uid"),
        pl.col("name").str.extract(r"#(\d+)$", 1).cast(pl.Int64, strict=False).alias("step"),
        pl.col("ts_ns").alias("start_ns"),
        pl.col("end_ns").alias("end_ns"),
    ).collect()
    if pattern == STEP_PATTERN:
        rest = (
            rel.join(ann.select("trace_id").unique(), on="trace_id", how="anti")
            .group_by("trace_id")
            .agg(pl.col("rank").first(), pl.col("ts_ns").min().alias("start_ns"), pl.col("end_ns").max().alias("end_ns"))
        )
        ann = pl.concat(
            [
                ann,
                rest.select(
                    "trace_id",
                    "rank",
                    pl.lit(None, pl.Int64).alias("window_uid"),
                    pl.lit(None, pl.Int64).alias("step"),
                    "start_ns",
                    "end_ns",
                ),
            ]
        )
    return ann.sort("trace_id", "start_ns", "window_uid").with_row_index("w").with_columns(pl.col("w").cast(pl.Int64))


def _window_rows(trace_id, ts, win):
    """(rows, w): each row once per window of its trace whose [start_ns, end_ns] holds its time
    `ts` (windows may nest or overlap). `trace_id`, `ts`: numpy arrays."""
    rows, ws = [], []
    for (tid,), wt in win.group_by("trace_id", maintain_order=True):
        mine = np.flatnonzero(trace_id == tid)
        t = ts[mine]
        start, end, w = wt["start_ns"].to_numpy(), wt["end_ns"].to_numpy(), wt["w"].to_numpy()
        if (start[1:] > end[:-1]).all():  # one window at most per time: a search per row
            i = np.searchsorted(start, t, "right") - 1
            ok = (i >= 0) & (t <= end[np.maximum(i, 0)])
            rows.append(mine[ok])
            ws.append(w[i[ok]])
            continue
        o = np.argsort(t, kind="stable")
        lo, hi = np.searchsorted(t[o], start, "left"), np.searchsorted(t[o], end, "right")
        n = np.maximum(hi - lo, 0)
        at = np.repeat(lo, n) + (np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n))
        rows.append(mine[o[at]])
        ws.append(np.repeat(w, n))
    if not rows:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    return np.concatenate(rows), np.concatenate(ws)


def _host_slices(sl):
    """The slices that become host nodes, with what the nodes need."""
    return (
        sl.filter(pl.col("cat").is_in(HOST_CATS) & (pl.col("dur_ns") > 0) & (pl.col("uid") >= 0))
        .select(
            pl.col("trace_id").cast(pl.Int32),
            pl.col("rank").cast(pl.Int32),
            "uid",
            "ts_ns",
            "end_ns",
            "parent_uid",
            "depth",
            "pre",
            "subtree_end",
            pl.struct("pid", "pid_str", "tid", "tid_str").hash().alias("thread"),
            pl.col("name").is_in(BLOCKING).alias("blocking"),
        )
        .collect()
    )


def _host_nodes(rel, win):
    """The host runs: two nodes per relevant slice and window, in tree order per (window, thread);
    {column: numpy array}."""
    rows, w = _window_rows(rel["trace_id"].to_numpy(), rel["ts_ns"].to_numpy(), win)
    n = len(rows)
    enter = np.concatenate([np.ones(n, bool), np.zeros(n, bool)])
    # enter: at its pre; leave: after the last of its subtree, deeper ones first
    k1 = np.concatenate([rel["pre"].to_numpy()[rows], rel["subtree_end"].to_numpy()[rows]])
    k2 = (~enter).astype(np.int8)
    k3 = np.concatenate([np.zeros(n, np.int64), -rel["depth"].to_numpy()[rows].astype(np.int64)])
    ww = np.concatenate([w, w])
    order = _order(ww, k1, k2, k3)
    del k1, k2, k3, w
    src = np.concatenate([rows, rows])[order]  # each node's row of rel
    del rows

    def col(name, fill=None):
        c = rel[name]
        return (c.fill_null(fill) if fill is not None else c).to_numpy()[src]

    enter = enter[order]
    ww = ww[order]
    del order
    thread = col("thread")
    t = np.where(enter, col("ts_ns"), col("end_ns"))
    new_run = np.ones(len(src), bool)
    new_run[1:] = (ww[1:] != ww[:-1]) | (thread[1:] != thread[:-1])
    # nesting among these slices only: how many are open after each node
    open_after = _segmented_cumsum(np.where(enter, 1, -1), new_run)
    outer_enter = enter & (open_after == 1)
    uid = col("uid")
    parent = col("parent_uid", -1)
    blocking = col("blocking", False).astype(bool)  # a slice without a name has no blocking flag
    kind = np.where(new_run, START, np.where(outer_enter, DEPENDENCY, CPU))
    w_link = np.maximum(t - np.roll(t, 1), 0)  # a child may end up to TOL_NS after its parent
    w_link = np.where((kind == CPU) & (enter | ~blocking), w_link, 0)
    link_uid = np.where(np.roll(enter, 1), np.roll(uid, 1), np.where(~enter, uid, np.roll(parent, 1)))
    link_uid = np.where(kind == CPU, link_uid, -1)
    return {
        "w": ww,
        "trace_id": col("trace_id"),
        "uid": uid,
        "enter": enter,
        "t": t,
        "kind": kind,
        "lw": w_link,
        "luid": link_uid,
    }


def _order(ww, k1, k2, k3):
    """np.lexsort((k3, k2, k1, ww)) of the host nodes (window, pre or subtree end, leave, minus
    depth: no two nodes share all four), by one int64 key where it fits: a tenth of the time."""
    if not len(ww):
        return np.empty(0, np.int64)
    lo = int(k3.min())
    span1, span3 = int(k1.max()) + 1, int(k3.max()) - lo + 1
    if int(ww.min()) < 0 or int(k1.min()) < 0 or (int(ww.max()) + 1) * span1 * 2 * span3 >= 1 << 62:
        return np.lexsort((k3, k2, k1, ww))
    key = ww * span1
    key += k1
    key *= 2
    key += k2
    key *= span3
    key += k3 - lo
    return np.argsort(key)


def _segmented_cumsum(x, new_run):
    """Running sum of `x` that restarts where new_run holds (new_run[0] must)."""
    c = np.cumsum(x)
    return c - (c - x)[run_heads(new_run)] if len(x) else c


def run_heads(new_run):
    """Index of the first node of each node's run (new_run: where a run starts; new_run[0] holds)."""
    return np.maximum.accumulate(np.where(new_run, np.arange(len(new_run)), 0))


def _queue(k):
    """Per linked device event (rows of `k`): the stream's queue depth after its launch and after
    its start (the queue_depth view's rule: +1 at the launch call, -1 at the start, starts first
    at equal times)."""
    m = k.height
    stream = np.tile(k.select(pl.struct("trace_id", "device", "stream").hash()).to_series().to_numpy(), 2)
    t = np.concatenate([k["launch_ts_ns"].to_numpy(), k["ts_ns"].to_numpy()])
    d = np.concatenate([np.ones(m, np.int64), -np.ones(m, np.int64)])
    uid = np.tile(k["uid"].to_numpy(), 2)
    o = np.lexsort((uid, d, t, stream))
    new = np.ones(2 * m, bool)
    new[1:] = stream[o][1:] != stream[o][:-1]
    q = np.empty(2 * m, np.int64)
    q[o] = _segmented_cumsum(d[o], new)
    return k.with_columns(pl.Series("q_launch", q[:m]), pl.Series("q_start", q[m:]))


def _calls(sl, keep):
    """Runtime and driver calls (any duration) for which `keep` (a polars expression) holds."""
    return (
        sl.filter(pl.col("cat").is_in(["cuda_runtime", "cuda_driver"]) & keep)
        .select(
            pl.col("trace_id").cast(pl.Int32),
            "uid",
            "correlation",
            "ts_ns",
            "end_ns",
            "pid",
            "tid",
            pl.when(pl.col("name").is_in(DEVICE_SYNC))
            .then(pl.lit("device"))
            .when(pl.col("name").is_in(STREAM_SYNC))
            .then(pl.lit("stream"))
            .alias("sync_call"),
        )
        .collect()
    )


_REQ = {
    "trace_id": pl.Int32,
    "call": pl.Int64,
    "kind": pl.String,
    "device": pl.Int64,
    "stream": pl.Int64,
    "limit_ns": pl.Int64,
    "src": pl.Int64,
    "inferred": pl.Boolean,
}


def _requests(sl, syncs, launches):
    """What each synchronisation waits for, trace-wide: the requests (trace_id, call, kind,
    device, stream, limit_ns, src, inferred) — kind 'stream': the last device event on (device,
    stream) started by limit_ns; 'device': that on every stream; 'event': device event `src` —
    and the stream waits (trace_id, src, device, stream, call_ts, pid, tid)."""
    out = []
    waits = pl.DataFrame(
        schema={
            "trace_id": pl.Int32,
            "src": pl.Int64,
            "device": pl.Int64,
            "stream": pl.Int64,
            "call_ts": pl.Int64,
            "pid": pl.Int64,
            "tid": pl.Int64,
        }
    )
    # the calls the sync events name, by correlation (ids are per process: one used by calls
    # of two processes says nothing)
    ids = pl.concat([syncs["correlation"], syncs["record_corr"]]).drop_nulls().unique()
    calls = _calls(sl, pl.col("correlation").is_in(ids.implode())) if len(ids) else _calls(sl, pl.lit(False))
    by_corr = (
        calls.filter(pl.col("correlation").is_not_null())
        .with_columns(pl.col("pid").n_unique().over(["trace_id", "correlation"]).alias("_n"))
        .filter(pl.col("_n") == 1)
        .sort("ts_ns")
        .unique(["trace_id", "correlation"], keep="first")
        .select("trace_id", "correlation", pl.col("uid").alias("call"), pl.col("ts_ns").alias("call_ts"), "pid", "tid")
    )
    s = syncs.with_columns(pl.col("trace_id").cast(pl.Int32)).join(by_corr, on=["trace_id", "correlation"])
    none = pl.lit(None, pl.Int64)
    out.append(
        s.filter(pl.col("name") == "Stream Sync").select(
            "trace_id",
            "call",
            pl.lit("stream").alias("kind"),
            "device",
            "stream",
            pl.col("end_ns").alias("limit_ns"),
            none.alias("src"),
            pl.lit(False).alias("inferred"),
        )
    )
    out.append(
        s.filter(pl.col("name") == "Context Sync").select(
            "trace_id",
            "call",
            pl.lit("device").alias("kind"),
            "device",
            none.alias("stream"),
            pl.col("end_ns").alias("limit_ns"),
            none.alias("src"),
            pl.lit(False).alias("inferred"),
        )
    )
    ev = s.filter(pl.col("name").is_in(["Event Sync", "Stream Wait Event"]) & pl.col("record_corr").is_not_null())
    if ev.height:
        # the event was recorded behind the last launch onto its stream (from any thread) before the record call
        rec = ev.join(
            by_corr.select("trace_id", pl.col("correlation").alias("record_corr"), pl.col("call_ts").alias("rec_ts")),
            on=["trace_id", "record_corr"],
        )
        src = _asof(
            rec,
            "rec_ts",
            launches.select(
                "trace_id", "device", pl.col("stream").alias("wait_stream"), "launch_ts_ns", pl.col("uid").alias("src")
            ),
            "launch_ts_ns",
            ["trace_id", "device", "wait_stream"],
            "backward",
        ).filter(pl.col("src").is_not_null())
        out.append(
            src.filter(pl.col("name") == "Event Sync").select(
                "trace_id",
                "call",
                pl.lit("event").alias("kind"),
                "device",
                none.alias("stream"),
                none.alias("limit_ns"),
                "src",
                pl.lit(False).alias("inferred"),
            )
        )
        waits = src.filter(pl.col("name") == "Stream Wait Event").select(waits.columns)
    out += _inferred_requests(sl, syncs, launches)
    return pl.concat([o.select(list(_REQ)).cast(_REQ) for o in out]), waits


def _inferred_requests(sl, syncs, launches):
    """The requests of _requests in traces without sync events: the calls themselves say what
    they wait for (a device sync every stream, a stream sync the stream its thread last launched onto)."""
    out = []
    none = pl.lit(None, pl.Int64)
    # traces without sync events: the calls themselves say what they wait for
    inf = _calls(sl, pl.col("name").is_in(DEVICE_SYNC + STREAM_SYNC)).join(
        syncs.select(pl.col("trace_id").cast(pl.Int32)).unique(), on="trace_id", how="anti"
    )
    out.append(
        inf.filter(pl.col("sync_call") == "device").select(
            "trace_id",
            pl.col("uid").alias("call"),
            pl.lit("device").alias("kind"),
            none.alias("device"),
            none.alias("stream"),
            pl.col("end_ns").alias("limit_ns"),
            none.alias("src"),
            pl.lit(True).alias("inferred"),
        )
    )
    st = inf.filter(pl.col("sync_call") == "stream")
    if st.height:
        # the stream it syncs: the one its thread last launched onto
        st = _asof(
            st,
            "ts_ns",
            launches.select(
                "trace_id",
                pl.col("launch_pid").alias("pid"),
                pl.col("launch_tid").alias("tid"),
                "launch_ts_ns",
                "device",
                "stream",
            ),
            "launch_ts_ns",
            ["trace_id", "pid", "tid"],
            "backward",
        ).filter(pl.col("stream").is_not_null())
        out.append(
            st.select(
                "trace_id",
                pl.col("uid").alias("call"),
                pl.lit("stream").alias("kind"),
                "device",
                "stream",
                pl.col("end_ns").alias("limit_ns"),
                none.alias("src"),
                pl.lit(True).alias("inferred"),
            )
        )
    return out


def build(slices, kernels, syncs=None, pattern=STEP_PATTERN):
    """The Graph of every window: `slices`, `kernels` (Arrow tables or polars frames, lazy or
    not), `syncs` (sync_events(); None: there are none); windows are the host slices whose name
    matches the SQL LIKE `pattern` (default: each ProfilerStep#N; a trace without one is one window)."""
    if syncs is None:
        syncs = pl.DataFrame(schema=SYNC_SCHEMA)
    sl = lazy_events(slices, SLICE_COLUMNS)
    rel = _host_slices(sl)
    win = _windows(sl, pattern, rel)
    hn = _host_nodes(rel, win)
    del rel  # memory is the limit on a big trace: each frame and array goes once it is used
    n_host = len(hn["t"])
    k = (
        lazy_events(kernels, KERNEL_COLUMNS)
        # a device event without a time (a hostile trace's) has no place on a path in time
        .filter(pl.col("launch_uid").is_not_null() & pl.col("ts_ns").is_not_null())
        .collect()
        .with_columns(pl.col("trace_id").cast(pl.Int32))
    )
    launches = k.select("trace_id", "uid", "device", "stream", "launch_ts_ns", "launch_pid", "launch_tid")
    k = _queue(k)
    # a device event is in the windows its launch call's start node is in
    starts = _host_index(hn, hn["enter"], k["launch_uid"]).rename({"uid": "launch_uid", "node": "launch_node", "t": "launch_t"})
    kw = (
        k.join(starts, on=["trace_id", "launch_uid"], how="inner")
        .sort("w", "device", "stream", "ts_ns", "uid")
        .with_row_index("i")
        .with_columns(pl.col("i").cast(pl.Int64))
    )
    req, waits = _requests(sl, syncs, launches)
    wait_pairs = _wait_pairs(waits, launches)
    # per window: the wait edges whose two ends are both in it (i: the device event's row in kw)
    kin = kw.select("w", "trace_id", "uid", "end_ns", "i")
    wp_w = wait_pairs.join(
        kin.select("w", "trace_id", pl.col("uid").alias("dst"), pl.col("i").alias("dst_i")), on=["trace_id", "dst"]
    ).join(
        kin.select("w", "trace_id", pl.col("uid").alias("src"), pl.col("end_ns").alias("src_end"), pl.col("i").alias("src_i")),
        on=["w", "trace_id", "src"],
    )
    wait_end = wp_w.group_by("dst_i").agg(pl.col("src_end").max().alias("wait_end")).rename({"dst_i": "i"})
    kw = kw.join(wait_end, on="i", how="left").sort("i")
    kw = _launch_and_gap(kw)
    m = kw.height
    # cross edges (they need kw and hn, dropped before the node arrays are put together)
    ts = kw["ts_ns"].to_numpy()
    la = np.flatnonzero(kw["launch_ok"].to_numpy())
    xs = [
        (kw["launch_node"].to_numpy()[la], n_host + 2 * la, np.maximum(ts[la] - kw["launch_t"].to_numpy()[la], 0), LAUNCH),
        (n_host + 2 * wp_w["src_i"].to_numpy() + 1, n_host + 2 * wp_w["dst_i"].to_numpy(), np.zeros(wp_w.height, np.int64), WAIT),
        _sync_edges(req, hn, kw, n_host),
    ]
    x_src, x_dst, x_w = (np.concatenate([x[i] for x in xs]).astype(np.int64) for i in range(3))
    x_kind = np.concatenate([np.full(len(x[0]), x[3], np.int64) for x in xs])
    del xs, la
    o = np.lexsort((x_src, x_kind, x_dst))  # a fixed order: ties between entries go by it

    # two nodes per device event, its start (node n_host + 2i) and its end (n_host + 2i + 1)
    kuid = kw["uid"].to_numpy()
    kk_arr = kw["kk"].to_numpy()
    g_t = np.empty(2 * m, np.int64)
    g_t[0::2], g_t[1::2] = ts, kw["end_ns"].to_numpy()
    g_kind = np.empty(2 * m, np.int64)
    g_kind[0::2], g_kind[1::2] = np.where(kk_arr, KERNEL_KERNEL, START), KERNEL
    g_w = np.empty(2 * m, np.int64)
    g_w[0::2] = np.where(kk_arr, np.maximum(ts - kw["prev_end"].fill_null(0).to_numpy(), 0), 0)
    g_w[1::2] = kw["dur_ns"].fill_null(0).to_numpy()
    g_luid = np.empty(2 * m, np.int64)
    g_luid[0::2], g_luid[1::2] = np.where(kk_arr, np.roll(kuid, 1), -1), kuid
    g_window = np.repeat(kw["w"].to_numpy(), 2)
    del kw, k, kin, wp_w, launches, ts, kk_arr

    # all nodes: host runs, then device events
    window = np.concatenate([hn.pop("w"), g_window])
    del g_window
    t = np.concatenate([hn.pop("t"), g_t])
    del g_t
    uid = np.concatenate([hn.pop("uid"), np.repeat(kuid, 2)])
    del kuid
    kind = np.concatenate([hn.pop("kind"), g_kind])
    del g_kind
    lw = np.concatenate([hn.pop("lw"), g_w])
    del g_w
    luid = np.concatenate([hn.pop("luid"), g_luid])
    del g_luid, hn
    head = run_heads(kind == START)
    return Graph(
        window=window,
        head=head,
        t=t,
        uid=uid,
        link_kind=kind,
        link_w=lw,
        link_uid=luid,
        x_src=x_src[o],
        x_dst=x_dst[o],
        x_w=x_w[o],
        x_kind=x_kind[o],
        windows=win,
    )


def _wait_pairs(waits, launches):
    """(trace_id, src, dst) for the stream waits of _requests: the device event `dst` each one
    holds back until device event `src` is done."""
    # which device event each wait holds back: the next launch onto the waiting stream from the
    # thread of the cudaStreamWaitEvent call, at or after it
    if not waits.height:
        return pl.DataFrame(schema={"trace_id": pl.Int32, "src": pl.Int64, "dst": pl.Int64})
    wp = _asof(
        waits,
        "call_ts",
        launches.select(
            "trace_id",
            "device",
            "stream",
            pl.col("launch_pid").alias("pid"),
            pl.col("launch_tid").alias("tid"),
            "launch_ts_ns",
            pl.col("uid").alias("dst"),
        ),
        "launch_ts_ns",
        ["trace_id", "device", "stream", "pid", "tid"],
        "forward",
    )
    return wp.filter(pl.col("dst").is_not_null()).select("trace_id", "src", "dst").unique()


def _launch_and_gap(kw):
    """`kw` (device events in window, device, stream and time order) with prev_end, the end of the
    one before on its stream; launch_ok, whether its launch delay is a launch edge (it started a
    stream left empty before its launch); kk, whether the gap after the one before is a
    kernel-kernel edge."""
    same = ["w", "device", "stream"]
    kw = kw.with_columns(pl.col("end_ns").shift(1).over(same).alias("prev_end"))
    launch_ok = (
        (pl.col("q_launch") == 1)
        & (pl.col("q_start") == 0)
        & (pl.col("prev_end").is_null() | (pl.col("prev_end") < pl.col("launch_t")))
        & (pl.col("wait_end").is_null() | (pl.col("wait_end") < pl.col("launch_t")))
    ).fill_null(False)
    kk = (
        ~launch_ok & pl.col("prev_end").is_not_null() & (pl.col("wait_end").is_null() | (pl.col("wait_end") < pl.col("prev_end")))
    )
    return kw.with_columns(launch_ok.alias("launch_ok"), kk.alias("kk"))


def _host_index(hn, mask, uids):
    """(w, trace_id, uid, node, t) of the host nodes where `mask` holds whose uid is among `uids`."""
    pick = np.flatnonzero(mask & np.isin(hn["uid"], uids.drop_nulls().to_numpy()))
    return pl.DataFrame(
        {"w": hn["w"][pick], "trace_id": hn["trace_id"][pick], "uid": hn["uid"][pick], "node": pick, "t": hn["t"][pick]}
    )


def _sync_edges(req, hn, kw, n_host):
    """sync cross edges: (src nodes, dst nodes, weights, SYNC) from the requests, per window."""
    if req.height == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int64), SYNC
    # the call must be a node of the window: its end is where the wait ends
    calls = _host_index(hn, ~hn["enter"], req["call"]).select(
        "w", "trace_id", pl.col("uid").alias("call"), pl.col("node").alias("dst")
    )
    r = req.join(calls, on=["trace_id", "call"])
    ends = kw.select("w", "trace_id", "device", "stream", "uid", "ts_ns", "end_ns", (n_host + 2 * pl.col("i") + 1).alias("end"))
    parts = []
    fixed = r.filter(pl.col("kind") == "event").join(ends.select("w", pl.col("uid").alias("src"), "end"), on=["w", "src"])
    parts.append(fixed.select("dst", "end"))
    streams = ends.select("w", "device", "stream").unique()
    per_dev = r.filter(pl.col("kind") == "device").drop("device", "stream").join(streams, on="w")
    by_stream = pl.concat([r.filter(pl.col("kind") == "stream"), per_dev.select(r.columns)])
    if by_stream.height:
        last = _asof(
            by_stream,
            "limit_ns",
            ends.select("w", "device", "stream", "ts_ns", "end_ns", "end"),
            "ts_ns",
            ["w", "device", "stream"],
            "backward",
        )
        last = last.filter(
            pl.col("end").is_not_null() & (~pl.col("inferred") | (pl.col("end_ns") <= pl.col("limit_ns") + TOL_NS))
        )
        parts.append(last.select("dst", "end"))
    e = pl.concat([p.select(pl.col("end").cast(pl.Int64), pl.col("dst").cast(pl.Int64)) for p in parts]).unique()
    return e["end"].to_numpy(), e["dst"].to_numpy(), np.zeros(e.height, np.int64), SYNC
