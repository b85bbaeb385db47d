"""The views `tracecols augment` reads: event_flops_bytes (the kernel_flop / kernel_num_gb args
to write, and the events that carry them already), queue_depth_samples and
memcpy_bandwidth_samples (the counter tracks of --counters), against references computed here
from the raw JSON."""

import subprocess
import sys
from decimal import Decimal

import pytest
from conftest import CORPUS, DATA_TRACE
from reference import load

import tracecols

ALEXNET = CORPUS / "HolisticTraceAnalysis/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"
DEVICE_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
EXE = [sys.executable, "-m", "tracecols"]


def _ns(us):
    return int(Decimal(us) * 1000)


def test_modelled_rows_are_kernel_perf_and_its_ops():
    t = tracecols.open(DATA_TRACE)
    got = {(r["uid"], r["source"]): (r["flops"], r["bytes"]) for r in t.frame("event_flops_bytes").to_dicts()}
    want = {}
    ops = set()
    for r in t.frame("kernel_perf").to_dicts():
        ops.add(r["op_uid"])
        if r["kernel_flop"] is not None or r["kernel_bytes"] is not None:
            want[(r["uid"], "kernel_perf")] = (r["kernel_flop"], r["kernel_bytes"])
    for r in t.frame("op_perf").to_dicts():
        if r["uid"] in ops and (r["flops"] is not None or r["bytes"] is not None):
            want[(r["uid"], "op_perf")] = (r["flops"], r["bytes"])
    assert len(want) > 50 and got == want  # the bert trace carries no kernel_flop arg of its own


def test_events_that_carry_the_args_are_theirs_alone(tmp_path):
    """The augmented trace read back: every event with the args is a 'trace' row with the values
    its JSON holds, and no modelled row; a second augment leaves them all alone and says so."""
    once = tmp_path / "once.json"
    r = subprocess.run([*EXE, "augment", str(DATA_TRACE), str(once)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    events, _ = load(once)
    want = {}
    for uid, e in enumerate(events):
        a = e.get("args", {})
        if "kernel_flop" in a or "kernel_num_gb" in a:
            gb = a.get("kernel_num_gb")
            want[uid] = (a.get("kernel_flop"), None if gb is None else float(gb * Decimal(10) ** 9))
    t = tracecols.open(once)
    rows = t.frame("event_flops_bytes").to_dicts()
    assert len(want) > 50 and {r["source"] for r in rows} == {"trace"}
    got = {r["uid"]: (r["flops"], r["bytes"]) for r in rows}
    assert got.keys() == want.keys()
    for uid, (flops, nbytes) in want.items():
        assert got[uid][0] == flops and (got[uid][1] == nbytes or got[uid][1] == pytest.approx(nbytes, rel=1e-12)), uid
    twice = tmp_path / "twice.json"
    r = subprocess.run([*EXE, "augment", str(once), str(twice)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "on 0 events" in r.stdout and f"; {len(want):,} events already had them" in r.stdout
    assert twice.read_bytes() == once.read_bytes()


@pytest.fixture(scope="module")
def alexnet():
    events, _ = load(ALEXNET)
    t = tracecols.open(ALEXNET)
    yield events, t
    t.close()


def test_queue_depth_samples_per_stream_on_its_pid(alexnet):
    events, t = alexnet
    runtime = [e for e in events if e.get("cat") == "cuda_runtime"]
    launches = {e["args"]["correlation"]: e for e in runtime if "correlation" in e.get("args", {})}
    changes = {}  # (device, stream) -> [(ts, start before launch, delta)]
    pids = {}
    for e in events:
        if e.get("cat") not in DEVICE_CATS:
            continue
        key = (e["args"]["device"], e["args"]["stream"])
        pids[key] = min(pids.get(key, e["pid"]), e["pid"])
        launch = launches.get(e["args"].get("correlation"))
        if launch is not None:
            changes.setdefault(key, []).extend([(_ns(launch["ts"]), 1, 1), (_ns(e["ts"]), 0, -1)])
    want = {}
    for key, ch in changes.items():
        depth = 0
        for ts, _, delta in sorted(ch):
            depth += delta
            want[(*key, pids[key], ts)] = depth  # the last change at a time wins
    rows = t.frame("queue_depth_samples").to_dicts()
    got = {(r["device"], r["stream"], r["pid"], r["ts_ns"]): r["queue_depth"] for r in rows}
    assert len(rows) == len(got) > 100 and got == want
    assert all(r["pid_str"] is None for r in rows)


def test_memcpy_bandwidth_samples_on_the_device_pid(alexnet):
    events, t = alexnet
    pids = {}
    for e in events:
        if e.get("cat") in DEVICE_CATS:
            pids[e["args"]["device"]] = min(pids.get(e["args"]["device"], e["pid"]), e["pid"])
    base = t.frame("memcpy_bandwidth").to_dicts()
    want = [(r["device"], r["direction"], pids[r["device"]], r["ts_ns"], r["bytes_per_s"]) for r in base]
    rows = t.frame("memcpy_bandwidth_samples").to_dicts()
    got = [(r["device"], r["direction"], r["pid"], r["ts_ns"], r["bytes_per_s"]) for r in rows]
    assert len(got) > 10 and sorted(got) == sorted(want)
    # a copy's own rate at its start: the trace's 'memory bandwidth (GB/s)' arg, where one copy runs alone
    first = {}
    for e in events:
        if e.get("cat") == "gpu_memcpy" and e["dur"] > 0:
            first.setdefault(_ns(e["ts"]), float(e["args"]["memory bandwidth (GB/s)"]) * 1e9)
    starts = {r[3]: r[4] for r in got}
    hits = [ts for ts in first if ts in starts and starts[ts] == pytest.approx(first[ts], rel=1e-9)]
    assert len(hits) > 5


def test_views_are_documented_in_augment_md():
    text = (DATA_TRACE.parent.parent / "docs" / "augment.md").read_text()
    for view in ("event_flops_bytes", "queue_depth_samples", "memcpy_bandwidth_samples"):
        assert f"`{view}`" in text, view
