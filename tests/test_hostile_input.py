"""Hostile and odd inputs, and impossible outputs: one line on stderr, exit code 2, nothing
written, memory bounded by the input; and no litter left by a run that was killed."""

import contextlib
import gzip
import hashlib
import io
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import CORPUS, DATA_TRACE

from tracecols.cli import main
from tracecols.store import atomic


def cli(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in args])
    return rc, out.getvalue(), err.getvalue()


def _deep(n, where="args"):
    nest = "[" * n + "]" * n
    if where == "head":
        return (
            '{"meta": ' + nest + ', "traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 1, "pid": 1, "tid": 1}]}'
        ).encode()
    return (
        '{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 1, "pid": 1, "tid": 1, "args": {"x": ' + nest + "}}]}"
    ).encode()


# file -> (content, what the one line must say)
BAD = {
    "events-object.json": (b'{"traceEvents": {"a": 1}}', "malformed trace: 'traceEvents' is a JSON object, expected an array"),
    "events-string.json": (b'{"traceEvents": "x", "schemaVersion": 1}', "'traceEvents' is a JSON string, expected an array"),
    "bare-empty-array.json": (b"[]", "empty trace: no events"),
    "empty-events.json": (b'{"schemaVersion": 1, "traceEvents": []}', "empty trace: no events"),
    "no-events-key.json": (b'{"schemaVersion": 1, "deviceProperties": []}', "no 'traceEvents' array"),
    "execution_details.json": (
        json.dumps([{"file": "bs_32_rank0.json.gz", "batch_size": 32, "mode": "decode"}]).encode(),
        "not a PyTorch profiler trace: it is a list of graph capture files",
    ),
    "list-without-ph.json": (b'[{"name": "a", "ts": 1}, {"name": "b", "ts": 2}]', "none of its 2 events has a 'ph' key"),
    "deep-args.json": (_deep(100_000), "JSON nested more than 900 levels deep"),
    "deep-head.json": (_deep(100_000, "head"), "JSON nested more than 900 levels deep"),
    "deep-args.json.gz": (gzip.compress(_deep(100_000)), "JSON nested more than 900 levels deep"),
}
COMMANDS = {
    "info": lambda p, out: ["info", p],
    "analyze": lambda p, out: ["analyze", p],
    "analyze -o": lambda p, out: ["analyze", p, "-o", out / "res"],
    "sql": lambda p, out: ["sql", p, "select count(*) from events"],
    "tree": lambda p, out: ["tree", p, "--name", "a"],
    "report": lambda p, out: ["report", p, "-o", out / "r.html"],
}


def _files(d):
    return sorted(str(p.relative_to(d)) for p in Path(d).rglob("*"))


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_trace_is_one_line_exit_2_and_nothing_written(tmp_path, name):
    content, expect = BAD[name]
    src = tmp_path / "in" / name
    src.parent.mkdir()
    src.write_bytes(content)
    out = tmp_path / "out"
    out.mkdir()
    for command, argv in COMMANDS.items():
        rc, stdout, err = cli(*argv(src, out))
        assert rc == 2, (command, rc, err)
        assert err.count("\n") == 1 and err.startswith(f"tracecols: {src}"), (command, err)
        assert expect in err, (command, err)
        assert _files(out) == [], (command, _files(out))
    assert src.read_bytes() == content


def _limited(limit_bytes):
    def set_limit():
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))

    return set_limit


@pytest.mark.parametrize("name", ["deep-args.json", "deep-head.json"])
def test_deep_nesting_stays_within_memory(tmp_path, name):
    """A 200 KB file of 100,000 nested arrays once grew the process to all of the machine's
    memory; under a 1.5 GB address-space limit it must end with the one line, not MemoryError."""
    src = tmp_path / name
    src.write_bytes(BAD[name][0])
    r = subprocess.run(
        [sys.executable, "-m", "tracecols", "info", str(src)],
        capture_output=True,
        text=True,
        preexec_fn=_limited(1536 << 20),
        timeout=120,
    )
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "JSON nested more than 900 levels deep" in r.stderr, r.stderr


def test_nesting_just_within_the_bound_is_read(tmp_path):
    """Depth is counted outside strings only, escapes included: brackets in names do not count."""
    import tracecols

    name = "[" * 5000 + '\\"{' * 3000 + "\\\\"
    doc = {
        "traceEvents": [
            {"ph": "X", "name": name, "ts": 1, "dur": 1, "pid": 1, "tid": 1, "args": {"x": json.loads("[" * 800 + "]" * 800)}}
        ]
    }
    p = tmp_path / "t.json"
    p.write_text(json.dumps(doc))
    t = tracecols.open(str(p))
    assert t.sql("select name from events").item() == name


def _reference_depth(text):
    """The deepest nesting of a JSON text, one character at a time."""
    depth = top = 0
    in_str = esc = False
    for c in text:
        if in_str:
            if esc:
                esc = False
            elif c == "\\":
                esc = True
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c in "[{":
            depth += 1
            top = max(top, depth)
        elif c in "]}":
            depth -= 1
    return top


def _over(doc, limit, cut, monkeypatch):
    from tracecols.read import nesting

    monkeypatch.setattr(nesting, "MAX_DEPTH", limit)
    n = nesting.Nesting()
    over = [n.too_deep(doc[i : i + cut]) for i in range(0, len(doc), cut)]
    assert n.depth == 0 and not n.in_string
    return any(over)


