"""The longest path of each window of a cp_graph.Graph, in one sweep over arrays.

Within a run every node is linked from the one before, so the longest path ending at node i is

    dist(i) = P(i) + max over the entries e into its run at or before i of (value(e) - P(node of e))

where P is the running sum of the run's link weights (0 at its head) and an entry is the head
itself (value 0: a path may start anywhere) or a cross edge arriving there (value = dist of its
source + its weight). A run is thus one running maximum, and the whole graph a few of them once
the cross edges have values.

Launch edges go from host runs, which nothing enters but sync edges, to device runs: their
values follow from the host runs' maxima. Sync and wait edges are what makes the problem a
sweep: they are taken one at a time in order of their destination's time — an order of the
graph, since work waited for ended before the wait did — each value a prefix query over its
source's run (through the launch into that run, if any). Should timestamps disagree with that
order, the values are corrected by repeating the vectorised pass until they hold (each repeat
can only raise them, up to the longest path).

Ties go to the earliest entry of the run (the path keeps to the run, as HTA's graph keeps to the
first-added edge), the path's end is the node of the window with the largest dist (the earliest
on ties).
"""

import bisect

import numpy as np

from .cp_graph import LAUNCH, Graph

NEG = np.iinfo(np.int64).min // 4  # no entry (still far from overflow when P is added)


def prefix_sums(g: Graph):
    """P: the running sum of link weights along each run, 0 at the head."""
    c = np.cumsum(g.link_w)
    return c - c[g.head] if len(c) else c


def solve(g: Graph):
    """(dist per node, the chosen entry per node, the value of each cross edge). The chosen
    entry of node i is at node arg[i]: best[arg[i]] is a cross edge index, or -1 for the run's head."""
    P = prefix_sums(g)
    lazy = g.x_kind == LAUNCH
    val = np.full(len(g.x_src), NEG, np.int64)
    seq = np.flatnonzero(~lazy)
    if len(seq):
        _sequential(g, P, lazy, seq, val)
    dist, arg, best = _all_runs(g, P, lazy, val)
    for _ in range(len(seq) + 1):  # only if timestamps broke the order of the sweep
        new = dist[g.x_src[seq]] + g.x_w[seq]
        if np.array_equal(new, val[seq]):
            break
        val[seq] = new
        dist, arg, best = _all_runs(g, P, lazy, val)
    return dist, arg, best, val


def _sequential(g, P, lazy, seq, val):
    """Values of the sync and wait edges, one at a time in order of their destination's time."""
    head, xs, xd, xw = g.head, g.x_src, g.x_dst, g.x_w
    li = np.flatnonzero(lazy)
    li = li[np.lexsort((xd[li], head[xd[li]]))]
    l_run, l_dst = head[xd[li]], xd[li]
    runs: dict = {}  # run head -> (entry nodes, their value - P, running max of that), by node

    def query(x):
        r = head[x]
        best = 0
        lo, hi = np.searchsorted(l_run, r, "left"), np.searchsorted(l_run, r, "right")
        for j in range(lo, hi):
            if l_dst[j] > x:
                break
            e = li[j]
            best = max(best, query(xs[e]) + xw[e] - P[l_dst[j]])
        got = runs.get(r)
        if got is not None:
            k = bisect.bisect_right(got[0], x)
            if k:
                best = max(best, got[2][k - 1])
        return int(P[x]) + best

    order = seq[np.lexsort((g.t[xs[seq]], g.t[xd[seq]]))]
    for e in order:
        v = query(xs[e]) + int(xw[e])
        val[e] = v
        d = int(xd[e])
        nodes, keys, best = runs.setdefault(int(head[d]), ([], [], []))
        key = v - int(P[d])
        if not nodes or d >= nodes[-1]:
            nodes.append(d)
            keys.append(key)
            best.append(max(key, best[-1]) if best else key)
        else:  # out of time order: put it in place and redo the running maximum
            k = bisect.bisect_right(nodes, d)
            nodes.insert(k, d)
            keys.insert(k, key)
            best[:] = np.maximum.accumulate(keys).tolist()


def _levels(g, lazy):
    """Per node, the level of its run: 0 without launch entries, else one more than the runs
    those launches come from."""
    lvl = np.zeros(len(g.t), np.int32)
    li = np.flatnonzero(lazy)
    src_run, dst_run = g.head[g.x_src[li]], g.head[g.x_dst[li]]
    while True:
        new = np.zeros_like(lvl)
        np.maximum.at(new, dst_run, lvl[src_run] + 1)
        new = np.maximum(new, lvl)
        if np.array_equal(new, lvl):
            return lvl[g.head]
        lvl = new


PART_NODES = 1 << 21  # nodes solved at once (whole runs): bounds the memory of a big graph


