"""A deliberately plain critical path reference: the `json` module, explicit nodes and edges,
a per-thread call-stack walk and a longest path by Kahn's topological order.

It shares no code with tracecols (the host tree comes from tree_reference's stack walk) and
follows the rules written in docs/analyses.md and model/cp_graph.py one event at a time.
"""

import re
from collections import defaultdict, deque

from tree_reference import host_slices, to_ns, walk

HOST = {
    "cpu_op": "op",
    "operator": "op",
    "cuda_runtime": "call",
    "runtime": "call",
    "cuda_driver": "call",
    "driver": "call",
    "hip_runtime": "call",
    "hip_driver": "call",
}
DEVICE = {"kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset"}
BLOCKING = {
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
}
DEVICE_SYNC = {"cudaDeviceSynchronize", "hipDeviceSynchronize"}
STREAM_SYNC = {"cudaStreamSynchronize", "hipStreamSynchronize"}
TOL_NS = 1000


def like(pattern):
    return re.compile("^" + "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern) + "$", re.DOTALL)


def _cat(e):
    return str(e.get("cat", "")).lower()


def critical_paths(events, pattern=None):
    """{window uid (None: whole trace): (length_ns, [(kind, weight_ns, src_uid, dst_uid)])}."""
    sl = host_slices(events)
    tree = walk(sl)
    info = {uid: (thread, ts, end) for uid, thread, ts, end in sl}
    # windows
    if pattern is None:
        wins = [
            (u, info[u][1], info[u][2])
            for u in info
            if re.match(r"^ProfilerStep#", str(events[u].get("name", "")))
            and _cat(events[u]) in ("user_annotation", "cpu_op", "operator")
        ]
    else:
        rx = like(pattern)
        wins = [(u, info[u][1], info[u][2]) for u in info if rx.match(str(events[u].get("name", "")))]
    rel = [u for u in info if HOST.get(_cat(events[u])) and info[u][2] > info[u][1]]
    if pattern is None and not wins and rel:
        wins = [(None, min(info[u][1] for u in rel), max(info[u][2] for u in rel))]
    # launch links by correlation: runtime before driver, then the earliest, in one process only
    calls = defaultdict(list)
    for u in info:
        if HOST.get(_cat(events[u])) == "call":
            c = (events[u].get("args") or {}).get("correlation")
            if c is not None:
                calls[c].append(u)
    launch_of = {}
    for c, us in calls.items():
        if len({repr(events[u].get("pid")) for u in us}) == 1:
            launch_of[c] = min(us, key=lambda u: (_cat(events[u]) not in ("cuda_runtime", "runtime"), info[u][1], u))
    kern = {}
    for uid, e in enumerate(events):
        if e.get("ph") == "X" and _cat(e) in DEVICE:
            a = e.get("args") or {}
            ts = to_ns(e["ts"])
            kern[uid] = {
                "uid": uid,
                "ts": ts,
                "end": ts + max(to_ns(e.get("dur", 0) or 0), 0),
                "stream": (repr(a.get("device", e.get("pid"))), repr(a.get("stream", e.get("tid")))),
                "launch": launch_of.get(a.get("correlation")),
            }
    by_stream = defaultdict(list)
    for k in kern.values():
        by_stream[k["stream"]].append(k)
    for ks in by_stream.values():  # one at a time on a stream: an overlap is cut at the next start
        ks.sort(key=lambda k: (k["ts"], k["uid"]))
        for a, b in zip(ks, ks[1:]):
            a["end"] = min(a["end"], b["ts"])
    linked = [k for k in kern.values() if k["launch"] is not None]
    # queue depth after each launch and each start, per stream
    q = {}
    for ks in by_stream.values():
        ch = sorted(
            [(info[k["launch"]][1], 1, k["uid"]) for k in ks if k["launch"] is not None]
            + [(k["ts"], -1, k["uid"]) for k in ks if k["launch"] is not None]
        )
        depth = 0
        for _t, d, u in ch:
            depth += d
            q[(u, d)] = depth
    # sync requests
    syncs = [e for e in events if e.get("ph") == "X" and _cat(e) == "cuda_sync"]
    call_by_corr = {}
    for c, us in calls.items():
        if len({repr(events[u].get("pid")) for u in us}) == 1:
            call_by_corr[c] = min(us, key=lambda u: (info[u][1], u))
    requests, waits = [], []  # (call, kind, stream or None, limit, src kernel, inferred); (src, dst)

    def last_launch_onto(stream, before):
        cand = [k for k in linked if k["stream"] == stream and info[k["launch"]][1] <= before]
        return max(cand, key=lambda k: (info[k["launch"]][1], k["ts"], k["uid"]))["uid"] if cand else None

    for e in syncs:
        a = e.get("args") or {}
        call = call_by_corr.get(a.get("correlation"))
        if call is None:
            continue
        end = to_ns(e["ts"]) + to_ns(e.get("dur", 0) or 0)
        name = e.get("name")
        dev = repr(a.get("device", e.get("pid")))
        if name == "Stream Sync":
            requests.append((call, "stream", (dev, repr(a.get("stream"))), end, None, False))
        elif name == "Context Sync":
            requests.append((call, "device", None, end, None, False))
        elif name in ("Event Sync", "Stream Wait Event"):
            rec = call_by_corr.get(a.get("wait_on_cuda_event_record_corr_id"))
            if rec is None:
                continue
            src = last_launch_onto((dev, repr(a.get("wait_on_stream"))), info[rec][1])
            if src is None:
                continue
            if name == "Event Sync":
                requests.append((call, "event", None, None, src, False))
            else:  # the next launch onto the waiting stream from the waiting call's thread
                stream = (dev, repr(a.get("stream")))
                nxt = [
                    k
                    for k in linked
                    if k["stream"] == stream and info[k["launch"]][0] == info[call][0] and info[k["launch"]][1] >= info[call][1]
                ]
                if nxt:
                    waits.append((src, min(nxt, key=lambda k: (info[k["launch"]][1], k["ts"], k["uid"]))["uid"]))
    if not syncs:
        for u in info:
            name = events[u].get("name")
            if HOST.get(_cat(events[u])) != "call" or name not in DEVICE_SYNC | STREAM_SYNC:
                continue
            if name in DEVICE_SYNC:
                requests.append((u, "device", None, info[u][2], None, True))
                continue
            mine = [k for k in linked if info[k["launch"]][0] == info[u][0] and info[k["launch"]][1] <= info[u][1]]
            if mine:
                last = max(mine, key=lambda k: (info[k["launch"]][1], k["ts"], k["uid"]))
                requests.append((u, "stream", last["stream"], info[u][2], None, True))

    out = {}
    for w_uid, w_start, w_end in wins:
        out[w_uid] = _window(events, info, tree, rel, linked, q, requests, waits, w_start, w_end)
    return out


def _window(events, info, tree, rel, linked, q, requests, waits, w_start, w_end):
    nodes = {}  # (uid, "s"|"e") -> time
    edges = []  # (src node, dst node, weight, kind, uid)
    inwin = {u for u in rel if w_start <= info[u][1] <= w_end}

    def rel_parent(u):
        p = tree[u][0]
        while p is not None and p not in inwin:
            p = tree[p][0]
        return p

    # host: a DFS of the relevant slices per thread
    children = defaultdict(list)
    for u in inwin:
        children[(info[u][0], rel_parent(u))].append(u)
    threads = {info[u][0] for u in inwin}

    def dfs(th, u, seq):
        seq.append((u, "s"))
        for c in sorted(children[(th, u)], key=lambda c: (info[c][1], -info[c][2], c)):
            dfs(th, c, seq)
        seq.append((u, "e"))

    for th in threads:
        seq = []
        for r in sorted(children[(th, None)], key=lambda c: (info[c][1], -info[c][2], c)):
            dfs(th, r, seq)
        for n in seq:
            nodes[n] = info[n[0]][1] if n[1] == "s" else info[n[0]][2]
        for a, b in zip(seq, seq[1:]):
            if b[1] == "s" and rel_parent(b[0]) is None:
                edges.append((a, b, 0, "dependency", None))
                continue
            w = max(nodes[b] - nodes[a], 0)
            if b[1] == "e" and events[b[0]].get("name") in BLOCKING:
                w = 0
            uid = a[0] if a[1] == "s" else b[0] if b[1] == "e" else tree[a[0]][0]
            edges.append((a, b, w, "cpu", uid))
    # device
    ks = [k for k in linked if k["launch"] in inwin]
    kuids = {k["uid"] for k in ks}
    wait_src = defaultdict(list)
    for s, d in waits:
        if s in kuids and d in kuids:
            wait_src[d].append(s)
    kend = {k["uid"]: k["end"] for k in ks}
    streams = defaultdict(list)
    for k in ks:
        streams[k["stream"]].append(k)
    for items in streams.values():
        items.sort(key=lambda k: (k["ts"], k["uid"]))
        prev = None
        for k in items:
            u = k["uid"]
            nodes[("k", u, "s")], nodes[("k", u, "e")] = k["ts"], k["end"]
            edges.append((("k", u, "s"), ("k", u, "e"), k["end"] - k["ts"], "kernel", u))
            wait_end = max((kend[x] for x in wait_src[u]), default=None)
            for x in wait_src[u]:
                edges.append((("k", x, "e"), ("k", u, "s"), 0, "wait", None))
            lt = info[k["launch"]][1]
            if (
                q.get((u, 1)) == 1
                and q.get((u, -1)) == 0
                and (prev is None or prev["end"] < lt)
                and (wait_end is None or wait_end < lt)
            ):
                edges.append(((k["launch"], "s"), ("k", u, "s"), max(k["ts"] - lt, 0), "launch", u))
            elif prev is not None and (wait_end is None or wait_end < prev["end"]):
                edges.append(
                    (("k", prev["uid"], "e"), ("k", u, "s"), max(k["ts"] - prev["end"], 0), "kernel_kernel", prev["uid"])
                )
            prev = k
    # syncs
    for call, kind, stream, limit, src, inferred in requests:
        if call not in inwin:
            continue
        if kind == "event":
            if src in kuids:
                edges.append((("k", src, "e"), (call, "e"), 0, "sync", None))
            continue
        for s, items in streams.items():
            if kind == "stream" and s != stream:
                continue
            before = [k for k in items if k["ts"] <= limit]
            if before:
                last = max(before, key=lambda k: (k["ts"], k["uid"]))
                if not inferred or last["end"] <= limit + TOL_NS:
                    edges.append((("k", last["uid"], "e"), (call, "e"), 0, "sync", None))
    edges = list(dict.fromkeys(edges))
    # longest path, Kahn's order
    succ, indeg = defaultdict(list), {n: 0 for n in nodes}
    for e in edges:
        succ[e[0]].append(e)
        indeg[e[1]] += 1
    ready = deque(n for n in nodes if indeg[n] == 0)
    dist = {n: 0 for n in nodes}
    pred = {}
    seen = 0
    while ready:
        n = ready.popleft()
        seen += 1
        for e in succ[n]:
            if dist[n] + e[2] > dist[e[1]] or (e[1] not in pred and dist[n] + e[2] == dist[e[1]]):
                dist[e[1]], pred[e[1]] = dist[n] + e[2], e
            indeg[e[1]] -= 1
            if indeg[e[1]] == 0:
                ready.append(e[1])
    assert seen == len(nodes), "the graph has a cycle"
    if not nodes:
        return 0, []
    end = max(nodes, key=lambda n: (dist[n], -nodes[n]))
    path, n = [], end
    while n in pred:
        e = pred[n]
        path.append((e[3], e[2], e[0][1] if e[0][0] == "k" else e[0][0], e[1][1] if e[1][0] == "k" else e[1][0]))
        n = e[0]
    return dist[end], path[::-1]
