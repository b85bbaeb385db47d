"""The same public tables and views, with the same rows, whether a trace is queried in memory,
from a saved directory or from a one-trace lake: one catalog over every store."""
import pytest
from polars.testing import assert_frame_equal

import tracecols
from conftest import CORPUS, DATA_TRACE
from tracecols.fleet.ingest import ingest_lake

CASES = [DATA_TRACE,  # eager training step, H100
         CORPUS / "TraceLens/tests/traces/inference/vllm_decode_full/graph_execution.json.gz",  # graph replay
         CORPUS / "HolisticTraceAnalysis/tests/data/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"]


@pytest.mark.corpus
@pytest.mark.parametrize("path", CASES, ids=lambda p: p.name)
def test_memory_saved_and_lake_agree(path, tmp_path):
    t = tracecols.open(path)
    t.save(tmp_path / "saved")
    saved = tracecols.open(tmp_path / "saved")
    assert ingest_lake([str(path)], str(tmp_path / "lake"), jobs=1).ok
    lake = tracecols.Lake(tmp_path / "lake")
    public = [n for n in t.tables if not n.startswith("_")]
    assert "op_perf" in public and "device_specs" in public
    assert set(public) <= set(saved.tables) and set(public) <= set(lake.tables)
    for name in public:
        cols = t.sql(f"select * from {name} limit 0").columns
        # a lake partitions by rank: tables without a rank column gain one there
        q = f"select {', '.join(map(_quoted, cols))} from {name} order by all"
        want = t.sql(q)
        for other in (saved, lake):
            # sums of floats may be added in another order: equal to the last few bits
            assert_frame_equal(other.sql(q), want, check_exact=False, rel_tol=1e-12, abs_tol=1e-9), name


def _quoted(c):
    return '"' + c.replace('"', '""') + '"'
