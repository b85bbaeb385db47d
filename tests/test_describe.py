"""Trace.describe / Lake.describe and `tracecols sql --describe`: a view's header read from
Python and the command line."""

import subprocess

import polars as pl
import pytest
from conftest import DATA_TRACE
from test_cli import EXE

import tracecols
from tracecols.errors import QueryError
from tracecols.fleet.ingest import ingest_lake

SHORT_KERNEL_HISTOGRAM = [
    ("trace_id", "INTEGER", None, "trace"),
    ("rank", "INTEGER", None, "rank (null when unknown)"),
    ("device", "BIGINT", None, "device id"),
    ("bucket_lo_ns", "BIGINT", "ns", "lower bound of the bucket (inclusive)"),
    ("bucket_hi_ns", "BIGINT", "ns", "upper bound (exclusive; null past the int64 range)"),
    ("short", "BOOLEAN", None, "the bucket lies below 10 µs"),
    ("count", "BIGINT", None, "events in the bucket"),
    ("sum_ns", "BIGINT", "ns", "their total duration"),
    ("count_pct", "DOUBLE", "%", "(0-100) of the device's events"),
    ("time_pct", "DOUBLE", "%", "(0-100) of the summed duration of all device events of that device"),
]


@pytest.fixture(scope="module")
def trace():
    return tracecols.open(DATA_TRACE)


def test_describe_gives_the_header_rows(trace):
    d = trace.describe("short_kernel_histogram")
    assert d.columns == ["column", "type", "unit", "meaning"]
    assert d.schema == {"column": pl.String, "type": pl.String, "unit": pl.String, "meaning": pl.String}
    assert d.rows() == SHORT_KERNEL_HISTOGRAM


def test_a_meaning_over_several_lines_and_a_list_of_names_on_one_line(trace):
    d = trace.describe("_kernels_in_span")  # `trace_id INTEGER; device, stream, uid BIGINT; …`
    assert d["column"].to_list()[:5] == ["trace_id", "device", "stream", "uid", "name"]
    assert d.filter(pl.col("column") == "ts_ns").rows() == [("ts_ns", "BIGINT", "ns", "")]
    d = trace.describe("fx_ops")  # `every column of op_gpu_time, plus`, then its own
    assert d["column"].to_list()[-2:] == ["fx_file", "fx_node"]
    assert d.height == trace.describe("op_gpu_time").height + 2


def test_answers_gives_the_question_joined_over_its_lines(trace):
    assert trace.answers("memory_summary") == (
        "how much memory did each device peak at, when, how much did the allocator hold, "
        "and how much was still allocated at the end of the trace?"
    )


def test_every_view_is_described_with_the_columns_and_types_duckdb_gives(trace):
    for name in trace._engine.views:
        d = trace.sql(f"DESCRIBE SELECT * FROM {name}")
        got = trace.describe(name).select("column", "type").rows()
        assert got == list(zip(d["column_name"], d["column_type"])), name
        assert trace.answers(name), name


def test_an_unknown_view_is_one_clear_error(trace):
    with pytest.raises(QueryError, match=r"no view named 'no_such_view'; views: annotation_breakdown, "):
        trace.describe("no_such_view")
    with pytest.raises(QueryError, match="no view named 'kernels'"):  # a base table has no header
        trace.answers("kernels")


def test_a_lake_describes_its_views(tmp_path):
    ingest_lake([str(DATA_TRACE)], tmp_path / "lake")
    lake = tracecols.Lake(tmp_path / "lake")
    assert type(lake).__name__ == "Lake"
    assert lake.describe("short_kernel_histogram").rows() == SHORT_KERNEL_HISTOGRAM


def test_the_cli_prints_the_description_as_a_table():
    r = subprocess.run([EXE, "sql", DATA_TRACE, "--describe", "short_kernel_histogram"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("short_kernel_histogram: how many kernels are a few µs long")
    assert lines[1].split() == ["column", "type", "unit", "meaning"]
    assert lines[5].split() == ["bucket_lo_ns", "BIGINT", "ns", "lower", "bound", "of", "the", "bucket", "(inclusive)"]
    assert lines[3].split() == ["rank", "INTEGER", "-", "rank", "(null", "when", "unknown)"]
    assert len(lines) == 2 + len(SHORT_KERNEL_HISTOGRAM)


def test_the_cli_writes_the_description_as_csv_and_reports_errors_in_one_line():
    r = subprocess.run(
        [EXE, "sql", DATA_TRACE, "--describe", "short_kernel_histogram", "--format", "csv"], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[:2] == ["column,type,unit,meaning", "trace_id,INTEGER,,trace"]
    for args, msg in (
        (["--describe", "no_such_view"], "no view named 'no_such_view'"),
        ([], "no query given"),
    ):
        r = subprocess.run([EXE, "sql", DATA_TRACE, *args], capture_output=True, text=True)
        assert r.returncode == 2 and r.stdout == ""
        assert len(r.stderr.strip().splitlines()) == 1 and msg in r.stderr, r.stderr
