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
