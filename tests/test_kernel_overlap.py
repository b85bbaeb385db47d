"""Device events that overlap the next one on their stream (issue #8, seen in ROCm traces).

Work on one stream is serial, so `kernels` cuts an event short at the start of the next one on
its (trace, device, stream), keeps the duration as written in `dur_raw_ns`, flags the row
`clipped`, and counts it in traces.warnings (docs/schema.md). The vectorised clip is checked against a plain Python loop on
every corpus trace, as written and with every device event stretched so that many overlap.
"""

import contextlib
import io
import json

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from corpus_files import kineto_files, rel

import tracecols
from tracecols.cli import main
from tracecols.model.kernels import build_kernels

KINETO = kineto_files()
US = 1000  # ns per µs

WARNING = (
    "{n} device event(s) overlap the next one on their stream (largest overlap {us} µs): "
    "clipped to its start in kernels.dur_ns, raw value in kernels.dur_raw_ns"
)


def _x(name, cat, pid, tid, ts, dur, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args}


def _write(tmp_path, events):
    p = tmp_path / "t.json"
    p.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events}))
    return str(p)


def _trace(tmp_path):
    """Times in µs. Device 0 stream 7: A [100, 200) overlaps B [160, 250), B overlaps the memcpy
    G [245, 260). Device 0 stream 8: C [100, 150), D [150, 200) only touch. Device 1 stream 9:
    E [300, 600) holds F [350, 400) entirely."""
    launches = [_x("cudaLaunchKernel", "cuda_runtime", 100, 1, 10 + 5 * i, 2, correlation=i) for i in range(1, 8)]
    return _write(
        tmp_path,
        [_x("aten::mm", "cpu_op", 100, 1, 0, 100)]
        + launches
        + [
            _x("kernel_a", "kernel", 0, 7, 100, 100, correlation=1, device=0, stream=7),
            _x("kernel_b", "kernel", 0, 7, 160, 90, correlation=2, device=0, stream=7),
            _x("Memcpy DtoD (Device -> Device)", "gpu_memcpy", 0, 7, 245, 15, correlation=3, device=0, stream=7),
            _x("kernel_c", "kernel", 0, 8, 100, 50, correlation=4, device=0, stream=8),
            _x("kernel_d", "kernel", 0, 8, 150, 50, correlation=5, device=0, stream=8),
            _x("kernel_e", "kernel", 1, 9, 300, 300, correlation=6, device=1, stream=9),
            _x("kernel_f", "kernel", 1, 9, 350, 50, correlation=7, device=1, stream=9),
        ],
    )


def test_overlap_is_clipped_to_the_next_start_and_the_raw_value_kept(tmp_path):
    t = tracecols.open(_trace(tmp_path))
    rows = {r[0]: r[1:] for r in t.sql("select name, ts_ns, dur_ns, end_ns, dur_raw_ns, clipped, op_uid from kernels").rows()}
    assert rows["kernel_a"] == (100 * US, 60 * US, 160 * US, 100 * US, True, 0)
    assert rows["kernel_b"] == (160 * US, 85 * US, 245 * US, 90 * US, True, 0)  # cut by a memcpy too
    assert rows["Memcpy DtoD (Device -> Device)"] == (245 * US, 15 * US, 260 * US, 15 * US, False, 0)
    assert rows["kernel_c"] == (100 * US, 50 * US, 150 * US, 50 * US, False, 0)  # ends where D starts
    assert rows["kernel_d"] == (150 * US, 50 * US, 200 * US, 50 * US, False, 0)
    assert rows["kernel_e"] == (300 * US, 50 * US, 350 * US, 300 * US, True, 0)
    assert rows["kernel_f"] == (350 * US, 50 * US, 400 * US, 50 * US, False, 0)
    # the raw value is the event's own dur, as in events
    assert (
        t.sql("""select count(*) from kernels k join events e on e.trace_id = k.trace_id and e.uid = k.uid
                    where k.dur_raw_ns is distinct from e.dur_ns""").item()
        == 0
    )

    assert t.sql("select warnings from traces").item().to_list() == [WARNING.format(n=3, us=250)]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main(["info", str(tmp_path / "t.json")]) == 0
    assert "3 device event(s) overlap the next one on their stream" in out.getvalue()


