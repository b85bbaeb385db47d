"""DuckDB's errors told as the user's: a mistake in the query run is `query failed` with its line
counted in the query as written; statements that could write files are refused before they run."""

import re

import duckdb

from ..errors import QueryError, Unsupported
from .connect import connect

# DuckDB's errors that are a mistake in the query run (or in the data it casts), not a fault
# of tracecols's views: reported as `query failed` when they point into the query's own text
USER_ERRORS = (
    duckdb.ParserException,
    duckdb.BinderException,
    duckdb.CatalogException,
    duckdb.ConversionException,
    duckdb.OutOfRangeException,
    duckdb.InvalidInputException,
    duckdb.TypeMismatchException,
    duckdb.NotImplementedException,
    duckdb.PermissionException,
)
_LINE = re.compile(r"^LINE (\d+): (.*)$", re.MULTILINE)
_EXTENSION_ADVICE = re.compile(r"Please try installing and loading the (\w+) extension.*?autoload_known_extensions=1;", re.DOTALL)


def query_error(origin: str, query: str, e: Exception) -> QueryError | None:
    """`query failed: <DuckDB's message>` for an error of `query`, its `LINE n` counted in the
    query as written (DuckDB counts in the text it ran, which a result's renderer wraps);
    None when the excerpt DuckDB shows is not from `query` (an error inside a view)."""
    text = str(e)
    m = _LINE.search(text)
    if m:
        excerpt = m[2].strip().removeprefix("...").removesuffix("...").strip()
        lines = query.split("\n")
        n = int(m[1])
        if not (n <= len(lines) and excerpt in lines[n - 1]):
            found = [i for i, line in enumerate(lines, 1) if excerpt in line]
            if not found:
                return None
            n = found[0]
        text = f"{text[: m.start()]}LINE {n}: {m[2]}{text[m.end() :]}"
    # DuckDB's advice (INSTALL, LOAD, SET autoinstall…) is what tracecols refuses
    text = _EXTENSION_ADVICE.sub(r"tracecols does not install or load DuckDB extensions (this needs \1)", text)
    # the caret line under the excerpt points at nothing once the message is one line
    return QueryError(origin, "\n".join(line for line in text.split("\n") if line.strip(" ^")))


def failed_query(origin: str, query: str, e: Exception) -> QueryError:
    """The error of `query` as query_error tells it, else DuckDB's message as it is."""
    return query_error(origin, query, e) or QueryError(origin, str(e))


# what `tracecols sql` runs: queries, and changes to its in-memory database only
READ_ONLY_KINDS = ("SELECT", "EXPLAIN", "CREATE", "INSERT", "UPDATE", "DELETE", "DROP", "ALTER")


def check_read_only(query, origin):
    """Raise Unsupported unless every statement of `query` is one of READ_ONLY_KINDS: COPY, EXPORT,
    ATTACH, INSTALL, LOAD, SET, PRAGMA … could write files (the inputs among them). Parses only."""
    try:
        with connect() as con:
            kinds = [st.type.name for st in con.extract_statements(query)]
    except duckdb.Error as e:
        raise failed_query(origin, query, e) from None
    bad = sorted({k for k in kinds if k not in READ_ONLY_KINDS})
    if bad:
        raise Unsupported(
            origin,
            f"tracecols sql runs read-only queries over an in-memory database and writes "
            f"only with -o; {', '.join(bad)} statements are refused",
        )
