"""User annotations (annotation_breakdown, kernel_annotations) and the [memory] records
(memory_timeline, memory_summary, memory_by_op): hand-built traces whose answers are worked
out by hand below (times in µs), then the corpus against plain loops over the raw JSON."""

from collections import defaultdict
from decimal import Decimal

import pytest
from conftest import CORPUS, DATA_TRACE, open_events
from reference import load

import tracecols

US = 1000  # ns per µs


class Trace:
    """A hand-built Kineto trace: host pid 1, device 0 (pid 0), streams as tids."""

    def __init__(self):
        self.ev = []
        self.corr = 0

    def x(self, cat, name, ts, dur, tid=1, pid=1, args=None):
        self.ev.append({"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args or {}})
        return len(self.ev) - 1

    def kernel(self, name, ts, dur, stream, launch_ts=None):
        """A kernel on device 0, launched from tid 1 at launch_ts (None: no launch call)."""
        self.corr += 1
        if launch_ts is not None:
            self.x("cuda_runtime", "cudaLaunchKernel", launch_ts, 0.5, args={"correlation": self.corr})
        return self.x("kernel", name, ts, dur, tid=stream, pid=0, args={"device": 0, "stream": stream, "correlation": self.corr})

    def memory(self, ts, nbytes, allocated, reserved, device_id=0, tid=1):
        self.ev.append(
            {
                "ph": "i",
                "cat": "cpu_instant_event",
                "s": "t",
                "name": "[memory]",
                "pid": 1,
                "tid": tid,
                "ts": ts,
                "args": {
                    "Total Reserved": reserved,
                    "Total Allocated": allocated,
                    "Bytes": nbytes,
                    "Addr": 4096 + len(self.ev),
                    "Device Id": device_id,
                    "Device Type": 1,
                },
            }
        )
        return len(self.ev) - 1

    def open(self, tmp_path):
        return open_events(tmp_path, self.ev)


@pytest.fixture
def annotated(tmp_path):
    t = Trace()
    u = {}
    t.x("user_annotation", "ProfilerStep#1", -10, 115)
    u["ps2"] = t.x("user_annotation", "ProfilerStep#2", 105, 35)
    t.x("user_annotation", "outer", 0, 100)
    u["inner_a"] = t.x("user_annotation", "inner", 10, 30)
    t.x("cpu_op", "aten::mm", 12, 18)
    u["k1"] = t.kernel("k1", 50, 10, stream=7, launch_ts=15)
    u["inner_b"] = t.x("user_annotation", "inner", 60, 30)
    u["k2"] = t.kernel("k2", 70, 10, stream=7, launch_ts=65)
    t.x("user_annotation", "inner", 30, 40, tid=2)  # another thread: overlaps both instances above
    u["k3"] = t.kernel("k3", 120, 10, stream=7, launch_ts=110)
    u["k4"] = t.kernel("k4", 140, 10, stream=8, launch_ts=135)
    u["k5"] = t.kernel("k5", 60, 2, stream=7)  # no launch call; starts where the inner range ends
    u["g_outer7"] = t.x("gpu_user_annotation", "outer", 50, 30, pid=0, tid=7)
    u["g_inner1"] = t.x("gpu_user_annotation", "inner", 50, 10, pid=0, tid=7)
    u["g_inner2"] = t.x("gpu_user_annotation", "inner", 70, 10, pid=0, tid=7)
    t.x("gpu_user_annotation", "inner", 55, 20, pid=0, tid=8)  # overlaps the stream-7 ones in time
    u["g_only"] = t.x("gpu_user_annotation", "g_only", 135, 25, pid=0, tid=8)
    u["g_outer8"] = t.x("gpu_user_annotation", "outer", 140, 10, pid=0, tid=8)
    return t.open(tmp_path), u


def test_kernel_annotations(annotated):
    tr, u = annotated
    got = {
        r["uid"]: (r["gpu_annotation_uid"], r["gpu_annotation"], r["host_annotation_uid"], r["host_annotation"])
        for r in tr.sql("select * from kernel_annotations").to_dicts()
    }
    assert got == {
        # in two nested device ranges (outer, inner): the inner one; launched under outer > inner
        u["k1"]: (u["g_inner1"], "inner", u["inner_a"], "inner"),
        u["k2"]: (u["g_inner2"], "inner", u["inner_b"], "inner"),
        # no device range on stream 7 at 120; launched under ProfilerStep#2 only
        u["k3"]: (None, None, u["ps2"], "ProfilerStep#2"),
        # stream 8: outer nested in g_only
        u["k4"]: (u["g_outer8"], "outer", u["ps2"], "ProfilerStep#2"),
        # starts at the inner range's end (outside it), inside outer; no launch call
        u["k5"]: (u["g_outer7"], "outer", None, None),
    }


def test_annotation_breakdown(annotated):
    tr, _ = annotated
    got = {
        (r["side"], r["device"], r["name"]): (r["count"], r["total_ns"], r["busy_ns"], r["gpu_busy_ns"])
        for r in tr.sql("select * from annotation_breakdown").to_dicts()
    }
    assert got == {
        # steps [-10,105) and [105,140); they launched k1, k2, k3 (stream 7, 30 µs) and k4 (10)
        ("host", None, "ProfilerStep#*"): (2, 150 * US, 150 * US, 40 * US),
        ("host", None, "outer"): (1, 100 * US, 100 * US, 20 * US),  # k1 + k2
        # [10,40) ∪ [30,70) (tid 2) ∪ [60,90) = [10,90); k1 and k2 launched inside
        ("host", None, "inner"): (3, 100 * US, 80 * US, 20 * US),
        # [50,80) on stream 7 holding k1, k5, k2 = [50,62) ∪ [70,80) = 22; [140,150) on 8 holding k4
        ("device", 0, "outer"): (2, 40 * US, 40 * US, 32 * US),
        # [50,60) ∪ [55,75) ∪ [70,80) = [50,80); k1 and k2
        ("device", 0, "inner"): (3, 40 * US, 30 * US, 20 * US),
        ("device", 0, "g_only"): (1, 25 * US, 25 * US, 10 * US),  # k4, through the nested outer
    }
    # the trace spans [-10, 160): 170 µs
    pct = tr.sql("select span_pct from annotation_breakdown where side = 'host' and name = 'outer'").item()
    assert pct == pytest.approx(100 * 100 / 170)


def test_a_zero_length_device_annotation_holds_what_starts_at_its_point(tmp_path):
    t = Trace()
    outer = t.x("gpu_user_annotation", "outer", 0, 20, pid=0, tid=7)
    point = t.x("gpu_user_annotation", "point", 10, 0, pid=0, tid=7)
    k_at = t.kernel("k_at", 10, 0, stream=7)
    k_after = t.kernel("k_after", 11, 1, stream=7)
    got = dict(t.open(tmp_path).sql("select uid, gpu_annotation_uid from kernel_annotations").rows())
    assert got == {k_at: point, k_after: outer}


@pytest.fixture
def allocating(tmp_path):
    t = Trace()
    u = {}
    u["linear"] = t.x("cpu_op", "aten::linear", 200, 100)
    u["mm"] = t.x("cpu_op", "aten::mm", 210, 40)
    # the innermost slice at 207, whose op is aten::linear; it overlaps aten::mm without nesting
    # (mm outlasts it by far more than the tree's tolerance: they are siblings)
    t.x("user_annotation", "ua", 205, 10)
    # device 0, written out of time order: allocated goes 1000 → 1300 → 1400 → 1450 → 1350 → 1050 → 1450
    u["m250"] = t.memory(250, 50, 1450, 4000)  # at aten::mm's end: outside it, in aten::linear
    u["m207"] = t.memory(207, 300, 1300, 2000)
    u["m220"] = t.memory(220, 100, 1400, 4000)  # aten::mm, inside aten::linear
    u["m260"] = t.memory(260, -100, 1350, 4000)
    u["m310"] = t.memory(310, -300, 1050, 4000)  # outside every op
    u["m320"] = t.memory(320, 400, 1450, 4000)  # the peak again, later
    # device 1, another thread without ops
    u["d1a"] = t.memory(215, 1000, 1000, 2000, device_id=1, tid=2)
    u["d1f"] = t.memory(230, -1000, 0, 2000, device_id=1, tid=2)
    return t.open(tmp_path), u


def test_memory_timeline(allocating):
    tr, u = allocating
    rows = tr.sql("select * from memory_timeline").to_dicts()
    got = [
        (
            r["device_id"],
            r["uid"],
            r["ts_ns"] // US,
            r["bytes"],
            r["allocated_bytes"],
            r["reserved_bytes"],
            r["net_bytes"],
            r["op_uid"],
            r["op_name"],
        )
        for r in rows
    ]
    assert got == [
        (0, u["m207"], 207, 300, 1300, 2000, 300, u["linear"], "aten::linear"),
        (0, u["m220"], 220, 100, 1400, 4000, 400, u["mm"], "aten::mm"),
        (0, u["m250"], 250, 50, 1450, 4000, 450, u["linear"], "aten::linear"),
        (0, u["m260"], 260, -100, 1350, 4000, 350, u["linear"], "aten::linear"),
        (0, u["m310"], 310, -300, 1050, 4000, 50, None, None),
        (0, u["m320"], 320, 400, 1450, 4000, 450, None, None),
        (1, u["d1a"], 215, 1000, 1000, 2000, 1000, None, None),
        (1, u["d1f"], 230, -1000, 0, 2000, 0, None, None),
    ]
    assert {r["device_kind"] for r in rows} == {"cuda"}


def test_memory_summary(allocating):
    tr, _ = allocating
    cols = (
        "device_id",
        "events",
        "allocs",
        "frees",
        "alloc_bytes",
        "freed_bytes",
        "peak_allocated_bytes",
        "peak_ts_ns",
        "peak_reserved_bytes",
        "final_allocated_bytes",
        "final_reserved_bytes",
        "peak_net_bytes",
    )
    got = [tuple(r[c] for c in cols) for r in tr.sql("select * from memory_summary").to_dicts()]
    assert got == [
        # the peak 1450 is reached at 250 first, again at 320
        (0, 6, 4, 2, 850, 400, 1450, 250 * US, 4000, 1450, 4000, 450),
        (1, 2, 1, 1, 1000, 1000, 1000, 215 * US, 2000, 0, 2000, 1000),
    ]


def test_memory_by_op(allocating):
    tr, _ = allocating
    cols = ("device_id", "op_name", "allocs", "alloc_bytes", "frees", "freed_bytes", "net_bytes", "place")
    got = [tuple(r[c] for c in cols) for r in tr.sql("select * from memory_by_op").to_dicts()]
    assert got == [
        (0, None, 1, 400, 1, 300, 100, 1),
        (0, "aten::linear", 2, 350, 1, 100, 250, 2),
        (0, "aten::mm", 1, 100, 0, 0, 100, 3),
        (1, None, 1, 1000, 1, 1000, 0, 1),
    ]


# ---- the corpus against plain loops over the raw JSON ----------------------------------------


def ns(v):
    return int(Decimal(v) * 1000)


def intervals(evs):
    return [(i, e, ns(e["ts"]), ns(e["ts"]) + ns(e.get("dur", 0))) for i, e in evs]


def innermost(spans, t):
    """Of (uid, event, ts, end) spans, the one holding point t that starts last (then the shorter,
    then the later in the file: the inner one), or None."""
    best = None
    holding = [s for s in spans if s[2] <= t and (t < s[3] or s[2] == s[3] == t)]
    for s in holding:
        if best is None or (s[2], -s[3], s[0]) > (best[2], -best[3], best[0]):
            best = s
    return best


def union(pairs):
    total, end = 0, None
    for a, b in sorted(pairs):
        if end is None or a > end:
            total, end = total + (b - a), b
        elif b > end:
            total, end = total + (b - end), b
    return total


MEMORY_TRACES = [DATA_TRACE] + [
    CORPUS / p
    for p in (
        "TraceLens/tests/traces/perf_model/normalization/normalization_layer_test.json.gz",
        "TraceLens/tests/traces/mi300/ddp_resnet18_no_pool/train_resnet18.json.gz",
        "TraceLens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
        "generated/cpu_train_step.pt.trace.json.gz",
        "kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",  # no totals
        "HolisticTraceAnalysis/tests/data/df_index_resolver/df_index_resolver.json.gz",
    )
]


@pytest.mark.corpus
@pytest.mark.parametrize("path", MEMORY_TRACES, ids=lambda p: p.name)
def test_memory_views_against_the_raw_json(path):
    events, _ = load(str(path))
    by_dev = defaultdict(list)
    for i, e in enumerate(events):
        if e.get("ph") in ("i", "I") and e.get("name") == "[memory]":
            a = e["args"]
            by_dev[(a["Device Type"], a["Device Id"])].append((ns(e["ts"]), i, a))
    assert by_dev
    tr = tracecols.open(path)
    summary = {(r["device_type"], r["device_id"]): r for r in tr.sql("select * from memory_summary").to_dicts()}
    assert set(summary) == set(by_dev)
    for dev, recs in by_dev.items():
        recs.sort(key=lambda r: (r[0], r[1]))
        r = summary[dev]
        assert r["events"] == len(recs)
        assert r["allocs"] == sum(1 for _, _, a in recs if a["Bytes"] > 0)
        assert r["freed_bytes"] == -sum(a["Bytes"] for _, _, a in recs if a["Bytes"] < 0)
        totals = [(t, a["Total Allocated"]) for t, _, a in recs if "Total Allocated" in a]
        if totals:
            peak = max(v for _, v in totals)
            assert r["peak_allocated_bytes"] == peak
            assert r["peak_ts_ns"] == next(t for t, v in totals if v == peak)
            assert r["final_allocated_bytes"] == recs[-1][2]["Total Allocated"]
            assert r["peak_reserved_bytes"] == max(a["Total Reserved"] for _, _, a in recs)
        else:
            assert r["peak_allocated_bytes"] is None
        running, best = 0, None
        for _, _, a in recs:
            running += a["Bytes"]
            best = running if best is None else max(best, running)
        assert r["peak_net_bytes"] == best


SMALL_MEMORY_TRACES = MEMORY_TRACES[:4]


@pytest.mark.corpus
@pytest.mark.parametrize("path", SMALL_MEMORY_TRACES, ids=lambda p: p.name)
def test_memory_ops_against_the_raw_json(path):
    """The op of each [memory] event: the innermost cpu_op of its thread holding its time."""
    events, _ = load(str(path))
    ops = defaultdict(list)
    for s in intervals((i, e) for i, e in enumerate(events) if e.get("ph") == "X" and e.get("cat") == "cpu_op"):
        ops[(s[1]["pid"], s[1]["tid"])].append(s)
    want = {}
    for i, e in enumerate(events):
        if e.get("ph") in ("i", "I") and e.get("name") == "[memory]":
            op = innermost(ops[(e["pid"], e["tid"])], ns(e["ts"]))
            want[i] = op[0] if op else None
    got = dict(tracecols.open(path).sql("select uid, op_uid from memory_timeline").rows())
    assert got == want


ANNOTATED_TRACES = [DATA_TRACE] + [
    CORPUS / p
    for p in (
        "TraceLens/tests/traces/perf_model/normalization/normalization_layer_test.json.gz",
        "TraceLens/tests/traces/mi300/ddp_resnet18_no_pool/train_resnet18.json.gz",
    )
]


@pytest.mark.corpus
@pytest.mark.parametrize("path", ANNOTATED_TRACES, ids=lambda p: p.name)
def test_annotation_views_against_the_raw_json(path):
    events, _ = load(str(path))
    tr = tracecols.open(path)
    indexed = list(enumerate(events))
    gpu = defaultdict(list)  # (device, stream) -> spans
    for s in intervals((i, e) for i, e in indexed if e.get("ph") == "X" and e.get("cat") == "gpu_user_annotation"):
        gpu[(s[1]["pid"], s[1]["tid"])].append(s)
    host = defaultdict(list)  # (pid, tid) -> spans
    for s in intervals((i, e) for i, e in indexed if e.get("ph") == "X" and e.get("cat") == "user_annotation"):
        host[(s[1]["pid"], s[1]["tid"])].append(s)
    assert gpu and host
    rows = tr.sql("select uid, launch_uid, gpu_annotation_uid, host_annotation_uid from kernel_annotations").rows()
    host_under, gpu_under = defaultdict(set), defaultdict(set)  # name -> kernels
    for uid, launch, g_uid, h_uid in rows:
        k = events[uid]
        device, stream = k["args"].get("device", k["pid"]), k["args"].get("stream", k["tid"])
        ts = ns(k["ts"])
        end = ts + ns(k.get("dur", 0))
        g = innermost(gpu[(device, stream)], ts)
        assert g_uid == (g[0] if g else None), uid
        for s in gpu[(device, stream)]:
            if s[2] <= ts and (ts < s[3] or s[2] == s[3] == ts):
                gpu_under[(device, s[1]["name"])].add((device, ts, end))
        if launch is None:
            assert h_uid is None
            continue
        le = events[launch]
        spans = host[(le["pid"], le["tid"])]
        h = innermost(spans, ns(le["ts"]))
        assert h_uid == (h[0] if h else None), uid
        for s in spans:
            if s[2] <= ns(le["ts"]) < s[3]:
                host_under[s[1]["name"]].add((device, ts, end))
    fold = {}
    for side, groups in (("host", host), ("device", gpu)):
        for key, spans in groups.items():
            for _, e, a, b in spans:
                name = "ProfilerStep#*" if e["name"].startswith("ProfilerStep#") else e["name"]
                fold.setdefault((side, key[0] if side == "device" else None, name), []).append((a, b, e["name"]))
    got = {(r["side"], r["device"], r["name"]): r for r in tr.sql("select * from annotation_breakdown").to_dicts()}
    assert set(got) == set(fold)
    for key, inst in fold.items():
        r = got[key]
        assert (r["count"], r["total_ns"], r["busy_ns"]) == (
            len(inst),
            sum(b - a for a, b, _ in inst),
            union((a, b) for a, b, _ in inst),
        ), key
        under = set()
        for _, _, raw in inst:
            under |= host_under[raw] if key[0] == "host" else gpu_under[(key[1], raw)]
        devices = {d for d, _, _ in under}
        assert r["gpu_busy_ns"] == sum(union((a, b) for d, a, b in under if d == dev) for dev in devices), key
