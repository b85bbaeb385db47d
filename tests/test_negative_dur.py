"""A device event written with a negative duration covers no time.

`kernels.dur_ns` is 0 for it (the raw value stays in `kernels.dur_raw_ns`), so every sum of
durations and every busy time leaves it out, it is counted in traces.warnings, and no view
shows a negative duration (docs/schema.md, docs/errors.md). The expected numbers are worked
out by hand below (times in µs, as written).
"""

import contextlib
import io

import pytest

import tracecols
from tracecols.cli import main

US = 1000  # ns per µs

# Host op aten::mm [0, 100) launches four kernels on device 0 stream 7 (with ac2g arrows):
#   gemm_x [10, 20); gemm_x at 30 whose `dur` key is repeated, the last value -3 (the one read);
#   gemm_x [50, 70); relu_k [80, 84)
# Non-negative durations: gemm_x 10 + 20 = 30 µs, relu_k 4 µs, 34 µs in all; their union is
# the same 34 µs (no overlap); the span is [10, 84) = 74 µs.
_LAUNCH = (
    '{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": {ts}, '
    '"dur": 1, "args": {{"correlation": {c}}}}}'
)
_KERNEL = (
    '{{"ph": "X", "cat": "kernel", "name": "{name}", "pid": 0, "tid": 7, "ts": {ts}, {dur}, '
    '"args": {{"device": 0, "stream": 7, "correlation": {c}}}}}'
)
_FLOW = '{{"ph": "{ph}", "cat": "ac2g", "name": "ac2g", "id": {c}, "pid": {pid}, "tid": {tid}, "ts": {ts}}}'
KERNELS = [
    ("gemm_x", 10, '"dur": 10'),
    ("gemm_x", 30, '"dur": 5, "dur": -3'),
    ("gemm_x", 50, '"dur": 20'),
    ("relu_k", 80, '"dur": 4'),
]


def _text():
    events = ['{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 100, "args": {}}']
    for c, (name, ts, dur) in enumerate(KERNELS, start=1):
        events.append(_LAUNCH.format(ts=c, c=c))
        events.append(_KERNEL.format(name=name, ts=ts, dur=dur, c=c))
        events.append(_FLOW.format(ph="s", c=c, pid=1, tid=1, ts=c))  # the arrow TraceLens links by
        events.append(_FLOW.format(ph="f", c=c, pid=0, tid=7, ts=ts))
    return (
        '{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}], '
        '"traceEvents": [\n' + ",\n".join(events) + "\n]}"
    )


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "t.json"
    p.write_text(_text())
    return p


def test_the_raw_value_is_kept_and_the_duration_taken_as_zero(path):
    t = tracecols.open(path)
    assert t.sql("select dur_ns from events where name = 'gemm_x' and ts_ns = 30000").item() == -3 * US
    row = t.sql("select dur_ns, end_ns, dur_raw_ns, clipped from kernels where ts_ns = 30000").row(0)
    assert row == (0, 30 * US, -3 * US, False)
    assert t.sql("select min(dur_ns) from kernels").item() == 0


def test_counted_in_the_warnings(path):
    t = tracecols.open(path)
    warnings = t.sql("select warnings from traces").item().to_list()
    assert (
        "1 device event(s) with a negative 'dur' (most negative -3 µs): taken as 0 in kernels.dur_ns, "
        "so left out of every duration sum and busy time; raw value in kernels.dur_raw_ns"
    ) in warnings
    assert "1 event(s) with a negative 'dur' (kept in events.dur_ns): taken as 0 in the tree" in warnings
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(["info", str(path)]) == 0
    text = out.getvalue()
    assert "1 device event(s) with a negative 'dur'" in text
    assert "-3" not in text.split("events by category")[1]  # the category totals leave it out too


def test_left_out_of_every_sum(path):
    t = tracecols.open(path)
    stats = {r["name"]: r for r in t.sql("select * from kernel_stats").to_dicts()}
    assert (stats["gemm_x"]["count"], stats["gemm_x"]["sum_ns"]) == (3, 30 * US)
    assert (stats["gemm_x"]["min_ns"], stats["gemm_x"]["max_ns"]) == (0, 20 * US)
    assert stats["relu_k"]["sum_ns"] == 4 * US
    cls = dict(t.sql("select kernel_class, sum_ns from kernel_class_stats").rows())
    assert cls == {"gemm": 30 * US, "elementwise": 4 * US}
    for device in ("= 0", "is null"):
        tl = t.sql(f"select busy_ns, total_ns, idle_ns from gpu_timeline where device {device}").row(0)
        assert tl == (34 * US, 74 * US, 40 * US)
    op = t.sql("select direct_kernel_sum_ns, direct_busy_ns, subtree_kernel_sum_ns from op_gpu_time where name = 'aten::mm'").row(
        0
    )
    assert op == (34 * US, 34 * US, 34 * US)
    tl_sum = t.sql("""select sum("Kernel duration (µs)_sum") from tracelens_kernel_summary""").item()
    assert tl_sum == pytest.approx(34.0)
    busy = {r[0]: r[1] for r in t.sql('select type, "time ms" from tracelens_gpu_timeline').rows()}
    assert busy["busy_time"] == pytest.approx(0.034)


# differences between ranks or from a median, which may rightly be negative
_SIGNED = ("skew", "diff", "delta", "excess", "late")


def test_no_view_shows_a_negative_time(path):
    t = tracecols.open(path)
    views, _ = t.analyses()
    bad, seen = [], 0
    for name, table in views.items():
        for col in table.column_names:
            timed = col.endswith("_ns") or "(µs)" in col or col.endswith(" ms")
            if timed and not any(w in col for w in _SIGNED):  # every timestamp here is >= 0 too
                seen += 1
                values = [v for v in table.column(col).to_pylist() if isinstance(v, (int, float))]
                if values and min(values) < 0:
                    bad.append((name, col, min(values)))
    assert seen > 50 and not bad


def test_the_streaming_ingest_gives_the_same(path, tmp_path):
    from tracecols.pipeline import ingest_to_dir

    mem = tracecols.open(path)
    out = tracecols.open(ingest_to_dir([path], tmp_path / "out"))
    q = "select uid, dur_ns, end_ns, dur_raw_ns, clipped from kernels order by uid"
    assert out.sql(q).rows() == mem.sql(q).rows()
    assert out.sql("select warnings from traces").item().to_list() == mem.sql("select warnings from traces").item().to_list()
