"""The bounded-memory derive of the streaming ingest against the in-memory one.

pipeline.derive_from_file, on a trace of more than IN_MEMORY_EVENTS events (pipeline/streamed_tables.py), sorts the host
events with DuckDB, builds the slices a part at a time (tree.slices_in_chunks) and reads the
rest lazily from Parquet; pipeline.read_tables builds everything from the whole events table (and
test_tree checks that against a plain stack walk). Both must give the same tables, here with
parts of a few rows so that every trace is cut in many places.
"""

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import CORPUS, DATA_TRACE
from corpus_files import kineto_files, rel

import tracecols.pipeline as pipeline
from tracecols.model.derive import derived_tables, describe
from tracecols.model.events import events_table
from tracecols.model.tree import slices_in_chunks, slices_of_sorted
from tracecols.pipeline import streamed_tables, views_to_files
from tracecols.read.kineto import read_trace

_SMALL = [p for p in kineto_files() if p.stat().st_size < (4 << 20)]
_SAMPLE = [DATA_TRACE] + _SMALL[1::5]


def _both(path, tmp_path, chunk_rows):
    batches = []
    info = describe(read_trace(str(path), batches.append), 0, str(path), False)
    ev = events_table(batches, 0, info["rank"])
    whole = derived_tables(ev, [info])
    # rows grafted from capture traces only: none here, so events is the file's own
    assert whole.pop("events_grafted").num_rows == 0
    ev_path, sl_path = tmp_path / "events.parquet", tmp_path / "slices.parquet"
    pq.write_table(ev, ev_path)
    real, limit = streamed_tables.write_slices, streamed_tables.IN_MEMORY_EVENTS
    try:
        streamed_tables.write_slices = lambda e, o: real(e, o, chunk_rows=chunk_rows)
        streamed_tables.IN_MEMORY_EVENTS = 0  # the path of big traces, on these small ones
        parts = pipeline.derive_from_file(ev_path, [info], sl_path)
    finally:
        streamed_tables.write_slices, streamed_tables.IN_MEMORY_EVENTS = real, limit
    parts["slices"] = pq.read_table(sl_path)
    return whole, parts


def _rows(t):
    return [json.dumps(r, sort_keys=True, default=str) for r in t.to_pylist()]


@pytest.mark.corpus
@pytest.mark.parametrize("path", _SAMPLE, ids=[rel(p) if str(p).startswith(str(CORPUS)) else p.name for p in _SAMPLE])
def test_streaming_derive_equals_the_in_memory_one(path, tmp_path):
    whole, parts = _both(path, tmp_path, chunk_rows=7)
    assert sorted(whole) == sorted(parts)
    for name in whole:
        assert whole[name].schema == parts[name].schema, name
        assert _rows(whole[name]) == _rows(parts[name]), name


def test_the_sample_has_trees_to_cut():
    assert len(_SAMPLE) >= 4
    batches = []
    read_trace(str(DATA_TRACE), batches.append)
    assert sum(b.num_rows for b in batches) > 1000


def _sorted_host(rows):
    import polars as pl

    return pl.DataFrame(
        rows,
        schema={
            "trace_id": pl.Int32,
            "rank": pl.Int32,
            "uid": pl.Int64,
            "ph": pl.String,
            "cat": pl.String,
            "name": pl.String,
            "pid": pl.Int64,
            "tid": pl.Int64,
            "pid_str": pl.String,
            "tid_str": pl.String,
            "ts_ns": pl.Int64,
            "dur_ns": pl.Int64,
            "correlation": pl.Int64,
            "external_id": pl.Int64,
        },
    ).sort(
        ["trace_id", "pid", "pid_str", "tid", "tid_str", "ts_ns", "dur_ns", "uid"],
        descending=[False] * 6 + [True, False],
        nulls_last=True,
    )


