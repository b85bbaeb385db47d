"""What the commands show of a trace's strings: control characters escaped, forged lines kept
on their own row, names of megabytes cut (the tables keep them whole); and the one table
style with units (critical-path, diff, sql and info as analyze draws them)."""

import contextlib
import io
import json

import polars as pl
import pytest

from tracecols.cli import main
from tracecols.cli.table import Col, render
from tracecols.printable import escape, escape_json, printable
from tracecols.report.units import column_format

FORGED = "\r\nFAKE: line 99.999 ms 50.0%"
OPS = [
    "aten::clear\x1b[2J\x1b[H",
    "aten::title\x1b]0;pwned\x07",
    "aten::forge" + FORGED,
    "aten::bidi\u202eevil\u2066x\u2069",
    "aten::c1\x9b31m\x85\x7f\x00",
]
KERNELS = ["kern\x1b[31mred", "kern\x07bell\r\nFAKE: kernel 50.0%", "kern\u202eedir"]
ANNOTATION = "fwd\u202e\x1b[2Jann\r\nFAKE: ann 50.0%"
HUGE = "aten::huge_" + "x" * (10 * 1024 * 1024)  # 10,485,771 characters


def _trace(path, ops, kernel_us=30):
    """ProfilerStep#1 > ANNOTATION > one op per name, each launching one kernel (30 µs) on stream 7."""
    ev = [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 1000},
        {"ph": "X", "cat": "user_annotation", "name": ANNOTATION, "pid": 1, "tid": 1, "ts": 1, "dur": 990},
    ]
    for i, name in enumerate(ops):
        t0, corr = 10 + 100 * i, i + 1
        ev += [
            {
                "ph": "X",
                "cat": "cpu_op",
                "name": name,
                "pid": 1,
                "tid": 1,
                "ts": t0,
                "dur": 50,
                "args": {"Input Dims": [[2, 2]], "Input type": ["float\x1b[2J"]},
            },
            {
                "ph": "X",
                "cat": "cuda_runtime",
                "name": "cudaLaunchKernel",
                "pid": 1,
                "tid": 1,
                "ts": t0 + 5,
                "dur": 10,
                "args": {"correlation": corr},
            },
            {
                "ph": "X",
                "cat": "kernel",
                "name": KERNELS[i % len(KERNELS)],
                "pid": 0,
                "tid": 7,
                "ts": t0 + 20,
                "dur": kernel_us,
                "args": {"device": 0, "stream": 7, "correlation": corr},
            },
        ]
    doc = {
        "schemaVersion": 1,
        "traceEvents": ev,
        "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}],
        "distributedInfo": {"rank": 0, "backend": "nccl\x1b[2J"},
    }
    path.write_text(json.dumps(doc))
    return path


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile")
    return {
        "a": _trace(d / "a.json", OPS),
        "b": _trace(d / "b.json", OPS, kernel_us=60),
        "huge": _trace(d / "huge.json", OPS[:1] + [HUGE]),
        "dir": d,
    }


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def cli(*args, tty=False):
    out, err = (_Terminal(), _Terminal()) if tty else (io.StringIO(), io.StringIO())
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in args])
    return rc, out.getvalue(), err.getvalue()


def assert_safe(text):
    """Nothing but printable characters between the newlines the command wrote itself, and no
    line that a trace's name started."""
    lines = text.split("\n")
    bad = [ln[:120] for ln in lines if not ln.isprintable()]
    assert not bad, bad
    assert not [ln for ln in lines if ln.lstrip().startswith("FAKE")]


