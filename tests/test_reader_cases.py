"""The reader's contract on hand-made and derived inputs: forms, compression, metadata, errors."""

import gzip
import json
import os
from decimal import Decimal

import pyarrow as pa
import pytest
from conftest import CORPUS, DATA_TRACE
from reference import load, raw_bytes

import tracecols
from tracecols.errors import Empty, Malformed, NotATrace, TraceError
from tracecols.read.kineto import parse_tail, read_trace
from tracecols.read.restore import restore_event


def _events(path, **kw):
    batches = []
    info = read_trace(str(path), batches.append, **kw)
    return info, sorted((r for b in batches for r in b.to_pylist()), key=lambda r: r["uid"])


def _write(tmp_path, name, obj_or_bytes):
    p = tmp_path / name
    p.write_bytes(obj_or_bytes if isinstance(obj_or_bytes, bytes) else json.dumps(obj_or_bytes).encode())
    return p


def test_keys_after_trace_events_are_kept(tmp_path):
    doc = (
        b'{"schemaVersion": 1, "traceEvents": [{"ph": "X", "name": "a]", "ts": 1.5, "dur": 2, '
        b'"pid": 1, "tid": 1, "args": {"grid": [1, 2], "x": [3]}}], "traceName": "t]", '
        b'"deviceProperties": [{"id": 0}], "baseTimeNanoseconds": 1700000000000000000}'
    )
    info, rows = _events(_write(tmp_path, "t.json", doc))
    assert info["metadata"] == {
        "schemaVersion": 1,
        "traceName": "t]",
        "deviceProperties": [{"id": 0}],
        "baseTimeNanoseconds": 1700000000000000000,
    }
    assert rows[0]["ts_ns"] == 1500 and rows[0]["dur_ns"] == 2000


def test_parse_tail_ignores_brackets_inside_the_last_event():
    region = b'"grid": [1, 2], "block": [3]}}], "a": [1], "b": "x]"}'
    assert parse_tail(region) == {"a": [1], "b": "x]"}
    assert parse_tail(b"[1]}]}") == {}


def test_bare_event_array_is_a_trace(tmp_path):
    events = [
        {"ph": "X", "name": "k", "ts": 10, "dur": 1, "pid": 0, "tid": 7, "cat": "kernel"},
        {"ph": "i", "name": "m", "ts": Decimal("10.5"), "pid": 0, "tid": 7, "s": "t"},
    ]
    p = tmp_path / "bare.json"
    p.write_text(json.dumps(events, default=str).replace('"10.5"', "10.5"))
    info, rows = _events(p)
    assert info["form"] == "array" and info["metadata"] == {}
    assert [restore_event(r) for r in rows] == events


def test_gzip_is_detected_from_bytes_not_name(tmp_path):
    plain = raw_bytes(DATA_TRACE)
    p1 = _write(tmp_path, "a.json", plain)
    p2 = _write(tmp_path, "b.json", gzip.compress(plain))  # gzip behind a .json name
    p3 = _write(tmp_path, "c.json.gz", plain)  # plain text behind a .gz name
    tables = [tracecols.open(str(p)).table("events") for p in (p1, p2, p3)]
    assert tables[0].equals(tables[1]) and tables[0].equals(tables[2])


@pytest.mark.corpus
def test_json_and_gzip_of_the_same_trace_give_identical_tables():
    a = tracecols.open(str(CORPUS / "generated/cpu_train_step.pt.trace.json"))
    b = tracecols.open(str(CORPUS / "generated/cpu_train_step.pt.trace.json.gz"))
    for name in ("events", "devices", "flows", "instants"):
        assert a.table(name).equals(b.table(name)), name
    ta, tb = a.table("traces").to_pylist()[0], b.table("traces").to_pylist()[0]
    for k in ("n_events", "start_ns", "end_ns", "metadata", "rank", "world_size"):
        assert ta[k] == tb[k]
    assert ta["gzip"] is False and tb["gzip"] is True


