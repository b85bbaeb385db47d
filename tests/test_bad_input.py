"""Bad input not covered by test_reader_cases.py: each case ingests with a counted warning in
traces.warnings, or fails with one line (file, offset where known, what was expected), exit 2,
and nothing written. The table of cases is docs/errors.md."""

import contextlib
import gzip
import io
import json
import random
import subprocess
import sys
import zlib

import pytest

import tracecols
from tracecols.cli import main
from tracecols.errors import Malformed, NotATrace, TraceError


def X(**k):
    return dict({"ph": "X", "name": "a", "cat": "cpu_op", "ts": 1, "dur": 1, "pid": 1, "tid": 1}, **k)


def doc(*events):
    return json.dumps({"traceEvents": list(events)}).encode()


def _launch(ts, corr):
    return X(cat="cuda_runtime", name="cudaLaunchKernel", ts=ts, args={"correlation": corr})


def _kernel(ts, corr):
    return X(cat="kernel", name="k", pid=0, tid=7, ts=ts, args={"correlation": corr, "device": 0, "stream": 7})


def cli(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in args])
    return rc, out.getvalue(), err.getvalue()


CLEAN = {  # case -> (file bytes, a word of the expected warning or None, check(trace))
    "ts beyond int64": (
        b'{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "ts": 99999999999999999999999, '
        b'"dur": 1, "pid": 1, "tid": 1}, {"ph": "X", "cat": "cpu_op", "name": "b", "ts": 5, "dur": 1, '
        b'"pid": 1, "tid": 1}]}',
        "'ts'",
        lambda t: (
            t.sql("select uid from slices").rows() == [(1,)]
            and "99999999999999999999999" in t.sql("select extra from events where uid = 0").item()
        ),
    ),
    "dur beyond int64": (
        b'{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "ts": 1, "dur": 18446744073709551616, "pid": 1, "tid": 1}]}',
        "'dur'",
        lambda t: t.sql("select dur_ns from slices").rows() == [(0,)],
    ),
    "missing ts": (
        doc({"ph": "X", "cat": "cpu_op", "name": "a", "dur": 1, "pid": 1, "tid": 1}, X(ts=3)),
        "'ts'",
        lambda t: t.sql("select uid from slices").rows() == [(1,)],
    ),
    "missing dur": (
        doc({"ph": "X", "cat": "cpu_op", "name": "a", "ts": 1, "pid": 1, "tid": 1}),
        "'dur'",
        lambda t: t.sql("select dur_ns from slices").rows() == [(0,)],
    ),
    "missing ph": (
        doc({"cat": "cpu_op", "name": "a", "ts": 1, "dur": 1, "pid": 1, "tid": 1}, X()),
        "without 'ph'",
        lambda t: t.sql("select count(*) from events").item() == 2 and t.sql("select count(*) from slices").item() == 1,
    ),
    "negative dur": (
        doc(X(ts=10, dur=-5), X(ts=10, dur=3, name="b")),
        "negative 'dur'",
        lambda t: (
            t.sql("select dur_ns from events order by uid").rows() == [(-5000,), (3000,)]
            and t.sql("select uid, dur_ns from slices order by uid").rows() == [(0, 0), (1, 3000)]
        ),
    ),
    "unknown ph": (
        doc(X(ph="Q"), X()),
        "unknown 'ph' ('Q')",
        lambda t: t.sql("select ph from events order by uid").rows() == [("Q",), ("X",)],
    ),
    "pid/tid as strings": (
        doc(X(pid="host 1", tid="main"), X(pid="host 1", tid="main", ts=1.5, dur=0.1, name="c")),
        None,
        lambda t: (
            t.sql("select depth from slices order by uid").rows() == [(0,), (1,)]
            and t.sql("select distinct pid_str, tid_str from events").rows() == [("host 1", "main")]
        ),
    ),
    "duplicate correlation ids": (
        doc(_launch(1, 5), _launch(3, 5), _kernel(5, 5)),
        "correlation id",
        lambda t: t.sql("select launch_uid from kernels").rows() == [(0,)],
    ),
    "odd metadata types": (
        json.dumps({"traceEvents": [X()], "deviceProperties": 1, "distributedInfo": [1], "baseTimeNanoseconds": 2**63}).encode(),
        None,
        lambda t: (
            t.sql("select base_time_ns, devices, rank from traces").rows() == [(None, None, None)]
            and t.sql("select count(*) from devices").item() == 0
        ),
    ),
    "events out of order": (
        doc(X(ts=50, dur=1, name="child"), X(ts=10, dur=100, name="parent")),
        None,
        lambda t: (
            t.sql("select name, depth, parent_uid from slices order by uid").rows() == [("child", 1, 1), ("parent", 0, None)]
        ),
    ),
}