def test_the_streaming_ingest_clips_and_warns_the_same(tmp_path):
    from tracecols.pipeline import ingest_to_dir

    path = _trace(tmp_path)
    mem = tracecols.open(path)
    out = tracecols.open(ingest_to_dir([path], tmp_path / "out"))
    query = "select uid, dur_ns, end_ns, dur_raw_ns, clipped from kernels order by uid"
    assert out.sql(query).rows() == mem.sql(query).rows()
    assert out.sql("select warnings from traces").item().to_list() == [WARNING.format(n=3, us=250)]


def test_analyses_use_the_clipped_durations(tmp_path):
    t = tracecols.open(_trace(tmp_path))
    sums = dict(t.sql("select name, sum_ns from kernel_stats").rows())
    assert sums["kernel_a"] == 60 * US and sums["kernel_b"] == 85 * US and sums["kernel_e"] == 50 * US
    busy = dict(t.sql("select device, busy_ns from gpu_timeline where device is not null").rows())
    # device 1: E clipped to [300, 350) then F [350, 400) -> 100 µs (the raw E alone covers 300 µs);
    # device 0: the union [100, 260) is the same clipped or not
    assert busy == {0: 160 * US, 1: 100 * US}


def test_ties_strings_and_missing_ts(tmp_path):
    t = tracecols.open(
        _write(
            tmp_path,
            [
                _x("first", "kernel", 0, 7, 10, 5, device=0, stream=7),  # same ts as `second`, lower uid: cut to 0
                _x("second", "kernel", 0, 7, 10, 5, device=0, stream=7),
                # no device/stream args and string pids: two different streams, no clipping between them
                _x("gpu_a", "kernel", "GPU A", "stream 1", 100, 50),
                _x("gpu_b", "kernel", "GPU B", "stream 1", 120, 50),
                # a ts that is not an int64 count of ns: never cut, never cuts another
                _x("bad_ts", "kernel", 0, 7, 1e30, 5, device=0, stream=7),
                _x("after", "kernel", 0, 7, 20, 5, device=0, stream=7),
            ],
        )
    )
    rows = {r[0]: r[1:] for r in t.sql("select name, dur_ns, dur_raw_ns, clipped from kernels").rows()}
    assert rows["first"] == (0, 5 * US, True)
    assert rows["second"] == (5 * US, 5 * US, False)
    assert rows["gpu_a"] == (50 * US, 50 * US, False) and rows["gpu_b"] == (50 * US, 50 * US, False)
    assert rows["bad_ts"][2] is False and rows["after"] == (5 * US, 5 * US, False)
    warnings = t.sql("select warnings from traces").item().to_list()
    assert WARNING.format(n=1, us=5) in warnings


def test_no_overlap_no_warning_and_fractional_overlap(tmp_path):
    t = tracecols.open(
        _write(
            tmp_path,
            [
                _x("k1", "kernel", 0, 7, 10, 5, device=0, stream=7),
                _x("k2", "kernel", 0, 7, 15, 5, device=0, stream=7),
            ],
        )
    )
    assert t.sql("select warnings from traces").item().to_list() == []
    assert t.sql("select count(*) from kernels where clipped or dur_ns <> dur_raw_ns").item() == 0
    t = tracecols.open(
        _write(
            tmp_path,
            [
                _x("k1", "kernel", 0, 7, 10, 5.001, device=0, stream=7),  # ends 1 ns after k2 starts
                _x("k2", "kernel", 0, 7, 15, 5, device=0, stream=7),
            ],
        )
    )
    assert t.sql("select warnings from traces").item().to_list() == [WARNING.format(n=1, us="0.001")]
    assert t.sql("select dur_ns, dur_raw_ns from kernels where name = 'k1'").row(0) == (5 * US, 5 * US + 1)


# ---------------------------------------------------------------------------------------------
# The corpus: the vectorised clip against a plain loop, on every trace that has device events.