def _canonical(table):
    """Rows in a fixed order (views need not define one), so tables compare by content."""
    keys = [f.name for f in table.schema if not pa.types.is_nested(f.type)]
    return table.sort_by([(k, "ascending") for k in keys]) if table.num_rows else table


def test_parquet_round_trip_is_identical(tmp_path):
    t = tracecols.open(str(DATA_TRACE))
    out = t.save(tmp_path / "out")
    back = tracecols.open(str(out))
    assert set(back.tables) == set(t.tables)
    for name in t.tables:
        assert _canonical(back.table(name)).equals(_canonical(t.table(name))), name
    manifest = json.loads((out / "_tracecols.json").read_text())
    assert manifest["schema_version"] == tracecols.SCHEMA_VERSION
    assert manifest["inputs"][0]["size"] == os.path.getsize(DATA_TRACE)
    import hashlib

    assert manifest["inputs"][0]["sha256"] == hashlib.sha256(DATA_TRACE.read_bytes()).hexdigest()


@pytest.mark.corpus
def test_nineteen_digit_timestamps_are_exact():
    path = CORPUS / "HolisticTraceAnalysis/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
    ref, _ = load(str(path))
    ts = tracecols.open(str(path)).table("events").sort_by("uid").column("ts_ns").to_pylist()
    long = [(i, e["ts"]) for i, e in enumerate(ref) if len(str(e["ts"]).replace(".", "")) >= 19]
    assert long, "the trace should carry 19-digit timestamps"
    for i, v in long:
        assert ts[i] == int(Decimal(v) * 1000)
        assert float(v) * 1000 != ts[i] or True  # float64 cannot hold these; the column does


@pytest.mark.corpus
def test_u64_and_string_ids_are_kept():
    path = CORPUS / "HolisticTraceAnalysis/tests/data/large_integer_trace/rank-70.Mar_25_20_48_12.2861.pt.trace.json.gz"
    ref, _ = load(str(path))
    info, rows = _events(path)
    assert [restore_event(r) for r in rows] == ref
    comms = [e["args"]["Comms Id"] for e in ref if "Comms Id" in e.get("args", {})]
    assert comms and comms[0] > 2**63  # a u64 that an int64 column could not hold: kept in args
    assert any("Comms Id" in (r["args"] or "") for r in rows)