@pytest.mark.parametrize(
    "doc",
    [
        json.dumps({"a": [[{"b": 'x]]]\\"[[[', "c": [[[1]]]}]], "d": "\\\\"}),
        json.dumps([['\\\\\\"' * 7, {"k": "[[[{{{"}], [[[[[[["\\"]]]]]]]]),
        '{"a": "' + "\\\\" * 50 + '", "b": [[[[' + '"\\"["' + "]]]]}",
        '{"s": "[[[[[[[[", "a": ' + "[" * 6 + "]" * 6 + "}",
    ],
)
def test_nesting_counter_against_a_plain_one(doc, monkeypatch):
    """nesting.Nesting, fed in chunks cut anywhere (inside escapes and strings too), finds the
    same deepest level as a character-by-character reference."""
    top = _reference_depth(doc)
    data = doc.encode()
    for cut in (1, 2, 3, 5, 8, 13, len(data)):
        assert _over(data, top - 1, cut, monkeypatch), cut
        assert not _over(data, top, cut, monkeypatch), cut


# ----------------------------------------------------------------------------------------
# Outputs that cannot be written, and outputs that are inputs


def _sha(p):
    return hashlib.sha256(Path(p).read_bytes()).hexdigest()


def test_an_output_that_is_an_input_is_refused(tmp_path):
    src = tmp_path / "t.json.gz"
    shutil.copy(DATA_TRACE, src)
    before = _sha(src)
    saved = tmp_path / "saved"
    assert cli("analyze", src, "-o", saved)[0] == 0
    saved_files = {f: _sha(saved / f) for f in _files(saved)}
    cases = [
        ["report", src, "-o", src],
        ["sql", src, "select 1", "-o", src],
        ["augment", src, src],
        ["analyze", src, "-o", tmp_path],  # the directory that holds the input
        ["analyze", saved, "-o", saved],  # a saved output into itself
        ["report", saved, "-o", saved / "events.parquet"],
    ]
    for argv in cases:
        rc, _, err = cli(*argv)
        assert rc == 2 and err.count("\n") == 1, (argv, err)
        assert "cannot write" in err or "refusing to overwrite" in err, (argv, err)
    assert _sha(src) == before
    assert {f: _sha(saved / f) for f in _files(saved)} == saved_files


def test_impossible_outputs_are_one_line(tmp_path):
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    cases = {
        ("analyze", "-o", a_file): "is a file; the output here is a directory",
        ("analyze", "-o", a_file / "sub"): "a_file is a file, not a directory",
        ("report", "-o", a_file / "r.html"): "a_file is a file, not a directory",
        ("report", "-o", tmp_path): "is a directory; the output here is a file",
        ("sql", "select 1", "-o", a_file / "x.csv"): "a_file is a file, not a directory",
    }
    for (command, *rest), expect in cases.items():
        rc, _, err = cli(command, DATA_TRACE, *rest)
        assert rc == 2 and err.count("\n") == 1 and "cannot write" in err and expect in err, (command, err)
    if os.geteuid() != 0:  # root writes anywhere
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o500)
        rc, _, err = cli("analyze", DATA_TRACE, "-o", ro / "out")
        assert rc == 2 and "no write permission" in err


# ----------------------------------------------------------------------------------------
# What a killed run leaves behind is swept by the next one


def _dead_pid():
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_sweep_removes_only_dead_runs_of_this_host(tmp_path):
    host = atomic._HOST
    dead, alive = _dead_pid(), os.getppid()
    made = {
        f".out.tmp-{host}-{dead}-0123abcd": False,  # dead: swept
        f".out.old-{host}-{dead}-0123abcd": False,
        f".out.tmp-{host}-{alive}-0123abcd": True,  # still running: kept
        f".out.tmp-otherhost-{dead}-0123abcd": True,  # another machine's (shared disk): kept
        ".out.tmp-0123abcd": True,  # not of this form: kept
        f".other.tmp-{host}-{dead}-0123abcd": True,  # another output's: kept
    }
    for name in made:
        (tmp_path / name).mkdir()
        (tmp_path / name / "part.parquet").write_bytes(b"x" * 100)
    atomic.temp_sibling(tmp_path / "out")
    assert {n: (tmp_path / n).exists() for n in made} == made


def test_a_killed_analyze_leaves_nothing_after_the_next_run(tmp_path):
    src = CORPUS / "HolisticTraceAnalysis/tests/data/df_index_resolver/df_index_resolver.json.gz"
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    env = dict(os.environ, TMPDIR=str(tmpdir))
    out = tmp_path / "res"
    cmd = [sys.executable, "-m", "tracecols", "analyze", str(src), "-o", str(out)]
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline and not any(n.startswith(".res.tmp-") for n in os.listdir(tmp_path)):
        time.sleep(0.02)
    time.sleep(0.3)
    p.send_signal(signal.SIGKILL)
    p.wait()
    left = [n for n in os.listdir(tmp_path) if n.startswith(".res.")]
    assert left, "the run was killed before it wrote anything: the test proves nothing"
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert [n for n in os.listdir(tmp_path) if n.startswith(".res.")] == []
    assert os.listdir(tmpdir) == []
    assert (out / "_tracecols.json").exists()
