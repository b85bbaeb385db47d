"""Runs in a lake (`ingest --run`, run_summary, run_trend) and step forensics (step_stats,
step_outliers, step_outlier_causes), against references computed here with the json module.

The job: a real ResNet-50 training trace with six ProfilerStep#N annotations (kineto's
tb_plugin sample), copied into runs; from the fourth run on, the family of `volta_sgemm_*`
kernels is 10 % longer (the later work of their streams shifted; the host's step boundaries hold).
"""

import copy
import gzip
import json
import statistics
import subprocess
import sys

import pytest
from conftest import CORPUS

import tracecols
from tracecols.fleet.ingest import ingest_lake

RESNET = CORPUS / "kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
DEVICE_CATS = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset"}
FAMILY = "volta_sgemm_"  # all of them kernels.kernel_class 'gemm'
RUNS = 6
SLOWED_FROM = 4  # 1-based: the fourth run on


@pytest.fixture(scope="module")
def doc():
    with gzip.open(RESNET, "rt") as f:
        return json.load(f)


def _write(doc, path):
    path.write_text(json.dumps(doc))
    return str(path)


def slowed(doc, factor=1.1):
    """The trace with the FAMILY kernels `factor` times as long, each later device event of
    their stream starting that much later (as on a device that runs the stream's work in
    order); the host, and so the steps' boundaries, unchanged. Times rounded to the ns."""
    d = copy.deepcopy(doc)
    streams: dict = {}
    for e in d["traceEvents"]:
        if e.get("cat") in DEVICE_CATS and e.get("ph") == "X":
            streams.setdefault((e.get("pid"), e.get("tid")), []).append(e)
    for events in streams.values():
        extra = 0.0
        for e in sorted(events, key=lambda e: e["ts"]):
            e["ts"] = round(e["ts"] + extra, 3)
            if e.get("name", "").startswith(FAMILY):
                longer = round(e["dur"] * factor, 3)
                extra += longer - e["dur"]
                e["dur"] = longer
    return d


def steps_of(doc):
    """{N: (ts_us, end_us)} of the host ProfilerStep#N annotations."""
    return {
        int(e["name"].split("#")[1]): (e["ts"], e["ts"] + e["dur"])
        for e in doc["traceEvents"]
        if e.get("ph") == "X"
        and e.get("name", "").startswith("ProfilerStep#")
        and e.get("cat") in ("cpu_op", "Operator", "user_annotation")
    }


def launched_family_us(doc):
    """{N: µs of FAMILY kernels whose launch call (the runtime event of the same correlation) lies in step N}."""
    launch = {
        e["args"]["correlation"]: e["ts"]
        for e in doc["traceEvents"]
        if e.get("cat") in ("cuda_runtime", "Runtime") and "correlation" in e.get("args", {}) and e.get("ph") == "X"
    }
    out = dict.fromkeys(steps_of(doc), 0.0)
    for e in doc["traceEvents"]:
        if e.get("cat") in DEVICE_CATS and e.get("name", "").startswith(FAMILY):
            t = launch[e["args"]["correlation"]]
            for n, (a, b) in steps_of(doc).items():
                if a <= t < b:
                    out[n] += e["dur"]
    return out


def busy_us(doc, a, b):
    """Length of the union of device events clipped to [a, b)."""
    iv = sorted(
        (max(e["ts"], a), min(e["ts"] + e["dur"], b))
        for e in doc["traceEvents"]
        if e.get("cat") in DEVICE_CATS and e["ts"] < b and e["ts"] + e["dur"] > a
    )
    total, end = 0.0, a
    for s, t in iv:
        if t > end:
            total += t - max(s, end)
            end = t
    return total


def mad(xs):
    m = statistics.median(xs)
    return statistics.median(abs(x - m) for x in xs)


# ---- runs -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def runs_lake(doc, tmp_path_factory):
    d = tmp_path_factory.mktemp("runs")
    slow = slowed(doc)
    lake = d / "lake"
    for i in range(1, RUNS + 1):
        run_dir = d / f"run{i}"
        run_dir.mkdir()
        _write(slow if i >= SLOWED_FROM else doc, run_dir / "worker0.pt.trace.json")
        res = ingest_lake([str(run_dir)], str(lake), jobs=1, run=f"commit-{i}")
        assert res.ok and len(res.added) == 1
    return tracecols.Lake(lake)


def test_the_run_label_is_in_traces_and_in_the_manifest_in_order_of_first_ingest(runs_lake):
    t = runs_lake.sql("select trace_id, run, run_seq from traces order by trace_id").rows()
    assert t == [(i, f"commit-{i + 1}", i) for i in range(RUNS)]
    assert runs_lake.manifest["runs"] == [f"commit-{i}" for i in range(1, RUNS + 1)]
    assert [r["run"] for r in runs_lake.traces] == [f"commit-{i}" for i in range(1, RUNS + 1)]
    assert "step_stats" in runs_lake.manifest["tables"]


