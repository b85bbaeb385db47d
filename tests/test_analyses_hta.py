"""HTA's traces (and the rest of the small Kineto corpus) ingest and give consistent analyses."""
import os

import pytest
from conftest import CORPUS
from reference import kineto_files, short

import tracecols

pytestmark = pytest.mark.corpus

HTA = [p for p in kineto_files() if "/HolisticTraceAnalysis/" in p and os.path.getsize(p) < 2_000_000] \
    if CORPUS.is_dir() else []


@pytest.fixture(scope="module", params=HTA, ids=short)
def analysed(request):
    t = tracecols.open(request.param)
    tables, _ = t.analyses()
    return t, tables


def test_all_analyses_run(analysed):
    t, tables = analysed
    assert {"kernel_stats", "gpu_timeline", "temporal_breakdown", "idle_time", "queue_depth",
            "optimizable_ops", "op_perf", "comm_compute_overlap"} <= set(tables)
    n = t.sql("select count(*) as n from kernels")["n"][0]
    assert tables["kernel_stats"].column("count").to_pylist() == [] if n == 0 else \
        sum(tables["kernel_stats"].column("count").to_pylist()) == n


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
