"""The `tracecols` command as a user runs it: outputs, formats, and one-line errors with exit code 2."""

import csv
import io
import json
import os
import shutil
import subprocess
import sys

import polars as pl
import pytest
from conftest import CORPUS, DATA_TRACE

EXE = shutil.which("tracecols") or os.path.join(os.path.dirname(sys.executable), "tracecols")


def run(*args, **kw):
    return subprocess.run([EXE, *map(str, args)], capture_output=True, text=True, **kw)


def test_info_shows_the_trace():
    r = run("info", DATA_TRACE)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "2,551" in out and "NVIDIA H100 80GB HBM3" in out and "python_function" in out
    assert "baseTimeNanoseconds" in out  # a metadata key that sits after traceEvents in the file


def test_the_command_does_without_pandas(tmp_path):
    # pyarrow imports pandas, where installed, at its first array: 0.2-0.3 s and 35 MB a command
    import importlib.util

    assert importlib.util.find_spec("pandas") is not None  # installed here, so the check can fail
    code = (
        "import atexit, sys; atexit.register(lambda: print('pandas loaded:', 'pandas' in sys.modules)); "
        "from tracecols.cli import run; run()"
    )
    r = subprocess.run(
        [sys.executable, "-c", code, "analyze", DATA_TRACE, "-o", tmp_path / "out", "-q"], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().endswith("pandas loaded: False")
    assert (tmp_path / "out" / "op_perf.parquet").exists()
    r = subprocess.run(
        [sys.executable, "-c", "import sys, pyarrow as pa; pa.array([1]); print('pandas' in sys.modules)"],
        capture_output=True,
        text=True,
    )
    assert r.stdout.strip() == "True"  # what the command avoids


def test_sql_formats(tmp_path):
    q = "select cat, count(*) as n from events group by 1 order by 2 desc, 1"
    r = run("sql", DATA_TRACE, q, "--format", "csv")
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert rows[0] == {"cat": "python_function", "n": "1385"}
    r = run("sql", DATA_TRACE, q, "--format", "json")
    assert json.loads(r.stdout.splitlines()[0]) == {"cat": "python_function", "n": 1385}
    r = run("sql", DATA_TRACE, q)
    assert "python_function" in r.stdout and "1385" in r.stdout
    out = tmp_path / "r.parquet"
    r = run("sql", DATA_TRACE, q, "--format", "parquet", "-o", out)
    assert r.returncode == 0 and pl.read_parquet(out).row(0) == ("python_function", 1385)


def test_ingest_writes_parquet_and_manifest(tmp_path):
    out = tmp_path / "out"
    r = run("ingest", DATA_TRACE, "-o", out)
    assert r.returncode == 0, r.stderr
    manifest = json.loads((out / "_tracecols.json").read_text())
    assert {"events", "traces", "devices", "slices", "kernels"} <= set(manifest["tables"])
    (entry,) = manifest["traces"]
    assert entry["files"]["events"].startswith("events/rank=")  # the lake layout, one trace in it
    assert pl.read_parquet(out / entry["files"]["events"]).height == 2551
    r = run("sql", out, "select count(*) as n from events where cat = 'kernel'", "--format", "csv")
    assert r.stdout.split() == ["n", "60"]
    for view in ("flows", "counters", "instants"):  # the sql/ views are defined over the lake
        r = run("sql", out, f"select count(*) as n from {view}", "--format", "csv")
        assert r.returncode == 0, r.stderr
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp dirs left


@pytest.mark.parametrize(
    "args,expect",
    [
        (("info", "/no/such/trace.json"), "no such file"),
        (("sql", DATA_TRACE, "selec 1"), "syntax error"),
        (("sql", DATA_TRACE, "select * from nosuchtable"), "nosuchtable"),
    ],
)
def test_errors_are_one_line_exit_2(args, expect):
    r = run(*args)
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and expect in lines[0].lower() and "Traceback" not in r.stderr


@pytest.mark.corpus
def test_not_a_trace_and_truncated_are_one_line(tmp_path):
    r = run("info", CORPUS / "HolisticTraceAnalysis/tests/data/execution_trace/benchmark_simple_add_et.json.gz")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Execution Trace" in r.stderr
    cut = tmp_path / "cut.json"
    import gzip

    cut.write_bytes(gzip.decompress(DATA_TRACE.read_bytes())[:100_000])
    out = tmp_path / "out"
    r = run("ingest", cut, "-o", out)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "truncated" in r.stderr and str(cut) in r.stderr
    assert not out.exists() and list(tmp_path.iterdir()) == [cut]  # nothing half-written


def test_sql_files_ship_inside_the_installed_package():
    from tracecols.engine.sqlfiles import sql_dir

    d = sql_dir()
    # every domain folder ships, not only the top level
    assert {"flows", "op_perf", "tracelens_ops_summary", "_hta_unions"} <= {p.stem for p in d.rglob("*.sql")}
    if os.environ.get("TRACECOLS_EXPECT_WHEEL") == "1":  # set by .ci/test, which installs non-editable
        assert "site-packages" in str(d), d


def test_csv_writes_list_columns_as_json_text(tmp_path):
    q = "select uid, input_dims, input_types from events where input_dims is not null order by uid limit 3"
    r = run("sql", DATA_TRACE, q, "--format", "csv")
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    ref = tracecols_open_rows(q)
    assert [json.loads(x["input_dims"]) for x in rows] == [x["input_dims"] for x in ref]
    assert [json.loads(x["input_types"]) for x in rows] == [x["input_types"] for x in ref]


def tracecols_open_rows(q):
    import tracecols

    return tracecols.open(str(DATA_TRACE)).sql(q).to_dicts()


ALL_COMMANDS = ["info", "sql", "tree", "ingest", "export", "link", "compare", "diff", "augment", "analyze", "report"]
ALL_COMMANDS += ["stacks", "critical-path", "merge", "mcp"]


def test_the_command_table_names_what_each_module_registers():
    # every module of tracecols.cli with a register(): the commands it adds are those the table
    # gives it, and the table holds no other
    import argparse
    import importlib
    import pkgutil

    import tracecols.cli as cli

    registered = {}
    for info in pkgutil.iter_modules(cli.__path__):
        module = importlib.import_module(f"tracecols.cli.{info.name}")
        if hasattr(module, "register"):
            sub = argparse.ArgumentParser().add_subparsers()
            module.register(sub)
            registered.update(dict.fromkeys(sub.choices, info.name))
    assert registered == cli.COMMANDS
    assert list(cli.COMMANDS) == ALL_COMMANDS  # the order `tracecols --help` lists them in


def test_help_lists_every_command_and_a_command_loads_its_module_alone():
    r = run("--help")
    assert r.returncode == 0, r.stderr
    import re

    listed = re.findall(r"^ {4}(\S+)(?: \((\S+)\))?", r.stdout, re.MULTILINE)  # `compare (diff)`
    assert [name for names in listed for name in names if name] == ALL_COMMANDS
    code = (
        "import atexit, sys; atexit.register(lambda: print(sorted(m for m in sys.modules if m.startswith('tracecols.cli.')))); "
        "from tracecols.cli import run; run()"
    )
    r = subprocess.run([sys.executable, "-c", code, "analyze", "--help"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    loaded = eval(r.stdout.strip().splitlines()[-1])
    assert "tracecols.cli.analyze" in loaded
    assert not {"tracecols.cli.commands", "tracecols.cli.fleet", "tracecols.cli.compare", "tracecols.cli.mcp"} & set(loaded)


def test_the_command_ends_as_python_would_all_output_flushed_and_atexit_run():
    # run() skips the interpreter's teardown (cli._exit), not its exit: atexit handlers, the
    # whole buffered output, the exit code
    code = "import atexit; atexit.register(print, 'atexit ran'); from tracecols.cli import run; run()"
    q = "select uid, name from events order by uid"
    r = subprocess.run([sys.executable, "-c", code, "sql", DATA_TRACE, q, "--format", "csv"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "uid,name" and len(lines) == 1 + 2551 + 1 and lines[-1] == "atexit ran"
    r = subprocess.run([sys.executable, "-c", code, "info", "/no/such/trace.json"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stdout == "atexit ran\n" and "no such file" in r.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("cmd", [["info"], ["analyze"], ["sql", "select * from events"]])
def test_a_full_disk_under_the_standard_output_is_one_line_exit_2(cmd):
    with open("/dev/full", "w") as full:
        r = subprocess.run([EXE, cmd[0], DATA_TRACE, *cmd[1:]], stdout=full, stderr=subprocess.PIPE, text=True)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert lines == ["tracecols: standard output: cannot write: No space left on device"], r.stderr
