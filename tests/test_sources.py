"""Traces on the command line: `-` for standard input (gzip or not), quoted globs, several
paths, and a clear line from commands that take one trace."""

import contextlib
import gzip
import io
import json
import subprocess
import sys

from conftest import CORPUS

import tracecols
from tracecols.cli import main

PAIR = CORPUS / "HolisticTraceAnalysis/tests/data/trace_compare"
BASE = PAIR / "base/base.json.gz"


def cli(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in args])
    return rc, out.getvalue(), err.getvalue()


def _run(args, stdin):
    return subprocess.run([sys.executable, "-m", "tracecols", *map(str, args)], input=stdin, capture_output=True, timeout=300)


def test_standard_input_gzip_or_not():
    n = tracecols.open(str(BASE)).sql("select count(*) from events").item()
    packed = BASE.read_bytes()
    for data in (packed, gzip.decompress(packed)):
        r = _run(["sql", "-", "select count(*) as n from events", "--format", "json"], data)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout) == {"n": n}


def test_standard_input_that_is_no_trace_is_one_line():
    r = _run(["info", "-"], b'{"traceEvents": {}}')
    assert r.returncode == 2 and r.stderr.decode().count("\n") == 1
    assert "'traceEvents' is a JSON object, expected an array" in r.stderr.decode()


def test_a_quoted_glob_is_every_file_it_matches_in_order():
    files = sorted(str(p) for p in PAIR.glob("*/*.json.gz"))
    assert len(files) == 2
    rc, out, err = cli("sql", str(PAIR / "*" / "*.json.gz"), "select trace_id, path from traces order by 1", "--format", "json")
    assert rc == 0, err
    assert [json.loads(line)["path"] for line in out.splitlines()] == files
    rc, out, err = cli("analyze", *files, "--format", "json")
    assert rc == 0 and [h["trace_id"] for h in json.loads(out)["headline"]] == [0, 1]


def test_one_trace_commands_say_so_and_empty_globs_fail():
    rc, _, err = cli("tree", str(PAIR / "*" / "*.json.gz"), "--name", "x")
    assert rc == 2 and err.count("\n") == 1 and "tree takes one trace, and these name 2" in err
    rc, _, err = cli("info", str(PAIR / "nothing*.json"))
    assert rc == 2 and "matches no file" in err
