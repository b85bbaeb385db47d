"""HTA's traces (and the rest of the small Kineto corpus) ingest and give consistent analyses."""

import os

import pytest
from conftest import CORPUS
from reference import kineto_files, short

import tracecols

pytestmark = pytest.mark.corpus

HTA = [p for p in kineto_files() if "/HolisticTraceAnalysis/" in p and os.path.getsize(p) < 2_000_000] if CORPUS.is_dir() else []


@pytest.fixture(scope="module", params=HTA, ids=short)
def analysed(request):
    t = tracecols.open(request.param)
    tables, _ = t.analyses()
    return t, tables


def test_all_analyses_run(analysed):
    t, tables = analysed
    assert {
        "kernel_stats",
        "gpu_timeline",
        "temporal_breakdown",
        "idle_time",
        "queue_depth",
        "optimizable_ops",
        "op_perf",
        "comm_compute_overlap",
    } <= set(tables)
    n = t.sql("select count(*) as n from kernels")["n"][0]
    assert (
        tables["kernel_stats"].column("count").to_pylist() == []
        if n == 0
        else sum(tables["kernel_stats"].column("count").to_pylist()) == n
    )


def test_timeline_properties(analysed):
    t, _ = analysed
    for r in t.sql("select * from gpu_timeline").to_dicts():
        assert 0 <= r["computation_ns"] <= r["busy_ns"] <= r["total_ns"]
        assert r["busy_ns"] + r["idle_ns"] == r["total_ns"]
        assert r["computation_ns"] + r["exposed_comm_ns"] + r["exposed_memcpy_ns"] == r["busy_ns"]
        assert r["exposed_comm_ns"] <= r["total_comm_ns"] and r["exposed_memcpy_ns"] <= r["total_memcpy_ns"]
    for r in t.sql("select * from temporal_breakdown where kernel_time_ns > 0").to_dicts():
        assert r["idle_pct"] + r["compute_pct"] + r["non_compute_pct"] == pytest.approx(100)
        assert min(r["idle_ns"], r["compute_ns"], r["non_compute_ns"]) >= 0
    for r in t.sql("select * from comm_compute_overlap where comm_ns > 0").to_dicts():
        assert 0 <= r["overlap_pct"] <= 100


def test_idle_and_queue_properties(analysed):
    t, _ = analysed
    for r in t.sql("select * from idle_time").to_dicts():
        assert r["host_wait_ns"] + r["kernel_wait_ns"] + r["other_ns"] == r["idle_ns"]
        assert 0 <= r["busy_ns"] <= r["span_ns"]
    assert t.sql("select count(*) as n from idle_gaps where cause = 'kernel_wait' and gap_ns >= 30000")["n"][0] == 0
    q = t.sql("select min(queue_depth) as lo, count(*) as n from queue_depth").to_dicts()[0]
    assert q["n"] == 0 or q["lo"] >= 0
    # the last change of every stream brings its queue back to 0
    ends = t.sql("""select arg_max(queue_depth, (ts_ns, -delta, uid)) as d
                    from queue_depth group by trace_id, device, stream""")["d"].to_list()
    assert all(d == 0 for d in ends)


def test_multi_device_split():
    p = CORPUS / "HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz"
    t = tracecols.open(p)
    per_dev = t.sql("select count(*) as n from gpu_timeline where device is not null")["n"][0]
    assert per_dev == t.sql("select count(distinct device) as n from kernels")["n"][0]
    r = t.sql("select * from comm_compute_overlap where device is null").to_dicts()[0]
    assert r["comm_ns"] > 0 and 0 < r["overlap_pct"] < 100


def test_memcpy_bandwidth_matches_htas_counter(tmp_path):
    """memcpy_bandwidth against HTA's own memory-bandwidth time series, run on the same trace
    (HTA reads a folder of traces; its times are µs from the trace's first event)."""
    import logging
    import shutil

    hta = pytest.importorskip("hta.trace_analysis")
    p = CORPUS / "HolisticTraceAnalysis/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"
    shutil.copy(p, tmp_path)
    logging.getLogger("hta").setLevel(logging.WARNING)
    analysis = hta.TraceAnalysis(trace_dir=str(tmp_path))
    series = analysis.get_memory_bw_time_series()[0]
    # HTA's series: one row per copy start and end, running sum per kind; the last row at a time
    # holds the value after every change at that time
    direction = {"Memcpy HtoD": "HtoD", "Memcpy DtoH": "DtoH", "Memcpy DtoD": "DtoD", "Memset": "memset"}
    theirs = {}
    for r in series.itertuples():
        ts_ns = (int(round(r.ts)) + analysis.t.min_ts) * 1000  # whole µs in this trace
        theirs[(direction[r.name], ts_ns)] = r.memory_bw_gbps * 1e9
    ours = {
        (r["direction"], r["ts_ns"]): r["bytes_per_s"]
        for r in tracecols.open(p).sql("select * from memcpy_bandwidth").iter_rows(named=True)
    }
    assert len(ours) == 38 and ours.keys() == theirs.keys()
    for k, v in theirs.items():
        assert ours[k] == pytest.approx(v, rel=1e-9, abs=1e-3), k