@pytest.mark.parametrize("case", list(CLEAN))
def test_clean_ingest_with_a_counted_warning(tmp_path, case):
    content, warning, check = CLEAN[case]
    p = tmp_path / "t.json"
    p.write_bytes(content)
    t = tracecols.open(str(p))
    warnings = t.sql("select warnings from traces").item().to_list()
    if warning is None:
        assert warnings == []
    else:
        assert len(warnings) >= 1 and any(warning in w and w[0].isdigit() for w in warnings), warnings
    assert check(t), case
    if warning is not None:
        rc, out, err = cli("info", p)
        assert rc == 0 and warning in out


def test_real_trace_has_no_warnings():
    from conftest import DATA_TRACE

    assert tracecols.open(str(DATA_TRACE)).sql("select warnings from traces").item().to_list() == []


def _corrupt_gzip_middle():
    good = gzip.compress(doc(*[X(ts=i, name=f"op{i % 97}") for i in range(20000)]))
    bad = bytearray(good)
    m = len(bad) // 2
    for i in range(m, m + 64):
        bad[i] ^= 0x55
    return bytes(bad)


FAIL = {  # case -> (file bytes, error class, words of the message, offset expected)
    "Perfetto protobuf": (b"\x0a\x10\x0a\x0e\x08\x01\x12\x0atrack_name" + b"\x00" * 20, NotATrace, "Perfetto", False),
    "other binary file": (b"\x00\x01\x02\x03PK binary", NotATrace, "binary data", False),
    "an event that is not an object": (
        b'{"traceEvents": [{"ph": "X", "ts": 1}, 0]}',
        Malformed,
        "event 1 of traceEvents is a JSON number, expected an object",
        False,
    ),
    "corrupt gzip in the middle": (_corrupt_gzip_middle(), Malformed, "corrupt gzip data", True),
}


@pytest.mark.parametrize("case", list(FAIL))
def test_one_line_error_exit_2_nothing_written(tmp_path, case):
    content, cls, words, has_offset = FAIL[case]
    p = tmp_path / "t.json"
    p.write_bytes(content)
    with pytest.raises(cls) as e:
        tracecols.open(str(p))
    line = e.value.line()
    assert str(p) in line and words in line and "\n" not in line
    assert (e.value.offset is not None) == has_offset
    for args in (
        ("info", p),
        ("ingest", p, "-o", tmp_path / "lake", "-j", "1"),
        ("sql", p, "select 1", "--format", "csv", "-o", tmp_path / "r.csv"),
    ):
        rc, out, err = cli(*args)
        assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1, (args, err)
        assert "Traceback" not in err and str(p) in err
    assert sorted(x.name for x in tmp_path.iterdir()) == ["t.json"]


def test_errors_are_trace_errors():
    assert all(issubclass(c, TraceError) for _, c, _, _ in FAIL.values())


# ---------------------------------------------------------------------------------------
# Damaged gzip: the parser may see garbage before zlib notices (or the CRC-32 check at the
# end fails after the parse error), so the error names the gzip damage, not the JSON symptom.


def _real_gz():
    from conftest import DATA_TRACE

    return DATA_TRACE.read_bytes()


def _damaged(kind, frac, seed):
    b = bytearray(_real_gz())
    rng = random.Random(seed)
    at = int(len(b) * frac)
    if kind == "flip":  # overwrite 16 bytes with random ones
        for i in range(at, at + 16):
            b[i] ^= rng.randrange(1, 256)
    else:  # a zeroed 4 KB block
        b[at : at + 4096] = bytes(4096)
    return bytes(b)


def _fails_cleanly(tmp_path, content, words, name="t.json.gz", all_commands=False):
    """The one-line Malformed error for `content`, checked through the API and the CLI."""
    p = tmp_path / name
    p.write_bytes(content)
    with pytest.raises(Malformed) as e:
        tracecols.open(str(p))
    line = e.value.line()
    assert str(p) in line and "\n" not in line and e.value.offset is not None
    assert all(w in line for w in words), line
    commands = [("info", p)]
    if all_commands:
        commands.append(("ingest", p, "-o", tmp_path / "lake", "-j", "1"))
    for args in commands:
        rc, out, err = cli(*args)
        assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1, (args, err)
        assert "Traceback" not in err and str(p) in err and all(w in err for w in words), err
    assert sorted(x.name for x in tmp_path.iterdir()) == [name]
    return line


@pytest.mark.parametrize("kind", ["flip", "zero4k"])
@pytest.mark.parametrize("frac,seed", [(0.05, 1), (0.3, 2), (0.5, 3), (0.7, 4), (0.9, 5)])
def test_gzip_corrupt_in_the_middle_says_corrupt_gzip(tmp_path, kind, frac, seed):
    # zeroing 4 KB at 70% of this trace used to crash the process (see test_overlong_digit_run)
    line = _fails_cleanly(
        tmp_path,
        _damaged(kind, frac, seed),
        ["malformed trace: corrupt gzip data: ", "(at compressed byte "],
        all_commands=frac == 0.5,
    )
    assert "lexical error" not in line and "parse error" not in line


