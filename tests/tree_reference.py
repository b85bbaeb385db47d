"""A deliberately simple host-tree reference: plain Python, `json` module, one stack per thread.

It shares no code with tracecols: it reads the JSON itself and walks each thread's slices
in (ts, -end, uid) order with the nesting rule of docs/tree.md.
"""

import gzip
import json
from decimal import Decimal

TOL_NS = 1000
DEVICE_CATS = {
    "kernel",
    "gpu_memcpy",
    "gpu_memset",
    "gpu_user_annotation",
    "memcpy",
    "memset",
    "mtia_ccp_events",
    "cuda_profiler_range",
}
HOST_MARK = {"cpu_op", "operator", "python_function", "user_annotation"}


def load(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as f:
        return json.load(f, parse_float=Decimal)  # exact: some traces carry 19 significant digits


def to_ns(v):
    return int(Decimal(v) * 1000)


def host_slices(events):
    """[(uid, thread_key, ts_ns, end_ns)] of the host-side complete events."""
    dev, host = set(), set()
    for e in events:
        if e.get("ph") != "X":
            continue
        cat = str(e.get("cat", "")).lower()
        if cat in DEVICE_CATS:
            dev.add(e.get("pid"))
        if cat in HOST_MARK:
            host.add(e.get("pid"))
    device_pids = dev - host
    out = []
    for uid, e in enumerate(events):
        if e.get("ph") != "X" or str(e.get("cat", "")).lower() in DEVICE_CATS or e.get("pid") in device_pids:
            continue
        ts = to_ns(e["ts"])
        dur = max(to_ns(e.get("dur", 0) or 0), 0)
        out.append((uid, (repr(e.get("pid")), repr(e.get("tid"))), ts, ts + dur))
    return out


def walk(slices, tol=TOL_NS):
    """{uid: (parent_uid or None, depth)} by a per-thread stack walk."""
    threads = {}
    for s in slices:
        threads.setdefault(s[1], []).append(s)
    res = {}
    for items in threads.values():
        items.sort(key=lambda s: (s[2], -s[3], s[0]))
        stack = []  # [uid, eff_end]
        for uid, _, ts, end in items:
            while stack and (stack[-1][1] <= ts or end - stack[-1][1] >= tol):
                stack.pop()
            parent = stack[-1][0] if stack else None
            res[uid] = (parent, len(stack))
            eff = min(end, stack[-1][1]) if stack else end
            stack.append([uid, eff])
    return res


def stack_paths(parent, cat, name):
    """{uid: number of its path}: slices on equal paths of frame names from their root (a
    `Trace` slice adds no frame) get equal numbers, by a walk up `parent` ({uid: parent uid or
    None}; `cat`, `name`: {uid: …}). A frame is the name with `;` as `,` and newlines as spaces,
    `(unnamed)` for none."""

    def frame(text):
        text = "" if text is None else str(text)
        return text.replace(";", ",").replace("\r", " ").replace("\n", " ") or "(unnamed)"

    known, path = {}, {}

    def of(u):  # iterative: Python stacks are deep
        todo = []
        while u is not None and u not in path:
            todo.append(u)
            u = parent[u]
        up = path[u] if u is not None else -1
        for v in reversed(todo):
            up = path[v] = up if cat[v] == "Trace" else known.setdefault((up, frame(name[v])), len(known))
        return up

    return {u: of(u) for u in parent}


def annotation_above(parent, cat, u):
    """The first user_annotation strictly above slice `u`, walking up `parent`, or None."""
    u = parent[u]
    while u is not None and cat[u] != "user_annotation":
        u = parent[u]
    return u


def assert_one_to_one(pairs, what):
    """Each left value has one right value and each right value one left value."""
    pairs = set(pairs)
    assert len({a for a, _ in pairs}) == len(pairs), f"one path, two {what}"
    assert len({b for _, b in pairs}) == len(pairs), f"two paths, one {what}"
