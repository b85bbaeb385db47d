"""The compiled reader (rust/) against the Python reader, its oracle: every real trace, odd and
hostile input written by hand, generated documents cut into pieces at every size; and what a
user sees of it (which reader runs, the fallback, its bounds)."""

import gzip
import json
import os
import subprocess
import sys
from decimal import Decimal

import pyarrow as pa
import pytest
from conftest import CORPUS, DATA_TRACE, REPO
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from native_reference import first_difference, native_table, python_table
from reference import kineto_files, short

import tracecols
from tracecols.errors import Malformed, TraceError
from tracecols.read import native
from tracecols.read.kineto import read_trace
from tracecols.read.restore import restore_event

built = pytest.mark.skipif(native._native is None, reason="the compiled reader is not built here")


def test_ci_runs_the_compiled_reader():
    if os.environ.get("TRACECOLS_EXPECT_WHEEL") != "1":
        pytest.skip("only where .ci/test built and installed the wheel")
    assert native.name() == "native"


def outcome(read, path, **kw):
    """(table, event count, keys after the events) of one reader, or its error's line."""
    try:
        return read(path, **kw)
    except TraceError as e:
        return e.line()


def assert_same(path, **kw):
    want = outcome(python_table, path)
    got = outcome(native_table, path, **kw)
    if isinstance(want, str) or isinstance(got, str):
        assert got == want
        return
    assert got[1:] == want[1:]  # event count, tail keys
    assert first_difference(want[0], got[0]) is None, first_difference(want[0], got[0])


def _traces():
    local = [str(p) for p in sorted((REPO / "tests" / "data").rglob("*.json.gz"))] + [str(DATA_TRACE)]
    return (kineto_files() if CORPUS.is_dir() else []) + local


@built
@pytest.mark.corpus
@pytest.mark.parametrize("path", _traces(), ids=lambda p: short(p) if str(CORPUS) in p else os.path.basename(p))
def test_every_trace_reads_the_same_with_either_reader(path):
    want = outcome(python_table, path)
    for kw in ({"threads": 1}, {"threads": 2, "piece": 1 << 16}):  # one piece per 64 KB: hundreds of cuts
        got = outcome(native_table, path, **kw)
        assert not isinstance(want, str) and not isinstance(got, str), (want, got)
        assert got[1:] == want[1:]
        assert first_difference(want[0], got[0]) is None, (kw, first_difference(want[0], got[0]))


# ---------------------------------------------------------------------------------------
# Odd input, by hand: the Python reader's result (or its error), and what it should be.


def _write(tmp_path, text, name="t.json", gz=False):
    data = text.encode() if isinstance(text, str) else text
    p = tmp_path / (name + (".gz" if gz else ""))
    p.write_bytes(gzip.compress(data) if gz else data)
    return str(p)


def _doc(events_text, head='"schemaVersion": 1, ', tail=', "deviceProperties": [{"id": 0}]'):
    return "{" + head + '"traceEvents": [' + ", ".join(events_text) + "]" + tail + "}"


def _rows(path):
    batches = []
    info = read_trace(path, batches.append)
    rows = sorted((r for b in batches for r in b.to_pylist()), key=lambda r: r["uid"])
    return info, rows


def _reference(path):
    with open(path, "rb") as f:
        data = f.read()
    return json.loads(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data, parse_float=Decimal)["traceEvents"]


@built
@pytest.mark.parametrize("gz", [False, True])
def test_lone_surrogates_are_read_and_kept_escaped(tmp_path, gz):
    # msgspec refuses a lone surrogate, ijson's C backend fails on it ("internal error" once);
    # Python's json reads it, and so does tracecols: the value cannot be UTF-8, so it stays in
    # extra/args as JSON text with its escape
    ev = [
        r'{"ph": "X", "name": "a\udfffb", "ts": 1, "dur": 2, "pid": 1, "tid": 1}',
        r'{"ph": "X", "name": "ok", "ts": 1, "dur": 2, "pid": 1, "tid": 1, "args": {"Input type": ["\ud800"], "k": "\udc00x"}}',
    ]
    p = _write(tmp_path, _doc(ev), gz=gz)
    assert_same(p)
    _, rows = _rows(p)
    assert [restore_event(r) for r in rows] == _reference(p)
    assert rows[0]["name"] is None and json.loads(rows[0]["extra"]) == {"name": "a\udfffb"}
    assert rows[1]["input_types"] is None and rows[1]["name"] == "ok"


