"""`tracecols analyze TRACE` without -o reads a small trace (pipeline.SUMMARY_IN_MEMORY_BYTES)
into memory as `tracecols.open` does and computes only the views its summary shows, each once: the same summary, to the
byte, as the streamed ingest it takes for a bigger trace (and with -o), the same notes on stderr."""

import contextlib
import io
import json

import pytest
from conftest import CORPUS, DATA_TRACE

from tracecols.cli import analyze, main
from tracecols.pipeline import memory_or_disk

TRACES = [
    DATA_TRACE,
    CORPUS / "HolisticTraceAnalysis/tests/data/call_stack/backward_thread.json",  # 7 events
    CORPUS / "HolisticTraceAnalysis/tests/data/mtia_inference_trace/mtia_inference_rank_0.json.gz",  # a note
    CORPUS / "TraceLens/tests/traces/inference/vllm_decode_full/graph_execution.json.gz",  # graph replays
    CORPUS / "HolisticTraceAnalysis/tests/data/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
]


def cli(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in args])
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture
def streamed(monkeypatch):
    """A log of the streamed ingests."""
    log = []
    real = memory_or_disk.ingest_to_dir

    def spy(paths, out, *args, **kwargs):
        log.append(kwargs.get("views", args[2] if len(args) > 2 else None))
        return real(paths, out, *args, **kwargs)

    monkeypatch.setattr(memory_or_disk, "ingest_to_dir", spy)
    return log


@pytest.mark.corpus
@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_in_memory_summary_is_the_streamed_one(path, fmt, streamed, monkeypatch):
    in_memory = cli("analyze", path, "--format", fmt)
    assert streamed == []  # read into memory
    monkeypatch.setattr(memory_or_disk, "SUMMARY_IN_MEMORY_BYTES", 0)
    out = cli("analyze", path, "--format", fmt)
    assert streamed == [analyze.SUMMARY_VIEWS]  # the streamed ingest, the summary's views only
    assert out[0] == in_memory[0] == 0, out[2]
    assert in_memory[1].count("\n") > 3
    if fmt == "text":
        assert in_memory[1] == out[1]
    else:  # a float summed by parallel threads may differ in its last digits from run to run
        assert _rounded(json.loads(in_memory[1])) == _rounded(json.loads(out[1]))
    assert in_memory[2] == out[2]


def _rounded(x):
    if isinstance(x, float):
        return float(f"{x:.12g}")
    if isinstance(x, dict):
        return {k: _rounded(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_rounded(v) for v in x]
    return x


def test_only_the_summary_views_are_computed(monkeypatch):
    computed = []
    import tracecols.engine.catalog as catalog

    real = catalog.Engine._hold

    def spy(self, name, t):  # each view computed, whether one at a time or several
        computed.append(name)
        return real(self, name, t)

    monkeypatch.setattr(catalog.Engine, "_hold", spy)
    rc, text, err = cli("analyze", DATA_TRACE, "-q")
    assert rc == 0 and err == "" and "Top kernels" in text
    views = {n for n in computed if not n.startswith("_")}
    assert set(analyze.SUMMARY_VIEWS) <= views
    # what they read (op_gpu_time, op_summary, inference_steps …; the findings read op_perf,
    # kernel_perf and step_stats), nothing else
    assert not views & {"tracelens_unified_perf_summary", "critical_path", "stacks", "memory_timeline_bins", "kernel_sequences"}
    assert len(computed) == len(set(computed))  # each once