def _slice(uid, ts, dur, tid=1):
    return {
        "trace_id": 0,
        "rank": 0,
        "uid": uid,
        "ph": "X",
        "cat": "cpu_op",
        "name": f"s{uid}",
        "pid": 1,
        "tid": tid,
        "pid_str": None,
        "tid_str": None,
        "ts_ns": ts,
        "dur_ns": dur,
        "correlation": None,
        "external_id": None,
    }


@pytest.mark.parametrize("chunk_rows", [1, 2, 3, 5, 100])
def test_parts_are_cut_only_between_trees(chunk_rows):
    # a long first tree, one that ends exactly where the next starts, one that a later
    # slice outlasts by less than the tolerance (still a child), and a second thread
    rows = [
        _slice(0, 0, 100),
        _slice(1, 10, 20),
        _slice(2, 40, 50),
        _slice(3, 45, 5),
        _slice(4, 100, 10),
        _slice(5, 110, 10),
        _slice(6, 115, 10),  # 6 ends at 125 > 120, starts inside 5
        _slice(7, 200, 10),
        _slice(8, 209, 2),
        _slice(9, 0, 1000, tid=2),
        _slice(10, 5, 5, tid=2),
    ]
    x = _sorted_host(rows)
    whole = slices_of_sorted(x)
    frames = [x.slice(i, 2) for i in range(0, x.height, 2)]
    parts = list(slices_in_chunks(frames, chunk_rows))
    assert _rows(pa.concat_tables(parts)) == _rows(whole)
    # trees start at 0, 4, 5, 7 (thread 1) and 9 (thread 2); a part ends before the last
    # tree start it holds once it has chunk_rows rows
    firsts = [p.column("uid")[0].as_py() for p in parts]
    assert set(firsts) <= {0, 4, 5, 7, 9}
    assert firsts == {1: [0, 5, 7, 9], 2: [0, 5, 7, 9], 3: [0, 5, 7, 9], 5: [0, 5, 9], 100: [0]}[chunk_rows]
    by_uid = {r["uid"]: r for r in whole.to_pylist()}
    assert by_uid[6]["parent_uid"] == 5 and by_uid[8]["parent_uid"] == 7 and by_uid[4]["parent_uid"] is None


def _values(t):
    def norm(v):
        if isinstance(v, float):
            return float(f"{v:.9g}")  # DuckDB's parallel sums may add in another order
        if isinstance(v, list):
            return [norm(x) for x in v]
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        return v

    return sorted(json.dumps(norm(r), sort_keys=True, default=str) for r in t.to_pylist())


@pytest.mark.corpus
@pytest.mark.parametrize("whole", [True, False], ids=["whole", "streamed"])
@pytest.mark.parametrize("path", _SAMPLE[:3], ids=[rel(p) if str(p).startswith(str(CORPUS)) else p.name for p in _SAMPLE[:3]])
def test_streamed_views_equal_the_in_memory_ones(path, whole, tmp_path, monkeypatch):
    # the streaming ingest writes the views two at a time, each on its own cursor, a view
    # starting once the views it reads are files; the in-memory trace computes them one by one.
    # A small trace's results are fetched whole; a big one's are streamed: both, on each trace.
    import tracecols
    from tracecols.model.base_tables import BASE_TABLES

    monkeypatch.setattr(views_to_files, "WHOLE_RESULTS_EVENTS", 1 << 40 if whole else -1)
    out = pipeline.ingest_to_dir([str(path)], tmp_path / "out")
    mem = tracecols.open(str(path))
    names = json.loads((out / "_tracecols.json").read_text())["tables"]
    views = [n for n in names if n not in BASE_TABLES]
    assert len(views) >= 30
    nonempty = 0
    for name in views:
        streamed, in_memory = pq.read_table(out / f"{name}.parquet"), mem.table(name)
        assert streamed.column_names == in_memory.column_names, name
        assert _values(streamed) == _values(in_memory), name
        nonempty += streamed.num_rows > 0
    assert nonempty >= 15