@built
def test_duplicate_keys_the_last_wins(tmp_path):
    ev = [
        '{"ph": "X", "name": "a", "name": "b", "ts": 1, "dur": 2, "pid": 1, "tid": 1}',
        '{"ph": "X", "name": "c", "ts": 1, "dur": 2, "pid": 1, "tid": 1, "args": {"stream": 7, "stream": 8, "x": 1, "x": 2}}',
    ]
    p = _write(tmp_path, _doc(ev))
    assert_same(p)
    _, rows = _rows(p)
    assert [restore_event(r) for r in rows] == _reference(p)
    assert rows[0]["name"] == "b" and rows[1]["stream"] == 8 and json.loads(rows[1]["args"]) == {"x": 2}


@built
def test_numbers_odd_and_huge_are_kept_exactly(tmp_path):
    ev = [
        '{"ph": "X", "name": "a", "ts": 1e3, "dur": 2.50000, "pid": 1, "tid": 1, '
        '"args": {"External id": 123456789012345678901234567890, "big": -98765432109876543210987654321, '
        '"tiny": 0.0000001, "e": 1E-2, "neg0": -0, "f": 1.50, "blocks per SM": 1.5000000000000000001, '
        '"grid": [1, 9007199254740993], "Input Dims": [[1, 2], [[3]]]}}',
        '{"ph": "X", "name": "b", "ts": 18446744073709551616, "dur": 0.0001, "pid": 99999999999999999999, "tid": "007"}',
    ]
    p = _write(tmp_path, _doc(ev))
    assert_same(p)
    _, rows = _rows(p)
    assert [restore_event(r) for r in rows] == _reference(p)
    a, b = rows
    assert a["ts_ns"] == 1_000_000 and a["dur_ns"] == 2_500 and a["external_id"] is None
    assert json.loads(a["args"], parse_float=str)["tiny"] == "1E-7"  # as Python's Decimal writes it
    assert b["ts_ns"] is None and b["pid"] is None and b["tid"] is None and b["tid_str"] == "007"


@built
def test_a_string_where_a_shape_list_is_expected_reads_as_the_python_reader_reads_it(tmp_path):
    # pyarrow's fast path reads "" as an empty list (and [""] as [[]]): the compiled reader hands
    # such events to the Python reader rather than guess which of its paths a batch takes
    ev = ['{"ph": "X", "name": "c", "ts": 1, "pid": 1, "tid": 1, "args": {"Input Dims": "", "grid": "", "Input Strides": [""]}}']
    assert_same(_write(tmp_path, _doc(ev)))


def test_text_where_a_list_is_expected_stays_text_in_any_batch(tmp_path):
    """pyarrow reads any sequence as a list ("ab" as ["a", "b"], "" as []): text in a list column
    stays in args as it was, whether or not the other events of its batch hold real lists."""
    from tracecols.read.batch import build_batches

    odd = {"Input type": "ab", "Input Dims": [""], "Input Strides": "", "grid": "12"}
    for events in ([{"ph": "X", "args": odd}], [{"ph": "X", "args": {"Input type": ["x"]}}, {"ph": "X", "args": odd}]):
        t = pa.Table.from_batches(build_batches(events, 0, checked=True))
        row = t.slice(len(events) - 1).to_pylist()[0]
        assert (row["input_types"], row["input_dims"], row["input_strides"], row["grid"]) == (None, None, None, None)
        assert json.loads(row["args"]) == odd