def test_run_trend_marks_the_fourth_run_on_the_slowed_family_and_nothing_else(runs_lake):
    rows = runs_lake.sql("select metric, run, moved, first_moved from run_trend").rows()
    assert {(m, r) for m, r, _, first in rows if first} == {("kernels:gemm", f"commit-{SLOWED_FROM}")}
    # no run before the change moved on anything, no other metric moved in any run
    assert not [(m, r) for m, r, moved, _ in rows if moved and m != "kernels:gemm"]
    assert not [(m, r) for m, r, moved, _ in rows if moved and int(r.split("-")[1]) < SLOWED_FROM]
    metrics = {m for m, *_ in rows}
    assert {"step_time", "gpu_busy", "gpu_idle", "exposed_comm", "kernels:conv", "kernels:gemm"} <= metrics


def test_run_trend_numbers_against_a_plain_reference(runs_lake, doc):
    # step time: every run has the same six steps; the baseline of run r is runs 1..r-1 pooled
    durs = [(b - a) * 1000 for a, b in steps_of(doc).values()]
    trend = runs_lake.sql(
        "select run_seq, value_ns, baseline_ns, noise_ns, samples from run_trend where metric = 'step_time' order by run_seq"
    ).rows()
    for seq, value, baseline, noise, samples in trend:
        assert samples == len(durs)
        assert value == pytest.approx(statistics.median(durs), abs=1)
        if seq == 0:
            assert baseline is None
            continue
        pooled = durs * seq
        assert baseline == pytest.approx(statistics.median(pooled), abs=1)
        assert noise == pytest.approx(3 * 1.4826 * mad(pooled), abs=1)
    # the slowed family: run 4's gemm time per step grew by 10 % of the family's, as launched per step
    fam = launched_family_us(doc)
    (delta,) = runs_lake.sql(
        f"select delta_ns from run_trend where metric = 'kernels:gemm' and run_seq = {SLOWED_FROM - 1}"
    ).rows()[0]
    assert delta == pytest.approx(0.1 * statistics.median(fam.values()) * 1000, rel=0.05)


def test_run_summary_one_row_per_run_against_a_plain_reference(runs_lake, doc):
    rows = runs_lake.sql("select run, run_seq, traces, steps, step_time_ns, gpu_busy_ns, top_kernel_classes from run_summary")
    assert rows["run"].to_list() == [f"commit-{i}" for i in range(1, RUNS + 1)]
    assert rows["traces"].to_list() == [1] * RUNS and rows["steps"].to_list() == [6] * RUNS
    durs = [(b - a) * 1000 for a, b in steps_of(doc).values()]
    assert rows["step_time_ns"].to_list() == pytest.approx([statistics.median(durs)] * RUNS, abs=1)
    busy = [busy_us(doc, a, b) * 1000 for a, b in steps_of(doc).values()]
    assert rows["gpu_busy_ns"][0] == pytest.approx(statistics.median(busy), abs=1)
    assert rows["top_kernel_classes"][0].startswith("conv ")


def test_step_stats_against_a_plain_reference(doc, tmp_path):
    t = tracecols.open(_write(doc, tmp_path / "t.json"))
    got = {r["step"]: r for r in t.sql("select * from step_stats").to_dicts()}
    steps = steps_of(doc)
    assert sorted(got) == sorted(steps)
    loading = [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("name", "").startswith("enumerate(DataLoader)#")]
    for n, (a, b) in steps.items():
        r = got[n]
        assert r["dur_ns"] == pytest.approx((b - a) * 1000, abs=1)
        assert r["gpu_busy_ns"] == pytest.approx(busy_us(doc, a, b) * 1000, abs=2)
        assert r["gpu_idle_ns"] == r["dur_ns"] - r["gpu_busy_ns"]
        dl = sum(max(0, min(e["ts"] + e["dur"], b) - max(e["ts"], a)) for e in loading)
        assert r["data_loading_ns"] == pytest.approx(dl * 1000, abs=2)
        assert r["comm_ns"] == 0 and r["exposed_comm_ns"] == 0  # one GPU, no collectives