COMMANDS = {
    "info": lambda t, d: ["info", t["a"]],
    "analyze": lambda t, d: ["analyze", t["a"]],
    "analyze json": lambda t, d: ["analyze", t["a"], "--format", "json"],
    "tree": lambda t, d: ["tree", t["a"], "--uid", 0, "--fields", "Input Dims,Input type"],
    "tree parents": lambda t, d: ["tree", t["a"], "--name", OPS[2], "--parents"],
    "diff kernel": lambda t, d: ["diff", t["a"], t["b"]],
    "diff op": lambda t, d: ["diff", t["a"], t["b"], "--by", "op"],
    "diff callpath": lambda t, d: ["diff", t["a"], t["b"], "--by", "callpath"],
    "critical-path": lambda t, d: ["critical-path", t["a"]],
    "critical-path segments": lambda t, d: ["critical-path", t["a"], "--segments"],
    "sql": lambda t, d: ["sql", t["a"], "select name, cat, dur_ns, args from events"],
    "sql json": lambda t, d: ["sql", t["a"], "select name, args from events", "--format", "json"],
    "sql error": lambda t, d: ["sql", t["a"], 'select * from "no\x1b[2Jtable\r\nFAKE: x"'],
    "stacks": lambda t, d: ["stacks", t["a"], "-o", d / "s.folded"],
    "report": lambda t, d: ["report", t["a"], "-o", d / "r.html"],
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_no_control_character_reaches_the_terminal(traces, tmp_path, name):
    rc, out, err = cli(*COMMANDS[name](traces, tmp_path))
    assert rc == (2 if name == "sql error" else 0), err
    assert_safe(out)
    assert_safe(err)


def test_names_read_escaped(traces):
    rc, out, _ = cli("analyze", traces["a"], "-q")
    assert rc == 0
    for shown in (
        r"aten::clear\x1b[2J\x1b[H",
        r"aten::title\x1b]0;pwned\x07",
        r"aten::forge\r\nFAKE: line 99.999 ms 50.0%",
        r"aten::bidi\u202eevil\u2066x\u2069",
        r"aten::c1\x9b31m\x85\x7f\x00",
        r"kern\x1b[31mred",
    ):
        assert shown in out
    rc, out, _ = cli("tree", traces["a"], "--name", OPS[2], "--parents", "-q")
    assert out.splitlines()[1:] == [
        r"  UID 1 [user_annotation] fwd\u202e\x1b[2Jann\r\nFAKE: ann 50.0%",
        r"    UID 8 [cpu_op] aten::forge\r\nFAKE: line 99.999 ms 50.0%",
        "        Input Dims: [[2, 2]]",
        r"        Input type: ['float\x1b[2J']",
    ]
    rc, out, _ = cli("info", traces["a"], "-q")
    assert r"backend nccl\x1b[2J" in out
    rc, _, err = cli("sql", traces["a"], 'select * from "no\x1b[2Jtable"')
    assert rc == 2 and r"no\x1b[2Jtable" in err


def test_sql_csv_is_data_in_a_pipe_and_escaped_on_a_terminal(traces):
    q = "select name from events where cat = 'cpu_op' order by ts_ns"
    rc, out, _ = cli("sql", traces["a"], q, "--format", "csv")
    assert rc == 0 and "aten::clear\x1b[2J\x1b[H" in out  # what a script reads: the name as it is
    rc, out, _ = cli("sql", traces["a"], q, "--format", "csv", tty=True)
    assert rc == 0 and r"aten::clear\x1b[2J\x1b[H" in out
    assert_safe(out.replace('"\\r\\n', ""))
    assert out.splitlines()[0] == "name" and len(out.splitlines()) == len(OPS) + 1


def test_sql_json_escapes_but_keeps_the_data(traces):
    rc, out, _ = cli("sql", traces["a"], "select name from events where cat = 'cpu_op' order by ts_ns", "--format", "json")
    assert rc == 0
    assert_safe(out)
    assert [json.loads(ln)["name"] for ln in out.splitlines()] == OPS


def test_a_huge_name_is_cut_on_screen_and_in_the_report_but_kept_in_the_tables(traces, tmp_path):
    for args in (["analyze", traces["huge"], "-o", tmp_path / "a"], ["tree", traces["huge"], "--uid", 0]):
        rc, out, err = cli(*args)
        assert rc == 0, err
        assert_safe(out)
        assert len(out) < 20_000
        assert "… (10,485,771 chars)" in out
    names = pl.read_parquet(tmp_path / "a" / "slices.parquet")["name"].to_list()
    assert HUGE in names  # the table keeps the whole name
    rc, out, err = cli("report", traces["huge"], "-o", tmp_path / "r.html")
    assert rc == 0, err
    html = (tmp_path / "r.html").read_text()
    assert len(html) < 1_000_000
    assert "(10,485,771 chars)" in html
    assert all(c == "\n" or c.isprintable() for c in html)
    rc, out, _ = cli("sql", traces["huge"], "select name from slices where name like 'aten::huge%'")
    assert rc == 0 and len(out) < 2_000 and "… (10,485,771 chars)" in out


def test_report_labels_are_escaped(traces, tmp_path):
    rc, _, err = cli("report", traces["a"], "-o", tmp_path / "r.html")
    assert rc == 0, err
    html = (tmp_path / "r.html").read_text()
    assert all(c == "\n" or c.isprintable() for c in html)
    assert r"aten::forge\r\nFAKE: line 99.999 ms 50.0%" in html
    assert r"kern\x1b[31mred" in html


def test_stacks_lines_are_one_stack_each(traces, tmp_path):
    rc, _, err = cli("stacks", traces["a"], "-o", tmp_path / "s.folded")
    assert rc == 0, err
    lines = (tmp_path / "s.folded").read_text().splitlines()
    assert all(ln.isprintable() for ln in lines)
    # the stacks view writes CR and LF as spaces (and `;` as `,`); the rest is escaped
    assert r"ProfilerStep#1;fwd\u202e\x1b[2Jann  FAKE: ann 50.0%;aten::forge  FAKE: line 99.999 ms 50.0% 40" in lines
    assert r"ProfilerStep#1;fwd\u202e\x1b[2Jann  FAKE: ann 50.0%;aten::title\x1b]0,pwned\x07 40" in lines


def test_critical_path_and_diff_are_tables_with_units(traces):
    for args in (
        ["critical-path", traces["a"]],
        ["critical-path", traces["a"], "--segments"],
        ["diff", traces["a"], traces["b"]],
        ["diff", traces["a"], traces["b"], "--by", "op"],
    ):
        rc, out, err = cli(*args, "-q")
        assert rc == 0, err
        for repr_mark in ("shape:", "┆", "╞", "---"):
            assert repr_mark not in out, (args, repr_mark)
        dtypes = {"i32", "i64", "f64", "str", "bool", "null"}
        assert not [ln for ln in out.splitlines() if ln.split() and set(ln.split()) <= dtypes]
        assert "µs" in out and "%" in out
    rc, out, _ = cli("diff", traces["a"], traces["b"], "-q")
    # kern\x1b[31mred: two launches of 30 µs in A, of 60 µs in B; one sample a side (no
    # ProfilerStep), so the shift is the whole change and no test can call it beyond noise
    row = [ln.split() for ln in out.splitlines() if r"kern\x1b[31mred" in ln]
    assert row == [
        ["both", "0", "0", r"kern\x1b[31mred", "2", "2", "60.000", "µs", "120.000", "µs", "+60.000", "µs", "+100.0%"]
        + ["+100.0%", "-", "?"]
    ]
    rc, out, _ = cli("critical-path", traces["a"], "-q")
    header = out.splitlines()[0].split()
    assert header[:5] == ["trace_id", "rank", "step", "window_uid", "bound_by"]
    assert "path_ns" in header


def test_sql_table_style_and_units(traces):
    rc, out, _ = cli("sql", traces["a"], "select name, dur_ns, ts_ns from events where cat = 'kernel' order by ts_ns", "-q")
    lines = out.splitlines()
    assert lines[0].split() == ["name", "dur_ns", "ts_ns"]
    assert lines[1].split() == [r"kern\x1b[31mred", "30.000", "µs", "30000"]  # a duration with its unit, a time as is
    assert lines[-1] == f"  ({len(OPS)} rows)"
    rc, out, _ = cli("sql", traces["a"], "select uid from events", "--max-rows", "2", "-q")
    assert out.splitlines()[-1] == "  (first 2 rows; raise --max-rows for more)"


def test_lake_commands_escape(traces, tmp_path):
    lake = tmp_path / "lake"
    src = tmp_path / "in"
    src.mkdir()
    for k in ("a", "b"):
        (src / f"{k}.json").write_bytes(traces[k].read_bytes())
    rc, out, err = cli("ingest", src, "-o", lake, "-j", "1")
    assert rc == 0, err
    for args in (["analyze", lake], ["sql", lake, "select name from kernels"], ["critical-path", lake]):
        rc, out, err = cli(*args)
        assert rc == 0, err
        assert_safe(out)
        assert_safe(err)


@pytest.mark.parametrize(
    "text, shown",
    [
        ("plain aten::mm", "plain aten::mm"),
        ("a\x1b[2Jb", r"a\x1b[2Jb"),
        ("bel\x07 cr\r lf\n tab\t", r"bel\x07 cr\r lf\n tab\t"),
        ("del\x7f c1\x9b nel\x85", r"del\x7f c1\x9b nel\x85"),
        ("rlo\u202e lri\u2066 zw\u200b ls\u2028 bom\ufeff", r"rlo\u202e lri\u2066 zw\u200b ls\u2028 bom\ufeff"),
        ("tag\U000e0041", r"tag\U000e0041"),
        ("lone\ud800", r"lone\ud800"),
        ("back\\slash µs ünïcødé 名前", "back\\slash µs ünïcødé 名前"),
    ],
)
def test_escape(text, shown):
    assert escape(text) == shown


def test_printable_cuts():
    assert printable(None) == ""
    assert printable("abcdef", 6) == "abcdef"
    assert printable("abcdefg", 6) == "abcde…"
    assert printable("abcdefg", 6, keep="end") == "…cdefg"
    assert printable("a" * 1500, 30) == "a" * 15 + "… (1,500 chars)"  # 30 characters in all
    assert printable("a" * 1500, 30, keep="end") == "(1,500 chars) …" + "a" * 15
    assert printable("ab\x1bcd", 6) == "ab…"  # an escape is kept whole or not at all
    assert printable("\x1b" * 3, 12) == r"\x1b\x1b\x1b"


def test_escape_json_is_the_same_data():
    text = json.dumps({"n": "a\u202eb\x85c\U000e0041\u2028"}, ensure_ascii=False) + "\n"
    out = escape_json(text)
    assert out.isascii() and json.loads(out) == json.loads(text)
    assert out == '{"n": "a\\u202eb\\u0085c\\udb40\\udc41\\u2028"}\n'


@pytest.mark.parametrize(
    "column, value, shown",
    [
        ("dur_ns", 1_234_000, "1.234 ms"),
        ("path_ns", 43_283_339_000, "43.283 s"),
        ("ts_ns", 1_695_835_542_515_301_000, "1695835542515301000"),
        ("window_start_ns", 5_000, "5000"),
        ("start_skew_ns", 5_000, "5.000 µs"),
        ("pct_of_path", 99.833203, "99.8%"),
        ("share_pct", 0.0, "0.0%"),
        ("total_global_mem_bytes", 85_520_809_984, "79.6 GB"),
        ("achieved_tflops_per_s", 312.456, "312.46 TFLOP/s"),
        ("peak_tb_per_s", 3.35, "3.350 TB/s"),
        ("busbw_gb_per_s", 97.224538, "97.22 GB/s"),
        ("bytes_per_s", 2.5e9, "2.50 GB/s"),
        ("score", 97.224538, "97.225"),
        ("count", 12345, "12345"),
        ("dur_ns", None, "-"),
    ],
)
def test_column_units(column, value, shown):
    assert column_format(column)(value) == shown


def test_table_layout():
    cols = [Col("name", width=8), Col("n", right=True), Col("path", width=6, keep="end")]
    text = render(cols, [("short", 1, "a > b"), ("a\x1b[2Jlonger", 100, "x > y > z")], title="T\x07")
    assert text.splitlines() == [
        r"T\x07",
        "  name        n  path",
        "  short       1  a > b",
        r"  a\x1b[2…  100  …y > z",  # cut to 8 characters, escapes whole
    ]
    assert render(cols, [], title="T") == "T\n  (none)\n"