def reference_clip(rows):
    """{uid: (dur_ns, clipped)} by a per-stream loop. rows: dicts of the kernel events as they
    are in `events` (uid, trace_id, pid, tid, pid_str, tid_str, device, stream, ts_ns, dur_ns).

    A stream is the device and stream args, else pid and tid (and their string form, which
    only matters when the number is missing); dur null counts as 0.
    """
    streams, out = {}, {}
    for r in rows:
        dur = max(r["dur_ns"] or 0, 0)  # a negative duration covers no time
        if r["ts_ns"] is None:
            out[r["uid"]] = (dur, False)
            continue
        dev = (r["device"], None) if r["device"] is not None else (r["pid"], r["pid_str"])
        st = (r["stream"], None) if r["stream"] is not None else (r["tid"], r["tid_str"])
        streams.setdefault((r["trace_id"], dev, st), []).append((r["ts_ns"], r["uid"], dur))
    for items in streams.values():
        items.sort()
        for i, (ts, uid, dur) in enumerate(items):
            nxt = items[i + 1][0] if i + 1 < len(items) else None
            if nxt is not None and ts + dur > nxt:
                out[uid] = (nxt - ts, True)
            else:
                out[uid] = (dur, False)
    return out


_COLS = ["uid", "trace_id", "pid", "tid", "pid_str", "tid_str", "device", "stream", "ts_ns", "dur_ns"]
_DEVICE = ("kernel", "gpu_memcpy", "gpu_memset")

# Device events clipped per trace, as the traces are written. The corpus has none: its ROCm
# traces (mi300, mi210, mi250) included, every device event ends at or before the next start
# on its stream. Any trace not listed must have 0.
CORPUS_CLIPPED = {}


def _check(kernels, expect):
    got = {r["uid"]: r for r in kernels.select(["uid", "ts_ns", "dur_ns", "end_ns", "clipped"]).to_pylist()}
    assert set(got) == set(expect)
    bad = [
        (u, (r["dur_ns"], r["clipped"]), expect[u])
        for u, r in got.items()
        if (r["dur_ns"], r["clipped"]) != expect[u] or (r["ts_ns"] is not None and r["end_ns"] != r["ts_ns"] + r["dur_ns"])
    ]
    assert not bad, bad[:5]


@pytest.mark.corpus
@pytest.mark.parametrize("path", KINETO, ids=[rel(p) for p in KINETO])
def test_clip_matches_a_plain_loop_on_the_corpus(path):
    t = tracecols.open(str(path))
    ev, kernels, slices = t.table("events"), t.table("kernels"), t.table("slices")
    if kernels.num_rows == 0:
        return
    is_dev = pc.and_(pc.equal(ev.column("ph"), "X"), pc.is_in(ev.column("cat"), pa.array(_DEVICE)))
    rows = ev.select(_COLS).filter(is_dev).to_pylist()
    expect = reference_clip(rows)
    _check(kernels, expect)
    assert kernels.column("dur_raw_ns").to_pylist() == [r["dur_ns"] or 0 for r in sorted(rows, key=lambda r: r["uid"])]
    n = sum(c for _, c in expect.values())
    print(f"\n{rel(path)}: {len(rows)} device events, {n} clipped")
    assert n == CORPUS_CLIPPED.get(rel(path), 0)
    warned = [w for w in t.table("traces").column("warnings")[0].as_py() if "overlap the next one" in w]
    assert len(warned) == (1 if n else 0)

    # the same trace with every device event stretched to 2 × dur + 3 µs: most now overlap
    dur = ev.column("dur_ns")
    stretched = pc.if_else(is_dev, pc.add(pc.multiply(pc.fill_null(dur, 0), 2), 3 * US), dur)
    ev2 = ev.set_column(ev.schema.get_field_index("dur_ns"), "dur_ns", stretched)
    for r in rows:
        r["dur_ns"] = 2 * (r["dur_ns"] or 0) + 3 * US
    expect2 = reference_clip(rows)
    _check(build_kernels(ev2, slices), expect2)
    if len(rows) >= 200:  # enough events that the stretch makes overlaps: the check is not vacuous
        assert sum(c for _, c in expect2.values()) > 0