@pytest.mark.parametrize("bad", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_one_line_errors(tmp_path, bad):
    p = _write(tmp_path, _doc(['{"ph": "X", "ts": 1, "pid": 1, "tid": 1}'] * 3 + [f'{{"ph": "X", "ts": {bad}}}']))
    with pytest.raises(Malformed) as e:
        tracecols.open(p)
    assert "\n" not in e.value.line() and e.value.offset is not None
    if native._native is not None:
        assert_same(p)


@pytest.mark.parametrize(
    "prefix,encoding,expect",
    [
        (b"\xef\xbb\xbf", "utf-8", "UTF-8 byte-order mark"),
        (b"", "utf-16-le", "UTF-16"),
        (b"\xff\xfe", "utf-16-le", "UTF-16"),
        (b"\xfe\xff", "utf-16-be", "UTF-16"),
        (b"", "utf-32-le", "UTF-32"),
        (b"\xff\xfe\x00\x00", "utf-32-le", "UTF-32"),
    ],
)
def test_text_encodings_other_than_utf8_are_named(tmp_path, prefix, encoding, expect):
    p = tmp_path / "t.json"
    p.write_bytes(prefix + _doc(['{"ph": "X", "ts": 1, "pid": 1, "tid": 1}']).encode(encoding))
    with pytest.raises(TraceError) as e:
        tracecols.open(str(p))
    assert expect in e.value.line() and "\n" not in e.value.line()


@built
@pytest.mark.parametrize("gz", [False, True])
def test_two_event_arrays_the_last_is_read_with_a_warning(tmp_path, capsys, gz):
    # json.loads keeps the last of duplicate keys, and so does the compiled reader: it reads the
    # file again, passing over the first arrays (whatever their size: it never holds them)
    first = ", ".join(f'{{"ph": "X", "name": "a{i}", "ts": {i}, "pid": 1, "tid": 1}}' for i in range(3000))
    text = (
        '{"traceEvents": [' + first + '], "x": {"traceEvents": [1]}, '
        '"traceEvents": [{"ph": "X", "name": "b", "ts": 2, "pid": 1, "tid": 1}], "y": "\\"traceEvents\\":[", '
        '"traceEvents": [{"ph": "X", "name": "c", "ts": 2, "pid": 1, "tid": 1}, '
        '{"ph": "i", "name": "d", "ts": 3, "pid": 1, "tid": 1}], '
        '"deviceProperties": []}'
    )
    p = _write(tmp_path, text, gz=gz)
    t = tracecols.open(p)
    assert t.sql("select name from events order by uid")["name"].to_list() == ["c", "d"]
    assert [e["name"] for e in _reference(p)] == ["c", "d"]
    assert t.sql("select uid from events order by uid")["uid"].to_list() == [0, 1]
    warned = t.sql("select warnings from traces")["warnings"].to_list()[0]
    assert any("3 'traceEvents' arrays: the last is read" in w for w in warned)
    err = capsys.readouterr().err.splitlines()  # one line, one read again: all arrays are counted at once
    assert len(err) == 1 and "more than one 'traceEvents' array; reading the last" in err[0]


@built
@pytest.mark.parametrize("gz", [False, True])
def test_damaged_input_gives_the_python_readers_error(tmp_path, gz):
    text = _doc([f'{{"ph": "X", "name": "e{i}", "ts": {i}, "pid": 1, "tid": 1}}' for i in range(5000)])
    cases = {
        "truncated": text[: len(text) // 2],
        "garbage": text.replace('{"ph": "X", "name": "e2500"', '}}} {"ph": "X", "name": "e2500"'),
        "trailing": text + "x",
        "not an object": text.replace('{"ph": "X", "name": "e4000"', '[1, 2], {"ph": "X", "name": "e4000"'),
    }
    for name, t in cases.items():
        p = _write(tmp_path, t, name=name, gz=gz)
        want = outcome(python_table, p)
        assert isinstance(want, str), name
        assert outcome(native_table, p) == want, name
        assert outcome(native_table, p, threads=2, piece=4096) == want, name
    if gz:
        good = gzip.compress(text.encode())
        p = tmp_path / "cut.json.gz"
        p.write_bytes(good[: len(good) // 2])
        assert outcome(native_table, str(p)) == outcome(python_table, str(p))
        assert "truncated gzip" in outcome(native_table, str(p))


# ---------------------------------------------------------------------------------------
# Bounds and the fallback.


@built
def test_an_event_beyond_the_bound_is_one_line_naming_it(tmp_path, monkeypatch):
    # an event is held whole only where it runs over the end of a piece (a piece is bounded itself)
    monkeypatch.setattr(native, "MAX_EVENT", 1 << 16)
    monkeypatch.setattr(native, "PIECE", 1 << 12)
    big = '{"ph": "X", "name": "' + "x" * (1 << 17) + '", "ts": 1, "pid": 1, "tid": 1}'
    p = _write(tmp_path, _doc(['{"ph": "X", "ts": 1, "pid": 1, "tid": 1}', big]))
    with pytest.raises(Malformed) as e:
        read_trace(p, lambda b: None)
    line = e.value.line()
    assert "an event longer than 64 KiB, the reader's bound on one event" in line and "TRACECOLS_READER=python" in line
    assert e.value.offset == len(_doc(['{"ph": "X", "ts": 1, "pid": 1, "tid": 1}', big]).split(big)[0])


@built
def test_whitespace_runs_between_events_are_skipped_not_held(tmp_path, monkeypatch):
    monkeypatch.setattr(native, "MAX_EVENT", 1 << 16)  # a run held as part of an event would exceed it
    ws = " \n\t" * (1 << 20)
    text = '{"traceEvents": [' + ws + '{"ph": "X", "ts": 1, "pid": 1, "tid": 1}' + ws + ","
    text += ws + '{"ph": "X", "ts": 2, "pid": 1, "tid": 1}' + ws + "]" + ws + ', "k": "a  b"' + ws + "}"
    p = _write(tmp_path, text, gz=True)
    info, rows = _rows(p)
    assert [r["ts_ns"] for r in rows] == [1000, 2000] and info["metadata"] == {"k": "a  b"}


def test_the_python_reader_bounds_what_it_holds_between_events(tmp_path, monkeypatch):
    # once 20 GB of whitespace between events grew its memory past 3.9 GB (and its time with
    # the square of the run); now it holds at most _Tap.MAX_HELD bytes of it, or says so
    from tracecols.read import kineto

    monkeypatch.setenv("TRACECOLS_READER", "python")
    monkeypatch.setattr(kineto._Tap, "MAX_HELD", 1 << 20)
    event = '{"ph": "X", "ts": 1, "pid": 1, "tid": 1}'
    p = _write(tmp_path, '{"traceEvents": [' + event + "," + " " * (5 << 20) + event + "]}", gz=True)
    with pytest.raises(Malformed) as e:
        read_trace(p, lambda b: None)
    assert "more than 1 MiB without an event" in e.value.line() and "\n" not in e.value.line()
    monkeypatch.delenv("TRACECOLS_READER")
    if native._native is not None:  # the compiled reader reads it
        assert _rows(p)[0]["n_events"] == 2


def test_the_python_reader_when_asked_or_when_the_extension_is_missing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TRACECOLS_READER", "python")
    assert native.name().startswith("python") and read_trace(str(DATA_TRACE), lambda b: None, threads=2)["threads"] == 1
    monkeypatch.delenv("TRACECOLS_READER")
    monkeypatch.setattr(native, "_native", None)
    monkeypatch.setattr(native, "_noted", False)
    assert "not built" in native.name()
    n = read_trace(str(DATA_TRACE), lambda b: None)["n_events"]
    read_trace(str(DATA_TRACE), lambda b: None)
    err = capsys.readouterr().err
    assert n == 2551 and err.count("the compiled reader is not built") == 1 and err[-1] == "\n"


@built
def test_info_says_which_reader_read_the_trace(monkeypatch):
    out = subprocess.run(
        [sys.executable, "-m", "tracecols", "info", str(DATA_TRACE)], capture_output=True, text=True, check=True
    ).stdout
    assert "reader       native (compiled, 2 threads)" in out or "reader       native (compiled, 1 thread)" in out
    env = {**os.environ, "TRACECOLS_READER": "python"}
    out = subprocess.run([sys.executable, "-m", "tracecols", "info", str(DATA_TRACE)], capture_output=True, text=True, env=env)
    assert "reader       python (TRACECOLS_READER=python)" in out.stdout


@built
def test_the_whole_pipeline_gives_the_same_tables_with_either_reader(monkeypatch):
    path = str(REPO / "tests" / "data" / "h100" / "eager_train.pt.trace.json.gz")
    got = tracecols.open(path)
    monkeypatch.setenv("TRACECOLS_READER", "python")
    want = tracecols.open(path)
    for name in ("events", "slices", "kernels", "flows", "traces"):
        a, b = want.table(name), got.table(name)
        keys = [c for c in ("trace_id", "uid", "flow_id", "src_uid") if c in a.column_names]
        a, b = a.sort_by([(k, "ascending") for k in keys]), b.sort_by([(k, "ascending") for k in keys])
        if name == "traces":  # the reader's own account of the read
            a, b = a.drop_columns(["metadata"]), b.drop_columns(["metadata"])
        assert a.equals(b), name


# ---------------------------------------------------------------------------------------
# Generated documents: Kineto-shaped, with every oddity the readers must agree on.

_WS = st.sampled_from(["", " ", "\n    ", "\t", " " * 40])
_KEY_TEXT = st.sampled_from(
    ["ph", "cat", "name", "pid", "tid", "ts", "dur", "id", "bp", "s", "args", "cname", "ph\\u0020", "n\\u0061me"]
)
_ARG_KEYS = st.sampled_from(
    [
        "External id",
        "correlation",
        "stream",
        "device",
        "Input Dims",
        "Input type",
        "Concrete Inputs",
        "grid",
        "blocks per SM",
        "Collective name",
        "Call stack",
        "x",
        "y\\u00e9",
    ]
)
_STRINGS = st.sampled_from(
    ['"X"', '"cpu_op"', '""', '"a\\"b"', '"\\u00e9\\ud83d\\ude00"', '"\\udfff"', '"\\ud800x"', '"tab\\there"', '"é"', '"}, {"']
)
_NUMBERS = st.sampled_from(
    ["0", "-0", "1", "-7", "12.5", "1.500", "0.0000001", "1e3", "-2.5E-3", "9223372036854775807", "9223372036854775808",
     "123456789012345678901234567890", "1.0", "28.00926", "1719000000000.123", "0.1234567890123456789"]
)  # fmt: skip


def _json(value, ws):
    kind, x = value
    if kind == "lit":
        return x
    if kind == "list":
        return "[" + ws + ("," + ws).join(_json(v, ws) for v in x) + "]"
    return "{" + ws + ("," + ws).join(f"{k}:{ws}{_json(v, ws)}" for k, v in x) + "}"


_scalars = st.one_of(
    _STRINGS.map(lambda s: ("lit", s)),
    _NUMBERS.map(lambda s: ("lit", s)),
    st.sampled_from(["true", "false", "null"]).map(lambda s: ("lit", s)),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4).map(lambda v: ("list", v)),
        st.lists(st.tuples(_STRINGS, inner), max_size=3).map(lambda v: ("obj", v)),
    ),
    max_leaves=8,
)
_shape = st.lists(_NUMBERS.filter(lambda n: "." not in n and "e" not in n.lower()).map(lambda s: ("lit", s)), max_size=3)
_arg_values = st.one_of(
    _values,
    st.lists(_shape.map(lambda v: ("list", v)), max_size=3).map(lambda v: ("list", v)),
    st.lists(_STRINGS.map(lambda s: ("lit", s)), max_size=3).map(lambda v: ("list", v)),
)
_args = st.lists(st.tuples(_ARG_KEYS.map(lambda k: f'"{k}"'), _arg_values), max_size=6).map(lambda v: ("obj", v))
_event = st.lists(
    st.one_of(
        st.tuples(_KEY_TEXT.map(lambda k: f'"{k}"'), _values),
        st.tuples(st.just('"args"'), st.one_of(_args, _values)),
        st.tuples(st.just('"ph"'), st.just(("lit", '"X"'))),
    ),
    min_size=1,
    max_size=9,
).map(lambda v: ("obj", v))


@built
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(
    events=st.lists(_event, min_size=1, max_size=12),
    ws=_WS,
    tail=st.sampled_from(["", ', "deviceProperties": [{"id": 0}]', ', "x": 1e5', ', "k": "\\udfff"']),
    array=st.booleans(),
    piece=st.integers(16, 300),
)
def test_generated_documents_read_the_same(tmp_path_factory, events, ws, tail, array, piece):
    body = ("," + ws).join(_json(e, ws) for e in events)
    text = f"[{ws}{body}{ws}]" if array else f'{{"traceEvents":{ws}[{ws}{body}{ws}]{ws}{tail}}}'
    p = _write(tmp_path_factory.mktemp("gen"), text)
    want = outcome(python_table, p)
    for kw in ({"threads": 1}, {"threads": 2, "piece": piece}):
        got = outcome(native_table, p, **kw)
        if isinstance(want, str) or isinstance(got, str):
            assert got == want, kw
        else:
            assert got[1:] == want[1:], kw
            assert first_difference(want[0], got[0]) is None, (kw, first_difference(want[0], got[0]))
