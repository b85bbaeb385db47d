"""The events' columns held in memory as they are written (pipeline/held_events.py) are what the
stages would read back from the file: the same rows, in the same order, and the same sync events;
a trace too big to derive in memory, or one whose ranks are put right after it was written, holds
nothing, and its stages read the file."""

import json

import polars as pl
import pyarrow.parquet as pq
import pytest
from conftest import CORPUS, DATA_TRACE

from tracecols.model.cp_graph import sync_events
from tracecols.model.derive import TREE_COLUMNS
from tracecols.pipeline import streamed_tables, write_events
from tracecols.pipeline.held_events import HeldEvents

# a trace with CUDA sync events (cat cuda_sync), whose args the critical path reads
SYNC_TRACE = CORPUS / "HolisticTraceAnalysis/tests/data/critical_path/cuda_event_sync_multi_stream/event_sync_trace.json.gz"


def _written(path, tmp_path, **kwargs):
    held = HeldEvents()
    out = tmp_path / "events.parquet"
    write_events([path], out, held=held, **kwargs)
    return held, out


@pytest.mark.parametrize("parts", [1, 2])
def test_the_tree_columns_held_are_those_written(tmp_path, parts):
    held, out = _written(DATA_TRACE, tmp_path, parts=parts)
    tree = held.tree_columns()
    assert tree is not None
    assert tree.column_names == TREE_COLUMNS
    assert tree.equals(pq.read_table(out, columns=TREE_COLUMNS))


@pytest.mark.corpus
def test_the_sync_events_held_are_those_written(tmp_path):
    held, out = _written(SYNC_TRACE, tmp_path)
    assert held.tree_columns() is not None
    syncs = held.syncs()
    assert syncs.height > 0  # the trace has them: the rows below are compared, not two empty frames
    assert syncs.equals(sync_events(pl.scan_parquet(out)))


def test_a_trace_without_sync_events_holds_none(tmp_path):
    held, out = _written(DATA_TRACE, tmp_path)
    assert held.syncs().height == 0
    assert held.syncs().schema == sync_events(pl.scan_parquet(out)).schema


def test_a_trace_too_big_for_memory_holds_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(streamed_tables, "IN_MEMORY_EVENTS", 10)
    held, _ = _written(DATA_TRACE, tmp_path)
    assert held.tree_columns() is None


def test_ranks_put_right_after_the_events_drop_what_is_held(tmp_path):
    # distributedInfo after the events: the file's rank is put right once they are all read
    events = [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 5},
        {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 20, "dur": 5},
    ]
    p = tmp_path / "t.json"
    p.write_text(json.dumps({"traceEvents": events, "distributedInfo": {"rank": 3}}))
    held, out = _written(p, tmp_path)
    assert pq.read_table(out, columns=["rank"]).column("rank").to_pylist() == [3, 3]
    assert held.tree_columns() is None
