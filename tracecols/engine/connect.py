"""Every DuckDB connection tracecols opens, and the one way a value is written into SQL text."""

import duckdb

# No query may fetch an extension over the network or load one it did not name: DuckDB would
# otherwise install and load a known extension (httpfs for an https:// path, excel for
# read_xlsx …) on first use, community extensions allowed.
NO_EXTENSIONS = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
}


def connect(database: str = ":memory:", config: dict | None = None) -> duckdb.DuckDBPyConnection:
    """Every DuckDB connection tracecols opens: `config` plus NO_EXTENSIONS, and the
    configuration locked, so that no statement run on it (a user's query) can change them."""
    con = duckdb.connect(database, config={**(config or {}), **NO_EXTENSIONS})
    con.execute("SET enable_progress_bar = false")  # drawn on stdout, where results go
    con.execute("SET lock_configuration = true")
    return con


def sql_string(v: object) -> str:
    """`v` as a SQL string literal (quotes doubled), or a list or tuple of them as a DuckDB list."""
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(sql_string(x) for x in v) + "]"
    return "'" + str(v).replace("'", "''") + "'"