@pytest.mark.parametrize(
    "byte,reason",
    [(-8, "incorrect data check"), (-5, "incorrect data check"), (-4, "incorrect length check"), (-1, "incorrect length check")],
)
def test_gzip_bad_trailer_says_which_check_failed(tmp_path, byte, reason):
    b = bytearray(_real_gz())
    b[byte] ^= 0x01
    n = len(b)
    line = _fails_cleanly(tmp_path, bytes(b), ["corrupt gzip data: " + reason])
    # zlib notices after reading the 4-byte field: CRC-32 at n-8..n-5, length at n-4..n-1
    assert f"(at compressed byte {n - 5 if 'data' in reason else n - 1} / decompressed byte " in line


@pytest.mark.parametrize("cut", [3, 10, 40, 0.01, 0.37, 0.5, 0.999, -9, -8, -4, -1])
def test_gzip_truncated_says_truncated_gzip_file(tmp_path, cut):
    gz = _real_gz()
    n = cut if isinstance(cut, int) and cut > 0 else len(gz) + cut if isinstance(cut, int) else int(len(gz) * cut)
    line = _fails_cleanly(
        tmp_path,
        gz[:n],
        ["malformed trace: truncated gzip file: ", f"(at compressed byte {n} / decompressed byte "],
        all_commands=cut == 0.5,
    )
    assert "corrupt" not in line and "end-of-stream marker" in line


@pytest.fixture(params=["isal", "standard library"])
def inflater(request, monkeypatch):
    """gzip input read with ISA-L (installed) and with the standard modules it falls back to."""
    from tracecols.read import source, split

    if request.param == "isal":
        assert source.fast_zlib is not zlib and split.fast_zlib is source.fast_zlib
    else:
        monkeypatch.setattr(source, "fast_gzip", gzip)
        monkeypatch.setattr(source, "fast_zlib", zlib)
        monkeypatch.setattr(split, "fast_zlib", zlib)
    return request.param


@pytest.mark.parametrize("parts", [1, 2])
def test_gzip_is_read_and_checked_the_same_by_either_inflater(tmp_path, inflater, parts, monkeypatch):
    """Streamed (one part) or inflated at once and cut (two): the events of the plain JSON, and
    for damaged or truncated bytes the same one-line error."""
    from tracecols.pipeline.parse import read_events_into
    from tracecols.read import split

    monkeypatch.setenv("TRACECOLS_READER", "python")  # the Python reader's inflaters and processes
    monkeypatch.setattr(split, "MIN_BYTES", 0)
    plain, gz, damaged, truncated = (tmp_path / d for d in ("plain.json", "t.json.gz", "damaged", "truncated"))
    plain.write_bytes(gzip.decompress(_real_gz()))
    gz.write_bytes(_real_gz())
    want, _ = read_events_into([str(plain)], 0, False, parts)
    got, [info] = read_events_into([str(gz)], 0, False, parts)
    assert info["parts"] == parts and got.equals(want)
    damaged.mkdir()
    _fails_cleanly(damaged, _damaged("zero4k", 0.5, 3), ["malformed trace: corrupt gzip data: ", "(at compressed byte "])
    truncated.mkdir()
    n = len(_real_gz()) // 2
    _fails_cleanly(truncated, _real_gz()[:n], ["truncated gzip file: ", f"(at compressed byte {n} / decompressed byte "])


def test_gzip_sound_but_json_bad_keeps_the_json_message(tmp_path):
    content = gzip.compress(b'{"traceEvents": [{"ph": "X", "ts": 1} {"ph": "X"}]}')
    line = _fails_cleanly(tmp_path, content, ["malformed trace: parse error"])
    assert "gzip" not in line.split(": ", 1)[1]


def test_gzip_followed_by_junk_is_corrupt_and_zero_padding_is_fine(tmp_path):
    gz = gzip.compress(doc(X()))
    line = _fails_cleanly(
        tmp_path, gz + b"junk", ["corrupt gzip data: ", "not another gzip member", f"(at compressed byte {len(gz)} / "]
    )
    assert "truncated" not in line
    p = tmp_path / "padded.json.gz"
    p.write_bytes(gz + bytes(100) + gzip.compress(b"") + bytes(3))
    assert tracecols.open(str(p)).table("events").num_rows == 1