def _all_runs(g, P, lazy, val):
    """dist, arg and best of every node, given the values of the sync and wait edges: the runs
    level by level, each launch's value from the level below; each level in parts of whole runs."""
    n = len(g.t)
    dist = np.zeros(n, np.int64)
    arg = np.arange(n)
    best = np.full(n, -1, np.int64)
    if n == 0:
        return dist, arg, best
    level = _levels(g, lazy)
    cuts = np.append(np.unique(g.head[::PART_NODES]), n)  # each at the head of a run
    val = val.copy()
    li = np.flatnonzero(lazy)
    for lv in range(int(level.max()) + 1):
        if lv:
            val[li] = dist[g.x_src[li]] + g.x_w[li]
        for a, b in zip(cuts[:-1], cuts[1:]):
            nodes = a + np.flatnonzero(level[a:b] == lv)
            if len(nodes):
                dist[nodes], arg[nodes], best[nodes] = _runs(g, P, val, nodes)
    return dist, arg, best


def _runs(g, P, val, nodes):
    """dist, arg, best for `nodes` (whole runs, ascending) from the cross edges' values."""
    m = len(nodes)
    xd = g.x_dst  # ascending: the edges into these nodes are one range of them
    e = np.arange(np.searchsorted(xd, nodes[0], "left"), np.searchsorted(xd, nodes[-1], "right"))
    at = np.minimum(np.searchsorted(nodes, xd[e]), m - 1)  # the destination's place in `nodes`
    ok = (nodes[at] == xd[e]) & (val[e] > NEG)
    e, at = e[ok], at[ok]
    key = val[e] - P[xd[e]]
    # the best entry at each node: highest key, then the first edge
    o = np.lexsort((e, -key, at))
    e, key, at = e[o], key[o], at[o]
    first = np.ones(len(e), bool)
    first[1:] = at[1:] != at[:-1]
    e, key, at = e[first], key[first], at[first]
    node_key = np.full(m, NEG, np.int64)
    node_best = np.full(m, -2, np.int64)  # -2: no entry here
    node_key[at] = key
    node_best[at] = e
    is_head = g.head[nodes] == nodes
    start = is_head & (node_best == -2)
    node_key[start], node_best[start] = 0, -1
    # running maximum per run, and where it was reached first (ties go to the earliest entry):
    # keys as ranks, offset by run so that one maximum over everything restarts at each head
    has = node_key > NEG
    uniq, rank = np.unique(node_key[has], return_inverse=True)
    code = np.zeros(m, np.int64)
    code[has] = rank + 1
    run_no = np.cumsum(is_head)
    acc = np.maximum.accumulate(run_no * (len(uniq) + 1) + code)
    cm = uniq[acc - run_no * (len(uniq) + 1) - 1]  # every run's head has a key
    rise = np.ones(m, bool)
    rise[1:] = acc[1:] > acc[:-1]
    at = np.maximum.accumulate(np.where(rise, np.arange(m), 0))
    return P[nodes] + cm, nodes[at], node_best


def paths(g: Graph, dist, arg, best):
    """Every window's longest path as edges, in order: (window, kind, src node, dst node,
    weight, uid) arrays; kind is a cp_graph code, uid the event the time is spent in (-1: none)."""
    n = len(g.t)
    out = []
    if n == 0:
        return _empty()
    # the end: per window, the largest dist, then the earliest time, then the first node
    top = np.full(int(g.window.max()) + 1, NEG, np.int64)
    np.maximum.at(top, g.window, dist)
    cand = np.flatnonzero(dist == top[g.window])
    o = cand[np.lexsort((cand, g.t[cand], g.window[cand]))]
    first = np.ones(len(o), bool)
    first[1:] = g.window[o][1:] != g.window[o][:-1]
    for end in o[first]:
        segs, x = [], int(end)
        while True:
            a = int(arg[x])
            segs.append(("run", a, x))
            e = int(best[a])
            if e < 0:
                break
            segs.append(("edge", e, 0))
            x = int(g.x_src[e])
        out.append((int(g.window[end]), segs[::-1]))
    parts = []
    for w, segs in out:
        for s in segs:
            if s[0] == "run":
                a, b = s[1], s[2]
                if b > a:
                    i = np.arange(a + 1, b + 1)
                    parts.append((np.full(len(i), w), g.link_kind[i], i - 1, i, g.link_w[i], g.link_uid[i]))
            else:
                e = s[1]
                uid = g.uid[g.x_dst[e]] if g.x_kind[e] == LAUNCH else -1
                parts.append(
                    (
                        np.array([w]),
                        g.x_kind[e : e + 1],
                        g.x_src[e : e + 1],
                        g.x_dst[e : e + 1],
                        g.x_w[e : e + 1],
                        np.array([uid]),
                    )
                )
    if not parts:
        return _empty()
    return tuple(np.concatenate([p[k] for p in parts]).astype(np.int64) for k in range(6))


def _empty():
    return tuple(np.empty(0, np.int64) for _ in range(6))
