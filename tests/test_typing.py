"""The public API as a type checker sees it: `tracecols.open` gives a Trace, `tracecols.Lake`
a Lake, `sql` a polars DataFrame (never None), and a wrong call is an error (mypy, as an IDE
would run it, over a snippet that uses the installed package)."""

import os
import sys
from pathlib import Path

import pytest

import tracecols

api = pytest.importorskip("mypy.api")

SNIPPET = """
import tracecols
t = tracecols.open("x.json")
reveal_type(t)
reveal_type(tracecols.Lake("lake/"))
reveal_type(t.sql("select 1"))
reveal_type(t.tables)
reveal_type(t.save("out/"))
reveal_type(tracecols.TraceError("p", "m").line())
t.sql(42)
tracecols.open("x.json", keep_secrets="yes")
tracecols.Lake("lake/").export_duckdb()
"""


def test_the_public_api_is_typed(tmp_path):
    (tmp_path / "snippet.py").write_text(SNIPPET)
    env = {}
    where = Path(tracecols.__file__).parent.parent
    if "site-packages" not in where.parts:  # run from a checkout: mypy finds the package there
        env["MYPYPATH"] = str(where)
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        out, err, rc = api.run(
            [
                "--python-executable",
                sys.executable,
                "--follow-imports=silent",
                "--ignore-missing-imports",
                "--cache-dir",
                str(tmp_path / ".mypy_cache"),
                "--no-error-summary",
                "--hide-error-context",
                str(tmp_path / "snippet.py"),
            ]
        )
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    # mypy releases differ in writing builtins.str or str; pyarrow ships no types (Any)
    lines = [line.split(": ", 1)[1].replace("builtins.", "") for line in out.splitlines() if ": " in line]
    assert lines[:6] == [
        'note: Revealed type is "tracecols.trace.Trace"',
        'note: Revealed type is "tracecols.lake.Lake"',
        'note: Revealed type is "polars.dataframe.frame.DataFrame"',
        'note: Revealed type is "list[str]"',
        'note: Revealed type is "pathlib.Path"',
        'note: Revealed type is "str"',
    ], out
    errors = [line for line in lines[6:] if line.startswith("error:")]
    assert len(errors) == 3 and all("[arg-type]" in e or "[call-arg]" in e for e in errors), out
    assert rc == 1, err


def test_sql_never_returns_none():
    from conftest import DATA_TRACE

    t = tracecols.open(DATA_TRACE)
    for query in ("", "-- a comment, no statement"):  # DuckDB answers these with no result at all
        df = t.sql(query)
        assert type(df).__name__ == "DataFrame" and df.shape == (0, 0)
        assert t.arrow(query).num_columns == 0
    assert t.sql("create view answer as select 42 as n").columns == ["Count"]
    assert t.sql("select n from answer")["n"].to_list() == [42]
