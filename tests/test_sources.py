"""Traces on the command line: `-` for standard input (gzip or not), quoted globs, several
paths, and a clear line from commands that take one trace."""

import contextlib
import gzip
import io
import json
import os
import shutil
import subprocess
import sys

from conftest import CORPUS, DATA_TRACE

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


def _tree_with_links(tmp_path):
    """runs/{a,b}/ hold a trace each, ext/ (outside runs/) a third; runs/ holds two symlink
    loops, a second link to a trace, and two links to ext/."""
    runs, ext = tmp_path / "runs", tmp_path / "ext"
    for d in (runs / "a", runs / "b", ext):
        d.mkdir(parents=True)
    shutil.copy(DATA_TRACE, runs / "a" / "rank0.json.gz")
    shutil.copy(DATA_TRACE, runs / "b" / "rank1.json.gz")
    shutil.copy(DATA_TRACE, ext / "rank2.json.gz")
    (runs / "a" / "up").symlink_to("..")  # a loop through the parent
    (runs / "b" / "self").symlink_to(".")  # a loop to itself
    (runs / "a_rank0.json.gz").symlink_to("a/rank0.json.gz")  # the same file by a second path
    (runs / "ext1").symlink_to("../ext")  # out of the tree: followed once
    (runs / "ext2").symlink_to("../ext")  # the same folder again
    return runs


def test_a_glob_follows_no_loop_and_reads_each_file_once(tmp_path):
    runs = _tree_with_links(tmp_path)
    rc, out, err = cli("sql", str(runs / "**" / "*.json.gz"), "select path from traces order by trace_id", "--format", "json")
    assert rc == 0, err
    paths = [json.loads(line)["path"] for line in out.splitlines()]
    assert sorted(os.path.basename(p) for p in paths) == ["rank0.json.gz", "rank1.json.gz", "rank2.json.gz"]
    assert str(runs / "a" / "rank0.json.gz") in paths  # the real path, not the link beside it
    notes = err.splitlines()
    assert len(notes) == 1, err
    assert notes[0].startswith("tracecols: skipped 2 symlinked folder(s) leading back to a folder above them (")
    # ext2 (the folder ext1 reached) and runs/a_rank0.json.gz (the file a/ holds)
    assert "2 path(s) to a file or folder already reached by another path" in notes[0]
    rc, out, err = cli("sql", str(runs / "**" / "*.json.gz"), "select count(*) as n from traces", "--format", "json", "-q")
    assert rc == 0 and json.loads(out) == {"n": 3} and err == ""


def test_a_file_named_twice_is_read_once(tmp_path):
    runs = _tree_with_links(tmp_path)
    rc, out, err = cli(
        "sql", runs / "a" / "rank0.json.gz", runs / "a_rank0.json.gz", "select count(*) as n from traces", "--format", "json"
    )
    assert rc == 0 and json.loads(out) == {"n": 1}
    link = runs / "a_rank0.json.gz"
    assert (
        err
        == f"tracecols: skipped 1 path(s) to a file or folder already reached by another path ({link}): each file is read once\n"
    )


def test_ingest_of_a_folder_follows_no_loop_and_says_so(tmp_path):
    runs = _tree_with_links(tmp_path)
    r = _run(["ingest", runs, "-o", tmp_path / "lake", "-j", "1"], b"")
    assert r.returncode == 0, r.stderr
    m = json.loads((tmp_path / "lake" / "_tracecols.json").read_text())
    assert sorted(os.path.relpath(t["path"], runs) for t in m["traces"]) == [
        "a/rank0.json.gz",
        "b/rank1.json.gz",
        "ext1/rank2.json.gz",  # a symlinked folder out of the tree is followed (once)
    ]
    notes = [ln for ln in r.stderr.decode().splitlines() if "symlinked" in ln]
    assert len(notes) == 1 and "skipped 2 symlinked folder(s) leading back" in notes[0]
    assert "2 path(s) to a file or folder already reached by another path" in notes[0]


def test_glob_without_links_matches_what_python_glob_finds(tmp_path):
    import glob

    from tracecols.fleet.walk import Walk

    for rel_path in ("x.json", "a/y.json", "a/b/z.json", "a/.h/w.json", ".top/v.json", "a/b/c/u.json.gz", "a/n.txt"):
        (tmp_path / rel_path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel_path).write_text("{}")
    for pat in ("**/*.json", "**", "a/**/*.json", "**/b/*", "a/**", "**/.h/*.json", "*/*.json*", "a/**/c/*"):
        p = str(tmp_path / pat)
        assert sorted(Walk().glob(p)) == sorted(glob.glob(p, recursive=True)), pat