def test_gzip_errors_in_the_head_and_in_an_execution_trace(tmp_path):
    # damage before traceEvents (the metadata head) and in an Execution Trace (same item_stream)
    meta = {"deviceProperties": [{"id": i, "name": "x" * 200} for i in range(300)]}
    gz = bytearray(gzip.compress(json.dumps(dict(meta, traceEvents=[X()])).encode()))
    gz[len(gz) // 3 : len(gz) // 3 + 64] = bytes(64)
    _fails_cleanly(tmp_path, bytes(gz), ["gzip"], name="head.json.gz")
    from tracecols.read.execution_trace import read_execution_trace

    et = {
        "schema": "1.0.1",
        "pid": 1,
        "time": "x",
        "start_ts": 1,
        "nodes": [{"id": i, "name": f"op{i}", "parent": 0, "inputs": {}, "outputs": {}} for i in range(5000)],
    }
    gz = gzip.compress(json.dumps(et).encode())
    p = tmp_path / "et.json.gz"
    p.write_bytes(gz[: len(gz) // 2])
    with pytest.raises(Malformed, match="truncated gzip file"):
        read_execution_trace(str(p))


@pytest.mark.parametrize("gz", [False, True])
def test_overlong_digit_run_is_an_error_not_a_crash(tmp_path, gz):
    # ijson's C backend crashes the process on an integer longer than Python converts (4300
    # digits), so the run is refused as it streams by; in a subprocess, in case it ever crashes
    limit = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0
    if not limit:
        pytest.skip("no int conversion limit in this Python")
    content = b'{"traceEvents": [' + b'{"ph": "X", "ts": 1, "dur": 1, "pid": 1, "tid": 1},' * 5000
    at = len(content) + len(b'{"ph": "X", "ts": ')
    content += b'{"ph": "X", "ts": 1' + b"7" * limit + b', "dur": 1}]}'
    p = tmp_path / "t.json"
    p.write_bytes(gzip.compress(content) if gz else content)
    r = subprocess.run(
        [sys.executable, "-c", "import sys; from tracecols.cli import main; sys.exit(main(sys.argv[1:]))", "info", str(p)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r
    assert str(p) in r.stderr and f"near byte {at})" in r.stderr and "more than" in r.stderr and "digits" in r.stderr
    ok = content.replace(b"1" + b"7" * limit, b"1" + b"7" * (limit - 1))  # at the limit: read
    p.write_bytes(ok)
    assert tracecols.open(str(p)).table("events").num_rows == 5001


# ---------------------------------------------------------------------------------------
# tracecols sql: read-only over its inputs, bad queries in one line.


def _snapshot(d):
    return {p: p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("sqlro")
    trace = d / "t.json"
    trace.write_bytes(doc(_launch(1, 5), _kernel(5, 5), X(ts=2, dur=1)))
    saved = tracecols.open(str(trace)).save(d / "saved")
    assert cli("ingest", trace, "-o", d / "lake", "-j", "1")[0] == 0
    return d, [trace, saved, d / "lake"]


@pytest.mark.parametrize(
    "query,expect",
    [
        ("copy (select * from events) to '{target}' (format parquet)", "COPY"),
        ("copy events to '{target}'", "COPY"),
        ("select 1; copy (select 1) to '{target}'", "COPY"),
        ("export database '{dir}'", "EXPORT"),
        ("attach '{dir}/x.duckdb' as x", "ATTACH"),
        ("set enable_external_access = true", "SET"),
        ("install httpfs", ""),
    ],
)
def test_sql_cannot_write_its_inputs(outputs, query, expect):
    d, sources = outputs
    before = _snapshot(d)
    for src in sources:
        target = next(iter(p for p in before if p.suffix == ".parquet" and str(src) in str(p)), src)
        rc, out, err = cli("sql", src, query.format(target=target, dir=d))
        assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1, err
        assert "unsupported" in err and expect in err and "Traceback" not in err
    assert _snapshot(d) == before


def test_sql_create_table_stays_in_memory(outputs):
    d, sources = outputs
    before = _snapshot(d)
    for src in sources:
        rc, out, err = cli(
            "sql",
            src,
            "create table k2 as select * from kernels; insert into k2 select * from k2; select count(*) as n from k2",
            "--format",
            "csv",
        )
        assert rc == 0 and out.split() == ["n", "2"], err
        rc, out, err = cli("sql", src, "delete from events")
        assert rc == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert _snapshot(d) == before


@pytest.mark.parametrize(
    "query,expect",
    [
        ("select * from trace", 'Did you mean "traces"'),
        ("select nme from events", 'Candidate bindings: "name"'),
        ("select * from events where", "syntax error"),
    ],
)
def test_bad_query_gives_duckdb_message_and_hint_on_one_line(outputs, query, expect):
    d, sources = outputs
    rc, out, err = cli("sql", sources[0], query)
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert expect in err and "query failed" in err and str(sources[0]) in err
