"""Mistakes in a user's SQL are `query failed: …` with DuckDB's message and the line of the
query as the user wrote it; results of any type can be written as CSV and JSON; and no
query makes DuckDB fetch or load an extension."""

import contextlib
import io
import re

import duckdb
import pytest
from conftest import DATA_TRACE, REPO

import tracecols
from tracecols.cli import main
from tracecols.engine.connect import connect
from tracecols.engine.query_errors import query_error
from tracecols.errors import QueryError


def cli(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in args])
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def trace():
    return tracecols.open(DATA_TRACE)


FAILED = f"tracecols: {DATA_TRACE}: query failed: "

# query -> the whole stderr line after FAILED
MISTAKES = {
    "select 1,\n  'a'::json": (
        "Conversion Error: Malformed JSON at byte 0 of input: unexpected character. Input: \"a\" LINE 2: 'a'::json"
    ),
    "select 2147483647::int + 1::int": "Out of Range Error: Overflow in addition of INT32 (2147483647 + 1)!",
    "select 1 +": 'Parser Error: syntax error at or near "+" LINE 1: select 1 +',
    "select * from kernelz": 'Catalog Error: Table with name kernelz does not exist! Did you mean "kernels"?',
}


@pytest.mark.parametrize("fmt", ["table", "csv"])
@pytest.mark.parametrize("query", sorted(MISTAKES))
def test_a_mistake_in_the_query_is_query_failed(query, fmt):
    rc, out, err = cli("sql", DATA_TRACE, query, "--format", fmt, "-q")
    assert (rc, out, err) == (2, "", FAILED + MISTAKES[query] + "\n")


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_the_line_is_the_users_line(fmt):
    """The table renderer wraps the query it runs (its LINE 3 was the user's line 1)."""
    rc, _, err = cli("sql", DATA_TRACE, "select\n  1 as a,\n  name::int as b\nfrom kernels", "--format", fmt, "-q")
    assert rc == 2 and err.startswith(FAILED + "Conversion Error: Could not convert string 'void ")
    assert err.endswith(" to INT32 when casting from source column name LINE 3: name::int as b\n")
    assert "internal" not in err and err.count("\n") == 1


def test_trace_sql_raises_query_error(trace):
    for method in (trace.sql, trace.arrow):
        with pytest.raises(QueryError) as e:
            method("select 1,\n  'a'::json")
        assert e.value.line() == f"{DATA_TRACE}: query failed: " + MISTAKES["select 1,\n  'a'::json"]


def test_an_error_inside_a_view_is_not_the_users():
    e = duckdb.ConversionException("Conversion Error: no\n\nLINE 7:     cast(args AS INTEGER)\n  ^^^^")
    assert query_error("t.json", "select * from kernel_perf", e) is None
    mine = query_error("t.json", "select 1,\ncast(args AS INTEGER)", e)
    assert mine is not None and mine.line() == "t.json: query failed: Conversion Error: no LINE 2: cast(args AS INTEGER)"


# ----------------------------------------------------------------------------------------
# Types CSV and JSON cannot hold: DuckDB's text of each value


@pytest.mark.parametrize(
    "expr, csv, json",
    [
        ("interval 1 day", "1 day", '"1 day"'),
        ("interval 90 minute", "01:30:00", '"01:30:00"'),
        ("1::variant", "1", '"1"'),
        ("{'a': [interval 1 hour]}", "{'a': ['01:00:00']}", "\"{'a': ['01:00:00']}\""),
        ("map([1], ['x'])", "{1=x}", '"{1=x}"'),
        ("union_value(k := 1)", "1", '"1"'),
        ("'ab\\x00'::blob", "ab\\x00", '"ab\\\\x00"'),
        ("'0101'::bit", "0101", '"0101"'),
        ("[1, 2]", '"[1, 2]"', "[1,2]"),  # a list of numbers: JSON text in CSV, as before
    ],
)
def test_csv_and_json_of_any_type(tmp_path, expr, csv, json):
    # a column named MAP is not of type MAP
    q = f'select {expr} as x, 1 as "MAP"'
    assert cli("sql", DATA_TRACE, q, "--format", "csv", "-q")[1] == f"x,MAP\n{csv},1\n"
    assert cli("sql", DATA_TRACE, q, "--format", "json", "-q")[1] == f'{{"x":{json},"MAP":1}}\n'
    rc, _, err = cli("sql", DATA_TRACE, q, "--format", "parquet", "-o", tmp_path / "x.parquet", "-q")
    assert (rc, err) == (0, "")


