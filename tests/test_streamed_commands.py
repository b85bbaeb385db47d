"""`tracecols info` and `tracecols sql` on a trace over IN_MEMORY_BYTES (pipeline/memory_or_disk.py): streamed into a
temporary Parquet directory (the pipeline's streaming mode, as `analyze -o` is), the same answers
as read into memory, and the directory gone afterwards, on success, on error and on Ctrl-C."""

import gc
import os
import tempfile

import pytest
from conftest import DATA_TRACE

import tracecols
from tracecols.cli import main
from tracecols.pipeline import memory_or_disk, to_directory

QUERIES = (
    "select * from events order by uid",  # a base table
    "select * from kernel_stats order by all",  # a view
    "select name, parent_module, count, gpu_ns from top_ops order by all",  # a view over views
)


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """The temporary directory the run's scratch goes to, and a log of the streamed ingests."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    streamed = []
    real = memory_or_disk.ingest_to_dir

    def spy(paths, out, *args, **kwargs):
        streamed.append(out)
        return real(paths, out, *args, **kwargs)

    monkeypatch.setattr(memory_or_disk, "ingest_to_dir", spy)
    return tmp_path, streamed


def _left(directory):
    gc.collect()  # a Trace's directory goes with it (TemporaryDirectory's finaliser)
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("tracecols-"))


def _run(capsys, argv):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("command", ["info", "sql"])
def test_a_big_trace_is_streamed_with_the_same_answers(command, scratch, monkeypatch, capsys):
    directory, streamed = scratch
    argvs = (
        [["info", str(DATA_TRACE)]] if command == "info" else [["sql", str(DATA_TRACE), q, "--format", "csv"] for q in QUERIES]
    )
    in_memory = [_run(capsys, argv) for argv in argvs]
    assert streamed == []  # the small trace is read into memory
    monkeypatch.setattr(memory_or_disk, "IN_MEMORY_BYTES", 0)
    out = [_run(capsys, argv) for argv in argvs]
    assert len(streamed) == len(argvs)  # each run went through the streaming ingest
    for (code, text, err), (want_code, want, _) in zip(out, in_memory):
        assert code == want_code == 0, err
        assert text == want
        assert text.count("\n") > 5
    assert _left(directory) == []


def test_a_failing_query_leaves_no_directory(scratch, monkeypatch, capsys):
    directory, streamed = scratch
    monkeypatch.setattr(memory_or_disk, "IN_MEMORY_BYTES", 0)
    code, out, err = _run(capsys, ["sql", str(DATA_TRACE), "select no_such_column from events"])
    assert code == 2 and out == ""
    assert "no_such_column" in err and len(err.strip().splitlines()) == 1
    assert len(streamed) == 1
    assert _left(directory) == []


def test_ctrl_c_while_streaming_leaves_no_directory(scratch, monkeypatch, capsys):
    directory, streamed = scratch
    monkeypatch.setattr(memory_or_disk, "IN_MEMORY_BYTES", 0)

    def interrupted(*args, **kwargs):
        assert any(directory.iterdir())  # the scratch directory exists by now
        raise KeyboardInterrupt

    monkeypatch.setattr(to_directory, "derive_from_file", interrupted)
    code, out, err = _run(capsys, ["info", str(DATA_TRACE)])
    assert code == 130 and err.strip() == "tracecols: interrupted"
    assert len(streamed) == 1
    assert _left(directory) == []


def test_queries_over_a_streamed_trace_are_bounded_and_spill_into_its_directory(scratch, monkeypatch):
    """DuckDB over a streamed trace gets the memory limit of the pipeline's views (640 MB for a
    trace this small), not its default of 80 % of the machine, and spills inside the trace's
    temporary directory."""
    monkeypatch.setattr(memory_or_disk, "IN_MEMORY_BYTES", 0)
    t = tracecols.open(DATA_TRACE)
    limit, spill = t.sql("select current_setting('memory_limit'), current_setting('temp_directory')").row(0)
    assert limit == "610.3 MiB"  # 640 MB as DuckDB shows it: 640e6 / 2**20
    assert os.path.commonpath([spill, t._scratch.name]) == t._scratch.name
    t.close()
    monkeypatch.setattr(memory_or_disk, "IN_MEMORY_BYTES", 64 << 20)
    small = tracecols.open(DATA_TRACE)  # in memory: DuckDB's own default
    assert small._scratch is None
    assert small.sql("select current_setting('memory_limit')").item() != "610.3 MiB"