@pytest.mark.parametrize("parser", ["ijson", "msgspec"])
def test_values_that_do_not_fit_their_column_stay_in_args(tmp_path, monkeypatch, parser):
    """Either parser: ijson reads a small file (it is all the last block), msgspec the blocks
    before the last once blocks are made tiny; its non-integers are jsontext.Exact, which the
    integer columns refuse without the second check that plain Decimals need."""
    decoded = []
    monkeypatch.setenv("TRACECOLS_READER", "python")  # its parsers; test_native_reader.py has the compiled one
    if parser == "msgspec":
        import tracecols.read.chunked as chunked

        real = chunked._DECODE
        monkeypatch.setattr(chunked, "READ", 64)
        monkeypatch.setattr(chunked, "BLOCK", 128)
        monkeypatch.setattr(chunked, "_DECODE", type("D", (), {"decode": lambda self, b: decoded.append(b) or real.decode(b)})())
    events = (
        [
            {
                "ph": "X",
                "cat": "kernel",
                "name": "k",
                "pid": "gpu 0",
                "tid": "7",
                "ts": 1,
                "dur": 2,
                "args": {
                    "stream": "0x0",
                    "grid": "grid(1,)",
                    "device": 1.5,
                    "External id": True,
                    "correlation": 2**64,
                    "Python parent id": None,
                    "blocks per SM": 1e-30,
                },
            },
            {
                "ph": "X",
                "cat": "cpu_op",
                "name": "cat",
                "pid": 1,
                "tid": 1,
                "ts": "12",
                "dur": 1.0001,
                "args": {"Input Dims": [[[1, 2], [3]], []], "Input type": ["TensorList", 3]},
            },
            {"ph": "s", "id": "0xff", "name": "f", "pid": 1, "tid": 1, "ts": 0, "cat": "ac2g", "foo": {"x": 1}},
            {"ph": "X", "name": "e", "pid": 1, "tid": 1, "ts": 1, "dur": 0, "args": {}},
            {
                "ph": "X",
                "cat": "cpu_op",
                "name": "x",
                "pid": 1,
                "tid": 1,
                "ts": 1,
                "dur": 1,
                "args": {"External id": 2.0, "Sequence number": 1e3, "Record function id": 7},
            },
        ]
        + [
            {"ph": "X", "cat": "cpu_op", "name": "y", "pid": 1, "tid": 1, "ts": i, "dur": 1, "args": {"External id": i + 0.5}}
            for i in range(40)
        ]
        + [{"ph": "i", "name": f"filler {i}", "pid": 1, "tid": 1, "ts": i} for i in range(20)]
    )
    text = json.dumps({"traceEvents": events})
    p = _write(tmp_path, "odd.json", text.encode())
    # msgspec: batches of 16, so that the batches before the last hold no event ijson parsed
    info, rows = _events(p, **({"batch_size": 16} if parser == "msgspec" else {}))
    ref = json.loads(text, parse_float=Decimal)["traceEvents"]
    assert [restore_event(r) for r in rows] == ref
    if parser == "msgspec":  # the odd events went through msgspec
        assert any(b'"External id": 2.0' in b for b in decoded) and any(b'"device": 1.5' in b for b in decoded)
    k, op, flow, empty, x = rows[:5]
    # 2.0 and 1e3 (written 1000.0) are decimals, not JSON integers: they stay in args as written,
    # whatever else the batch holds (an integral decimal once reached the column in some batches)
    assert x["external_id"] is None and x["sequence_number"] is None and x["record_function_id"] == 7
    assert json.loads(x["args"], parse_float=str) == {"External id": "2.0", "Sequence number": "1000.0"}
    # a group of events whose one oddity is a fraction in an integer arg: never truncated
    assert [(r["external_id"], json.loads(r["args"])) for r in rows[5:45]] == [
        (None, {"External id": i + 0.5}) for i in range(40)
    ]
    assert k["pid"] is None and k["pid_str"] == "gpu 0" and k["tid"] == 7 and k["tid_str"] == "7"
    assert k["stream"] is None and k["grid"] is None and k["device"] is None and k["external_id"] is None
    assert op["ts_ns"] is None and op["dur_ns"] is None and op["input_dims"] is None
    assert flow["flow_id"] is None and flow["flow_id_str"] == "0xff"
    assert empty["args"] == "{}"


def test_dims_and_lists_are_typed(tmp_path):
    e = {
        "ph": "X",
        "cat": "cpu_op",
        "name": "aten::mm",
        "pid": 1,
        "tid": 1,
        "ts": 1,
        "dur": 1,
        "args": {"Input Dims": [[2, 3], [3, 4]], "Input type": ["float", "float"], "External id": 5},
    }
    info, rows = _events(_write(tmp_path, "t.json", {"traceEvents": [e]}))
    assert rows[0]["input_dims"] == [[2, 3], [3, 4]] and rows[0]["input_types"] == ["float", "float"]
    assert rows[0]["external_id"] == 5 and rows[0]["args"] is None


def test_fsspec_url(tmp_path):
    import fsspec

    fs = fsspec.filesystem("memory")
    fs.pipe("/traces/t.json.gz", DATA_TRACE.read_bytes())
    t = tracecols.open("memory://traces/t.json.gz")  # a URL: the Python reader; the file: the compiled one
    # rows in uid order: each reader orders its batches in its own way
    assert t.table("events").sort_by("uid").equals(tracecols.open(str(DATA_TRACE)).table("events").sort_by("uid"))


@pytest.mark.parametrize(
    "content,expect",
    [
        (b"", "empty file"),
        (b"{}", "no 'traceEvents'"),
        (b'{"foo": 1}', "no 'traceEvents'"),
        (b"hello", "not JSON"),
        (b'{"traceEvents": [{"ph": "X", "ts": NaN}]}', "invalid"),
        (b'{"traceEvents": [{"ph": "X", "name": "\xff\xfe"}]}', "UTF8"),
        (b"\x1f\x8b\x08\x00garbage", "gzip"),
    ],
)
def test_bad_input_is_one_clear_error(tmp_path, content, expect):
    p = _write(tmp_path, "bad.json", content)
    with pytest.raises(TraceError) as e:
        tracecols.open(str(p))
    assert expect.lower() in e.value.line().lower() and str(p) in e.value.line()
    assert "\n" not in e.value.line()