def test_a_lake_without_run_labels_has_null_runs_and_one_summary_row(doc, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    _write(doc, src / "worker0.pt.trace.json")
    ingest_lake([str(src)], str(tmp_path / "lake"), jobs=1)
    lake = tracecols.Lake(tmp_path / "lake")
    assert lake.sql("select run, run_seq from traces").rows() == [(None, None)]
    assert lake.manifest["runs"] == [] and lake.traces[0]["run"] is None
    assert lake.sql("select run, steps from run_summary").rows() == [(None, 6)]
    assert lake.sql("select count(*) from run_trend").rows() == [(0,)]


def test_cli_run_flag_relabels_an_unchanged_trace_and_refuses_an_empty_label(doc, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    _write(doc, src / "worker0.pt.trace.json")
    lake = tmp_path / "lake"

    def ingest(*extra):
        return subprocess.run(
            [sys.executable, "-m", "tracecols", "ingest", str(src), "-o", str(lake), "-j", "1", *extra],
            capture_output=True,
            text=True,
        )

    assert ingest("--run", "a1b2c3").returncode == 0
    again = ingest("--run", "nightly-2026-11-28")
    assert again.returncode == 0 and "under another run label" in again.stderr
    m = json.loads((lake / "_tracecols.json").read_text())
    assert m["runs"] == ["a1b2c3", "nightly-2026-11-28"]
    assert [t["run"] for t in m["traces"]] == ["nightly-2026-11-28"]
    assert tracecols.Lake(lake).sql("select run, run_seq from traces").rows() == [("nightly-2026-11-28", 1)]
    bad = ingest("--run", " ")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--run" in bad.stderr
    assert "Traceback" not in bad.stderr


# ---- step forensics -----------------------------------------------------------------------

GAP_US = 40_000  # 40 ms of nothing inserted into one step
GAP_STEP = 7


def with_gap(doc, step=GAP_STEP, gap=GAP_US):
    """The trace with `gap` µs of idle inserted into ProfilerStep#`step`: at a moment inside it
    when no device event runs and no data is being loaded, everything later moves by `gap` and
    the host events around that moment grow by it. Returns (trace, the moment)."""
    d = copy.deepcopy(doc)
    a, b = steps_of(d)[step]
    dev = sorted((e["ts"], e["ts"] + e["dur"]) for e in d["traceEvents"] if e.get("cat") in DEVICE_CATS)
    loading = [(e["ts"], e["ts"] + e["dur"]) for e in d["traceEvents"] if e.get("name", "").startswith("enumerate(DataLoader)#")]
    best, end = None, a
    for s, t in dev:  # the longest device gap inside the step, outside data loading
        lo, hi = max(end, a), min(s, b)
        mid = (lo + hi) / 2
        if hi > lo and not any(x <= mid < y for x, y in loading) and (best is None or hi - lo > best[1] - best[0]):
            best = (lo, hi)
        end = max(end, t)
    at = (best[0] + best[1]) / 2
    for e in d["traceEvents"]:
        if "ts" not in e or e.get("ph") == "M":
            continue
        if e["ts"] >= at:
            e["ts"] += gap
        elif "dur" in e and e["ts"] + e["dur"] > at:
            assert e.get("cat") not in DEVICE_CATS
            e["dur"] += gap
    return d, at


def robust_z(durs, x):
    m = statistics.median(durs)
    return (x - m) / max(1.4826 * mad(durs), 0.01 * m)


def test_no_step_of_the_real_trace_is_slow(doc, tmp_path):
    t = tracecols.open(_write(doc, tmp_path / "t.json"))
    rows = t.sql("select step, dur_ns, z, slow from step_outliers order by step").rows()
    durs = [(b - a) * 1000 for _, (a, b) in sorted(steps_of(doc).items())]
    assert [r[1] for r in rows] == pytest.approx(durs, abs=1)
    assert [r[2] for r in rows] == pytest.approx([robust_z(durs, x) for x in durs], abs=1e-6)
    assert not any(r[3] for r in rows)
    assert t.sql("select count(*) from step_outlier_causes").rows() == [(0,)]


def test_a_step_with_an_inserted_idle_gap_is_slow_and_the_gap_is_its_gpu_idle(doc, tmp_path):
    gapped, _ = with_gap(doc)
    t = tracecols.open(_write(gapped, tmp_path / "gap.json"))
    rows = {s: (dur, z, slow) for s, dur, z, slow in t.sql("select step, dur_ns, z, slow from step_outliers").rows()}
    assert [s for s, (_, _, slow) in rows.items() if slow] == [GAP_STEP]
    durs = [(b - a) * 1000 for a, b in steps_of(gapped).values()]
    assert rows[GAP_STEP][1] == pytest.approx(robust_z(durs, rows[GAP_STEP][0]), abs=1e-6)
    causes = t.sql("select cause, excess_ns from step_outlier_causes order by excess_ns desc").rows()
    # tolerance: the step's own idle differs from the median step's by a few ms before the gap
    # (the other steps' idle spreads 65-87 ms); 10 % of the gap covers it
    assert causes[0][0] == "gpu idle"
    assert causes[0][1] == pytest.approx(GAP_US * 1000, rel=0.10)
    assert all(abs(ns) < GAP_US * 1000 / 4 for cause, ns in causes[1:]), causes
    assert {c for c, _ in causes} >= {"gpu idle", "data loading", "synchronisation", "collectives (exposed)", "kernels: gemm"}


def test_step_outliers_across_the_traces_of_a_run_in_a_lake(doc, tmp_path):
    gapped, _ = with_gap(doc)
    src = tmp_path / "src"
    src.mkdir()
    _write(doc, src / "rank0.pt.trace.json")
    _write(gapped, src / "rank1.pt.trace.json")
    ingest_lake([str(src)], str(tmp_path / "lake"), jobs=1, run="job")
    lake = tracecols.Lake(tmp_path / "lake")
    slow = lake.sql("select rank, step, group_steps from step_outliers where slow").rows()
    assert slow == [(1, GAP_STEP, 12)]  # both ranks' steps are one group: the run's
    top = lake.sql("select rank, step, cause, excess_ns from step_outlier_causes order by excess_ns desc limit 1").rows()
    assert top[0][:3] == (1, GAP_STEP, "gpu idle") and top[0][3] == pytest.approx(GAP_US * 1000, rel=0.10)