def test_sql_text_for_files_gives_the_text_of_types_files_cannot_hold():
    """Trace.sql(text_for_files=True), what `tracecols sql` runs for CSV and JSON: a MAP or BLOB
    comes as DuckDB's text; without it, as polars holds it."""
    import polars as pl

    t = tracecols.open(DATA_TRACE)
    q = "select map([1], ['x']) as m, 'ab'::blob as b, interval 1 day as i, 2 as n"
    text = t.sql(q, text_for_files=True)
    assert text.schema == {"m": pl.String, "b": pl.String, "i": pl.String, "n": pl.Int32}
    assert text.row(0) == ("{1=x}", "ab", "1 day", 2)
    plain = t.sql(q)
    assert plain["b"].dtype == pl.Binary and plain["i"].dtype == pl.String and plain["m"].dtype != pl.String
    assert t.sql("-- a comment, no statement", text_for_files=True).shape == (0, 0)


def test_trace_sql_takes_an_interval(trace):
    assert trace.sql("select interval 1 day as i").rows() == [("1 day",)]


# ----------------------------------------------------------------------------------------
# Extensions: never installed or loaded behind a query's back


SETTINGS = (
    "select current_setting('autoinstall_known_extensions'), current_setting('autoload_known_extensions'), "
    "current_setting('allow_community_extensions'), current_setting('lock_configuration')"
)


def test_every_connection_has_extensions_off_and_locked(trace, tmp_path):
    assert trace.sql(SETTINGS).rows() == [(False, False, False, True)]
    assert connect().sql(SETTINGS).fetchall() == [(False, False, False, True)]
    lake = tmp_path / "lake"
    assert cli("ingest", DATA_TRACE, "-o", lake, "-j", "1", "-q")[0] == 0
    assert tracecols.Lake(lake).sql(SETTINGS).rows() == [(False, False, False, True)]


def test_tracecols_opens_duckdb_only_through_connect():
    """connect() is the one place connections are made: any other would have the defaults."""
    calls = [
        f"{p.relative_to(REPO)}:{n}"
        for p in sorted((REPO / "tracecols").rglob("*.py"))
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if re.search(r"\bduckdb\.connect\(", line)
    ]
    assert [c.split(":")[0] for c in calls] == ["tracecols/engine/connect.py"], calls


def test_a_query_cannot_turn_them_back_on(trace):
    rc, _, err = cli("sql", DATA_TRACE, "SET autoinstall_known_extensions = true", "-q")
    assert rc == 2 and "unsupported: tracecols sql runs read-only queries" in err and "SET statements are refused" in err
    with pytest.raises(QueryError, match="the configuration has been locked"):
        trace.sql("SET autoinstall_known_extensions = true")
    with pytest.raises(QueryError, match="the configuration has been locked"):
        trace.sql("SELECT 1; SET autoload_known_extensions = true")
    assert trace.sql(SETTINGS).rows() == [(False, False, False, True)]


@pytest.mark.parametrize(
    "query, expect",
    [
        (
            "select * from read_xlsx('x.xlsx')",
            'Catalog Error: Table Function with name "read_xlsx" is not in the catalog, but it exists in the excel '
            "extension. tracecols does not install or load DuckDB extensions (this needs excel)",
        ),
        (
            "select * from 'https://example.com/x.parquet'",
            "File https://example.com/x.parquet requires the extension httpfs to be loaded tracecols does not "
            "install or load DuckDB extensions (this needs httpfs)",
        ),
    ],
)
def test_a_query_needing_an_extension_fails_without_fetching_it(query, expect):
    rc, _, err = cli("sql", DATA_TRACE, query, "-q")
    assert (rc, err) == (2, FAILED + expect + "\n")
    assert "download" not in err.lower()
