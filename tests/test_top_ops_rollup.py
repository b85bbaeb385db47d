"""The `top_ops` view's rank and rest_ columns, and the `(other ops)` row that `analyze` reads
from them: checked against sums written out here in plain Python over the view's op rows."""

import contextlib
import io
import json

import pytest
from conftest import CORPUS, DATA_TRACE

import tracecols
from tracecols.cli import main

TRACES = {
    "bert, one trace": [DATA_TRACE],
    "resnet on mi300 and bert, two traces": [
        CORPUS / "TraceLens/tests/traces/mi300/ddp_resnet18_no_pool/train_resnet18.json.gz",
        DATA_TRACE,
    ],
}


@pytest.fixture(scope="module", params=sorted(TRACES))
def rows(request):
    t = tracecols.open(*TRACES[request.param])
    yield request.param, t.frame("top_ops").to_dicts()
    t.close()


def _ranked(rows):
    """{trace_id: its op rows, most GPU time first (ties by name, then module; None last)}."""
    out = {}
    for r in rows:
        if r["name"] != "(no op)":
            out.setdefault(r["trace_id"], []).append(r)
    for ops in out.values():
        ops.sort(key=lambda r: (-r["gpu_ns"], r["name"], r["parent_module"] is None, r["parent_module"] or ""))
    return out


def test_op_rank_numbers_the_ops_from_the_most_gpu_time(rows):
    _, rows = rows
    for ops in _ranked(rows).values():
        assert [r["op_rank"] for r in ops] == list(range(1, len(ops) + 1))
    no_op = [r for r in rows if r["name"] == "(no op)"]
    assert no_op and all(r["op_rank"] is None and r["rest_count"] is None for r in no_op)


def test_rest_columns_total_the_ops_ranked_below(rows):
    _, rows = rows
    for ops in _ranked(rows).values():
        assert len(ops) > 3
        busy = 100.0 * ops[0]["gpu_ns"] / ops[0]["share_pct"]  # the GPU busy time the shares divide
        for i, r in enumerate(ops):
            below = ops[i + 1 :]
            assert r["rest_count"] == sum(o["count"] for o in below)
            assert r["rest_gpu_ns"] == sum(o["gpu_ns"] for o in below)
            assert r["rest_cpu_self_ns"] == sum(o["cpu_self_ns"] for o in below)
            assert r["rest_share_pct"] == pytest.approx(100.0 * r["rest_gpu_ns"] / busy, rel=1e-9)
            assert r["rest_share_pct"] == pytest.approx(sum(o["share_pct"] for o in below), abs=1e-9)
        assert ops[-1]["rest_count"] == ops[-1]["rest_gpu_ns"] == 0


def _summary(paths, top):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(["analyze", *map(str, paths), "--top", str(top), "--format", "json", "-q"]) == 0
    return json.loads(out.getvalue())["top_ops"]


@pytest.mark.parametrize("top", [0, 2, 5, 1000])
def test_analyze_shows_the_top_ops_then_one_row_for_the_others(rows, top):
    case, view = rows
    got = _summary(TRACES[case], top)
    want = []
    for trace_id, ops in sorted(_ranked(view).items()):
        shown, others = ops[:top], ops[top:]
        want += [(trace_id, r["name"], r["parent_module"], r["count"], r["gpu_ns"]) for r in shown]
        if others:
            want.append((trace_id, "(other ops)", None, sum(r["count"] for r in others), sum(r["gpu_ns"] for r in others)))
        no_op = [r for r in view if r["name"] == "(no op)" and r["trace_id"] == trace_id]
        want += [(trace_id, "(no op)", None, None, r["gpu_ns"]) for r in no_op]
    assert [(r["trace_id"], r["name"], r["parent_module"], r["count"], r["gpu_ns"]) for r in got] == want
    other = [r for r in got if r["name"] == "(other ops)"]
    for r in other:
        ops = _ranked(view)[r["trace_id"]][top:]
        assert r["cpu_self_ns"] == sum(o["cpu_self_ns"] for o in ops)
        assert r["share_pct"] == pytest.approx(sum(o["share_pct"] for o in ops), abs=1e-9)


def test_an_output_written_before_the_columns_is_read_with_them(tmp_path):
    """An output directory whose top_ops file lacks the rank and rest_ columns (written by an
    older tracecols): the view is computed again from the tables saved beside it, and
    `analyze DIR` shows the same top ops as the trace file."""
    import pyarrow.parquet as pq

    out = tmp_path / "out"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(["analyze", str(DATA_TRACE), "-o", str(out), "-q"]) == 0
    old = pq.read_table(out / "top_ops.parquet").select(_OLD_COLUMNS)
    pq.write_table(old, out / "top_ops.parquet")
    t = tracecols.open(out)
    assert t.frame("top_ops").columns[: len(_OLD_COLUMNS)] == _OLD_COLUMNS and "op_rank" in t.frame("top_ops").columns
    t.close()
    assert _summary([out], 3) == _summary([DATA_TRACE], 3)


def test_a_directory_this_process_just_wrote_is_not_checked_for_older_columns(tmp_path):
    """`analyze -o` opens the output it has just written with `fresh`: its views are today's, and
    reading every file's schema again to check them is time the command need not spend."""
    import pyarrow.parquet as pq

    from tracecols.trace import open_any

    out = tmp_path / "out"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(["analyze", str(DATA_TRACE), "-o", str(out), "-q"]) == 0
    pq.write_table(pq.read_table(out / "top_ops.parquet").select(_OLD_COLUMNS), out / "top_ops.parquet")
    t = open_any(out, fresh=True)
    assert t.frame("top_ops").columns == _OLD_COLUMNS  # the file as it is: not computed again
    t.close()


_OLD_COLUMNS = ["trace_id", "name", "parent_module", "count", "gpu_ns", "share_pct", "cpu_self_ns"]