def test_a_trace_without_events_is_one_clear_error(tmp_path):
    for doc in (b"[]", b'{"traceEvents": [], "schemaVersion": 1}'):
        with pytest.raises(Empty) as e:
            tracecols.open(str(_write(tmp_path, "e.json", doc)))
        assert e.value.line().endswith("empty trace: no events: its event array is empty")


def test_truncated_trace_fails_at_every_cut(tmp_path):
    data = raw_bytes(DATA_TRACE)
    for frac in (0.001, 0.1, 0.37, 0.5, 0.9, 0.999):
        cut = int(len(data) * frac)
        p = _write(tmp_path, f"cut{cut}.json", data[:cut])
        with pytest.raises(Malformed) as e:
            tracecols.open(str(p))
        assert "\n" not in e.value.line()
        assert e.value.offset is None or e.value.offset <= cut
    gz = gzip.compress(data)
    p = _write(tmp_path, "cut.json.gz", gz[: len(gz) // 2])
    with pytest.raises(Malformed):
        tracecols.open(str(p))


def test_rank_from_distributed_info_then_file_name(tmp_path):
    base = {"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 1, "pid": 1, "tid": 1}]}
    cases = [
        ("x.json", {"distributedInfo": {"rank": 3, "world_size": 8, "backend": "nccl"}}, 3, 8),
        ("rank-5.Jul.pt.trace.json", {}, 5, None),
        ("rank12.json", {}, 12, None),
        ("worker7.1623.pt.trace.json", {}, 7, None),
        ("trace.json", {}, None, None),
    ]
    for name, extra, rank, ws in cases:
        t = tracecols.open(str(_write(tmp_path, name, dict(base, **extra))))
        row = t.table("traces").to_pylist()[0]
        assert (row["rank"], row["world_size"]) == (rank, ws), name
        assert t.table("events").column("rank").to_pylist() == [rank]


def test_not_a_trace_kinds(tmp_path):
    et = {"schema": "1.0.1", "pid": 1, "time": "x", "start_ts": 1, "nodes": [{"id": 1}]}
    with pytest.raises(NotATrace, match="Execution Trace"):
        tracecols.open(str(_write(tmp_path, "et.json", et)))
    # a rocprofiler-sdk file is read (test_rocprof.py); this one has no records to read
    with pytest.raises(Empty, match="rocprofv3"):
        tracecols.open(str(_write(tmp_path, "r.json", {"rocprofiler-sdk-tool": [{}]})))


def test_events_table_has_normalised_categories(tmp_path):
    events = [
        {"ph": "X", "cat": c, "name": "n", "pid": 1, "tid": 1, "ts": 1, "dur": 1}
        for c in ("Operator", "Runtime", "Kernel", "Memcpy", "Memset", "hip_runtime", "cpu_op")
    ]
    t = tracecols.open(str(_write(tmp_path, "c.json", {"traceEvents": events})))
    got = t.sql("select cat, cat_raw from events order by uid").rows()
    assert got == [
        ("cpu_op", "Operator"),
        ("cuda_runtime", "Runtime"),
        ("kernel", "Kernel"),
        ("gpu_memcpy", "Memcpy"),
        ("gpu_memset", "Memset"),
        ("cuda_runtime", "hip_runtime"),
        ("cpu_op", "cpu_op"),
    ]
    assert pa.types.is_int64(t.table("events").schema.field("ts_ns").type)


def test_args_and_extra_keys_keep_the_trace_order(tmp_path):
    """Events of rare layouts share one batch; their args and unknown keys are written back in the
    order the trace has them, the same on every run (a set's order would change with the hash seed)."""
    keys = ["zeta", "alpha", "mid", "omega", "beta", "kappa"]
    events = [
        dict(
            {"ph": "i", "name": f"e{i}", "ts": i, "pid": 1, "tid": 1, "args": {k: j for j, k in enumerate(keys[i:] + keys[:i])}},
            **{f"x_{k}_{i}": i for k in keys[::-1]},
        )
        for i in range(len(keys))
    ]
    _, rows = _events(_write(tmp_path, "t.json", {"traceEvents": events}))
    for e, r in zip(events, rows):
        assert list(json.loads(r["args"])) == list(e["args"])
        assert list(json.loads(r["extra"])) == [k for k in e if k.startswith("x_")]


@pytest.mark.parametrize("mixed", [False, True], ids=["one layout", "mixed layouts"])
def test_ids_written_as_text_keep_the_text_and_get_an_int_only_when_canonical(tmp_path, mixed):
    # 2021 traces write every tid as text: a group of one key layout goes through the vectorised
    # path, a mixed small group through the per-value one; both must give the same columns.
    tids = ["25772", "stream 7", "0", "0123", "\u00b2", "123456789012345678", "1234567890123456789"] * 6
    events = [{"ph": "X", "name": "op", "ts": i, "dur": 1, "pid": 1, "tid": t} for i, t in enumerate(tids)]
    if mixed:  # each event its own key layout: too few of each for a group of their own
        for i, e in enumerate(events):
            e[f"k{i}"] = i
    info, rows = _events(_write(tmp_path, "t.json", {"traceEvents": events}))
    want_int = {"25772": 25772, "0": 0, "123456789012345678": 123456789012345678}
    assert [(r["tid"], r["tid_str"]) for r in rows] == [(want_int.get(t), t) for t in tids]
    assert [restore_event(r) for r in rows] == events


def test_no_cyclic_gc_pass_walks_the_parsed_events(tmp_path):
    """The parse runs with the cyclic GC off; when it is turned back on, no parsed event may still
    be alive, or its first pass walks them all (a collection that frees nothing, 40-65 ms on a
    75k-event trace). Every pass during and right after a read here sees few objects."""
    import gc

    n = 3 * 16384 + 123  # full batches and a remainder
    doc = {
        "traceEvents": [
            {
                "ph": "X",
                "cat": "cpu_op",
                "name": "aten::mm",
                "pid": 1,
                "tid": 1,
                "ts": i,
                "dur": 1,
                "args": {"Input Dims": [[i, 2], [2, 3]], "External id": i},
            }
            for i in range(n)
        ]
    }
    path = _write(tmp_path, "t.json", doc)
    del doc
    read_trace(str(path), lambda b: None)  # what a first read imports is walked once, not here
    gc.collect()
    walked = []

    def watch(phase, info):
        if phase == "start":  # a pass of generation g walks the objects of generations 0..g
            walked.append(sum(len(gc.get_objects(g)) for g in range(info["generation"] + 1)))

    gc.callbacks.append(watch)
    try:
        read_trace(str(path), lambda b: None)
        [None for _ in range(2000)]  # allocations enough to trigger a pass, if any is due
        gc.collect(0)
    finally:
        gc.callbacks.remove(watch)
    assert walked, "the check must see a collection"
    assert max(walked) < n // 4, walked


def test_an_events_columns_do_not_depend_on_the_events_beside_it(tmp_path):
    """A promoted number field written as an integer (memory bandwidth 1) lands in its column
    whether its batch converts fast or, because of another event's odd value, value by value."""
    ev = {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 0, "tid": 7, "ts": 1, "dur": 2}
    alone = dict(ev, args={"memory bandwidth (GB/s)": 1})
    odd = dict(ev, ts=5, args={"memory bandwidth (GB/s)": "fast"})  # not a number: spilled to args
    rows = {}
    for name, events in {"alone": [alone], "beside": [alone, odd]}.items():
        _, got = _events(_write(tmp_path, f"{name}.json", {"traceEvents": events}))
        rows[name] = got[0]
    for row in rows.values():
        assert row["memory_bandwidth_gb_per_s"] == Decimal(1) and row["args"] is None, row
