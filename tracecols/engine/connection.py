"""The one catalog: a DuckDB connection over base tables held anywhere — Arrow tables in
memory, Parquet files of a saved trace, scans of a lake's files — with the device peak table
and every sql/ view on top, and secrets redacted on the way in (model/secrets.py)."""

import re
import time
import warnings
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from contextlib import contextmanager

import duckdb
import pyarrow as pa

from ..errors import QueryError, Unsupported
from ..model.base_tables import BASE_TABLES
from ..model.secrets import METADATA_TABLES, redact_table, sql_candidates
from ..progress import tracker
from . import sqlfiles
from .public import is_public, public_names
from .specs import device_specs_table

# A small trace's views are fetched through DuckDB's DB-API result, which binds a query once
# where a relation binds it twice; DuckDB warns that its Arrow output copies the rows, a copy
# of a small result taken knowingly (materialise_all_to's `whole`).
warnings.filterwarnings("ignore", "Arrow output on a DB-API result", UserWarning)

_WORD = re.compile(r"[a-z_][a-z0-9_]*")
# a query that reads DuckDB's own catalog sees every view: the user lists what there is
_CATALOG_WORDS = {"information_schema", "duckdb_views", "duckdb_tables", "duckdb_columns", "show", "describe", "summarize"}


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


class Scan(str):
    """A SQL table expression to serve as a base table (a lake's `read_parquet([...])`)."""


class Engine:
    """Registers base tables and defines every sql/ view over them.

    `tables`: {name: Arrow table | Parquet path(s) | Scan}. `redact`: secrets are redacted on
    the way in (model/secrets.py) — in the metadata tables (small: read whole and registered
    redacted) and, unless `clean` says the store was written with redaction, in the other
    tables' rows that could hold one (_redacted).
    `fs`: an fsspec
    filesystem the scans read through. `database`: a DuckDB file to write the catalog into
    (the Arrow tables become tables of that file) instead of an in-memory one. `later`: names of
    base tables whose Parquet files are still being written; materialise_all_to reads each once
    it is told the file is there."""

    def __init__(
        self,
        tables,
        origin="<trace>",
        memory_limit=None,
        temp_dir=None,
        query_threads=None,
        redact=False,
        clean=False,
        fs=None,
        database=None,
        later=(),
    ):
        self.origin = origin
        # asof_loop_join_threshold 0: an as-of join stays one. DuckDB runs one whose left side it
        # estimates below 64 rows as a nested loop over every pair, and its estimates of filtered
        # scans of Arrow tables can be far too low. Set here, not by SET, so that the cursors that
        # stream the views have it too.
        config: dict[str, object] = {"enable_external_access": True, "asof_loop_join_threshold": 0}
        if memory_limit:  # bounded-memory runs: DuckDB spills to temp_dir beyond this
            config["memory_limit"] = memory_limit
        if temp_dir:
            config["temp_directory"] = str(temp_dir)
        if query_threads:  # DuckDB's threads for each query (default: one per core)
            config["threads"] = query_threads
        self.con = connect(str(database) if database else ":memory:", config)
        if fs is not None:
            self.con.register_filesystem(fs)
        self._persist = database is not None
        self._done = {}  # materialised views
        self._undefined = {}  # views not yet defined in DuckDB: {name: the statements that define them}
        self._memoise = False  # whether private helpers are held (set once the base tables are known)
        self._on_file = set()  # views whose definition reads the file materialise_all_to wrote
        self.base = {}
        self._registered = {}  # the Arrow tables registered on the connection: {name: table}
        if self._persist:  # private helpers and the redacted rows sit in a schema apart (public.py)
            self.con.execute(f"CREATE SCHEMA IF NOT EXISTS {sqlfiles.PRIVATE_SCHEMA}")
        for name, t in tables.items():
            if redact and name in METADATA_TABLES:
                t = redact_table(t if isinstance(t, pa.Table) else self._read_all(t))
            elif redact and not clean:
                t = self._redacted(name, t)
            if isinstance(t, pa.Table):
                self._register(name, t)
            elif isinstance(t, Scan):
                self.con.execute(f"CREATE VIEW {name} AS SELECT * FROM {t}")
            elif name not in later:
                self._read_file(name, t)
            self.base[name] = t
        if "device_specs" not in self.base:  # the device peak table, for op_perf
            self.base["device_specs"] = device_specs_table()
            self._register("device_specs", self.base["device_specs"])
        for text in sqlfiles.macros():
            self.con.execute(text)
        files = sqlfiles.load_all()
        order = sqlfiles.ordered(files, set(self.base), BASE_TABLES)
        self.views = [n for n in order if n not in tables]
        # {name: (text, depends)} of every sql/ file over these tables, those a saved store holds as
        # files among them: `over` computes them again
        self._sql = {n: (files[n][0], set(files[n][1])) for n in order}
        self._reads = {n: self._sql[n][1] & set(self.views) for n in self.views}
        self._later = {n: set(files[n][1]) & set(later) for n in self.views}  # the later tables each reads
        # A view is defined when a query first names it (_define_named), with the views it reads:
        # DuckDB binds a view, and every view beneath it again, when it is defined, and all of
        # them took 0.5-0.7 s, a cost every open paid whether it ran one query or none. The
        # pipeline's materialise_all_to defines each view once the views it reads are files.
        # A database file gets every view now: it is read by other programs.
        self._undefined = {} if self._persist else {n: files[n][0] for n in self.views}
        # Over a trace held in memory, a private helper is computed once, when a query first needs
        # it: DuckDB expands views inline, and one query of tracelens_unified_perf_summary computed
        # _tracelens_gpu_events three times (df_index_resolver: 0.58 -> 0.11 s once the helpers
        # exist; its twelve helpers hold 24 MB, and its peak over every view fell 669 -> 579 MB).
        # Not over files: a lake's helpers grow with its ranks and are not held.
        self._memoise = not self._persist and all(isinstance(t, pa.Table) for t in self.base.values())
        # a database file lists the public views only
        self._private = {n for n in self.views if not is_public(n)} if self._persist else set()
        for name in self.views:
            if name not in self._undefined:
                self.con.execute(sqlfiles.private_in_schema(files[name][0], self._private))

    def _define_named(self, query):
        """Define the views `query` names (any word of it that is a view's name, in any case), each
        after the views it reads. A query that lists the catalog gets every view. Over a trace in
        memory, the private helpers beneath the views it names are computed (those it only lists
        are not)."""
        if not self._undefined and not self._memoise:
            return
        words = set(_WORD.findall(query.lower()))
        listing = bool(words & _CATALOG_WORDS)
        for name in list(self._undefined) if listing else [n for n in self._undefined if n in words]:
            self._define_with_reads(name, hold=not listing)
        if self._memoise:  # views defined by a listing, then named
            for name in words & self._reads.keys():
                self._hold_helpers(name)

    def _define_with_reads(self, name, hold=True):
        text = self._undefined.pop(name, None)
        if text is None:
            return
        if name not in self._on_file:  # a view computed to a file reads that file alone
            for read in sorted(self._reads[name]):
                self._define_with_reads(read, hold)
        self.con.execute(text)
        # held before the views above it are defined: DuckDB binds those over the result
        if hold and self._memoise and not is_public(name):
            self.materialise(name)

    def _hold_helpers(self, name):
        """Compute once each private helper beneath view `name` not yet held, the deepest first."""
        for read in sorted(self._reads[name]):
            self._hold_helpers(read)
            if not is_public(read) and read not in self._done:
                self.materialise(read)

    def _register(self, name, table):
        if not self._persist:
            self.con.register(name, table)
            self._registered[name] = table
            return
        self.con.register("__arrow", table)  # a registered table does not outlive the connection
        self.con.execute(f"CREATE TABLE {name} AS SELECT * FROM __arrow")
        self.con.unregister("__arrow")

    def _redacted(self, name, t):
        """Table `t` with its secrets redacted: an Arrow table at once; one on disk (Parquet, a
        lake's scan) by reading only the rows whose strings could hold one (PREFILTER, run by
        DuckDB), redacting those, and serving `name` as the other rows on disk plus those
        (stored in the database file when there is one, so an export needs no Python)."""
        if isinstance(t, pa.Table):
            return redact_table(t)
        src = self._source(t)
        cond = sql_candidates(self.arrow(f"SELECT * FROM {src} LIMIT 0").schema)
        found = self.arrow(f"SELECT * FROM {src} WHERE {cond}")
        if not found.num_rows:
            return t
        redacted = redact_table(found)
        if redacted is found:  # rows the search picked, none holding a secret after all
            return t
        held = f"{sqlfiles.PRIVATE_SCHEMA}.redacted_{name}" if self._persist else f"__redacted_{name}"
        self._register(held, redacted)
        return Scan(f"(SELECT * FROM {src} WHERE NOT ({cond}) UNION ALL SELECT * FROM {held})")

    @staticmethod
    def _source(t):
        return t if isinstance(t, Scan) else f"read_parquet({sql_string(t)})"

    def _read_all(self, t):
        return self.arrow(f"SELECT * FROM {self._source(t)}")

    @property
    def names(self) -> list[str]:
        """Every table and view of the catalog, the private helpers included."""
        return list(self.base) + self.views

    @property
    def public(self) -> list[str]:
        """The tables and views that leave the engine (public.py): base tables, then views."""
        return public_names(self.names)

    def _run(self, query):
        try:
            self._define_named(query)
            return self.con.sql(query)
        except duckdb.Error as e:
            raise query_error(self.origin, query, e) or QueryError(self.origin, str(e)) from None

    @contextmanager
    def _running(self, query):
        """Errors met while `query`'s result is computed: the query's own mistakes (a cast that
        fails, an overflow) are QueryError; a fault inside a view of ours stays what it is."""
        try:
            yield
        except USER_ERRORS as e:
            failed = query_error(self.origin, query, e)
            if failed is None:
                raise
            raise failed from None

    def show(self, query, max_rows):
        """Print the result as a terminal table (DuckDB's renderer: no polars import needed)."""
        rel = self._run(query)
        if rel is not None:
            with self._running(query):
                rel.show(max_rows=max_rows, max_width=200, max_col_width=80)

    def head(self, query, n):
        """The first `n` rows of the result as Arrow (None for a statement without rows)."""
        rel = self._run(query)
        if rel is None:
            return None
        with self._running(query):
            out = rel.limit(n).arrow()
        return out.read_all() if hasattr(out, "read_all") else out

    def polars(self, query, text_for_files=False):
        """The result as a polars DataFrame. Columns of types polars cannot take (INTERVAL,
        UNION) come as DuckDB's text of each value; with `text_for_files`, so do those CSV or
        JSON cannot hold (TEXT_TYPES)."""
        rel = self._run(query)
        if rel is None:
            return None
        with self._running(query):
            return as_text(rel, TEXT_TYPES if text_for_files else POLARS_TEXT_TYPES).pl()

    def arrow(self, query):
        rel = self._run(query)
        if rel is None:
            return None
        with self._running(query):
            out = rel.arrow()
        return out.read_all() if hasattr(out, "read_all") else out

    def table(self, name):
        t = self.base.get(name)
        if isinstance(t, pa.Table):
            return t
        if name not in self.names:
            raise QueryError(self.origin, f"no table named {name!r}; tables: {', '.join(self.public)}")
        return self.arrow(f"SELECT * FROM {name}")

    @contextmanager
    def over(self, tables):
        """A cursor in which the tables or views named in `tables` ({name: Arrow table}) are those
        tables, and every view that reads them, directly or through others, is computed over them:
        the same analyses over other rows (Face.critical_path over windows of the caller's
        choosing). The connection itself, and every other cursor, still see their own.

        DuckDB binds a view's names when a query reads it, temporary objects first: the tables
        are registered in the cursor under the names they stand for, and the views above them are
        defined again there as temporary views from their own query text (one held by
        `materialise` reads its frozen result, a saved store's holds its file). A cursor sees none of the connection's registered
        Arrow tables, so they are registered in it too."""
        affected = self._readers_of(set(tables)) - set(tables)
        for name in affected:  # what they read that stays as it is must exist in the catalog
            for read in self._sql[name][1] - affected:
                self._define_with_reads(read)
        queries = {}
        for name in [n for n in self._sql if n in affected]:  # each after the views it reads
            split = sqlfiles.split_view(self._sql[name][0], name)
            if split is None:
                raise sqlfiles.SqlModuleError(f"sql/ file {name} is not one view {name} to read over other tables")
            setup, queries[name] = split
            if sqlfiles.has_statements(setup):
                self.con.execute(setup)
        cur = self.con.cursor()
        try:
            for name, t in {**self._registered, **tables}.items():
                cur.register(name, t)
            private = self._private - affected  # a database file's private helpers sit in a schema apart
            for name, query in queries.items():
                cur.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS {sqlfiles.private_in_schema(query, private)}")
            yield cur
        finally:
            cur.close()

    def _readers_of(self, names):
        """The sql/ views that read any of `names`, directly or through other views."""
        out: set[str] = set()
        for view, (_, depends) in self._sql.items():  # in dependency order: a view's reads come first
            if depends & (names | out):
                out.add(view)
        return out

    def materialise(self, name):
        """Compute view `name` once: from then on it, and every view built on it, reads the
        result, and later calls return it. Base tables come back as they are.

        DuckDB expands views inline, so without this a view used by three others (op_perf by
        op_perf_summary, kernel_perf, diff) is recomputed each time.
        """
        if name in self._done:
            return self._done[name]
        t = self.table(name)
        if name in self.views:
            self.con.register(f"__done_{name}", t)
            self._registered[f"__done_{name}"] = t
            self.con.execute(f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM __done_{name}")
            self._done[name] = t
        return t

    def materialise_all_to(self, directory, writer, threads=1, view_seconds=None, only=None, whole=False, later=None):
        """Like materialise(), for every view, through Parquet files: each result is streamed to
        `directory`/<view>.parquet (never held whole in memory, unless `whole`) and the view then
        reads that file. `writer(path, schema)` opens a file for the batches of one view (a
        context manager with `write_batch`: store.parquet.writer); the engine writes no file format
        of its own. Up to `threads` views run at a time, each once the views it reads are files.

        `whole`: each result is computed whole before it is written, which DuckDB does with one
        binding of the query where a streamed result takes two (the views one at a time over a
        7-event trace: 0.98 -> 0.74 s of CPU; over 87k events 1.67 -> 1.46 s). For small
        results only: a whole result is copied once more on its way to Arrow.

        Over a small trace a view is mostly per-query overhead that leaves a core idle (on two
        cores the 32 views of a 50 MB trace take 1.0 s instead of 1.35 s); over a big one DuckDB
        already keeps every core busy, and a second view's batches only add to the peak. The
        base tables must be Parquet files: a registered Arrow table is not seen by a cursor.
        `view_seconds`, when a dict, receives each view's own wall time (its query and its file).
        `only` (names) limits the work to those views and the views they read. Returns the
        names of the views written, in the order they were started.

        With `whole`, a private helper (`_name`) is held as a table of the database instead of a
        file: only the views above it read it, and a file is compressed, written and decoded
        again for them (the views of a 50k-event trace 0.64-0.69 -> 0.61-0.66 s, one at a
        time). It is not written to `directory` and not among the names returned, and it is
        dropped once every view that reads it is written (df_index_resolver's views: 444-448 ->
        424-435 MB at the peak): after this call it is no longer there to be queried.

        `later`: {name: Future} for the base tables the Engine was told come later (`later`); a
        view reading one (directly or through another view) starts once its future is done, so
        the views that do not read it run meanwhile. Its exception, if any, is raised here.
        """
        registered = [n for n, t in self.base.items() if isinstance(t, pa.Table)]
        if registered:
            raise ValueError(f"materialise_all_to needs Parquet base tables, not {registered}")
        wanted = set(self.views)
        if only is not None:
            todo, wanted = [n for n in only if n in self._reads], set()
            while todo:  # the views asked for and, recursively, those they read
                n = todo.pop()
                if n not in wanted:
                    wanted.add(n)
                    todo += self._reads[n]
        done: set[str]
        running: dict
        pending, done, running = [n for n in self.views if n in wanted], set(), {}
        waiting = {f: n for n, f in (later or {}).items()}  # base tables not read yet
        readers = {n: {v for v in pending if n in self._reads[v]} for n in pending}  # not yet written

        def holds(n):  # held as a table of the database, not written as a file
            return whole and not is_public(n)

        started = []
        cursors = [self.con.cursor() for _ in range(threads)]
        with ThreadPoolExecutor(threads) as pool:
            while pending or running or waiting:
                absent = set(waiting.values())
                ready = [n for n in pending if self._reads[n] <= done and not self._later[n] & absent]
                for name in ready[: threads - len(running)]:
                    pending.remove(name)
                    started.append(name)
                    for read in self._reads[name]:
                        self._define_with_reads(read)
                    query = self._define(name)
                    cur = cursors.pop()
                    held = holds(name)
                    task = pool.submit(
                        self._timed_stream_to,
                        cur,
                        name,
                        None if held else directory / f"{name}.parquet",
                        view_seconds,
                        writer,
                        query,
                        whole,
                    )
                    running[task] = (name, cur, held)
                finished, _ = wait([*running, *waiting], return_when=FIRST_COMPLETED)
                for f in finished:
                    if f in waiting:
                        f.result()
                        name = waiting.pop(f)
                        self._read_file(name, self.base[name])
                        continue
                    name, cur, held = running.pop(f)
                    cursors.append(cur)
                    f.result()
                    tracker().item()
                    # the view reads its file (or table) from now on, defined when a view or query
                    # needs it (most views are read by none: 0.7 ms each saved on the thread that
                    # starts them)
                    if held:
                        self._undefined[name] = f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM {_held(name)}"
                        started.remove(name)
                    else:
                        self._undefined[name] = _file_view(name, directory / f"{name}.parquet")
                    self._on_file.add(name)
                    done.add(name)
                    for read in self._reads[name]:  # a held helper goes once every view above it is written
                        readers[read].discard(name)
                        if holds(read) and not readers[read]:
                            self.con.execute(f"DROP TABLE {_held(read)}")
        for cur in cursors:
            cur.close()
        return started

    def _define(self, name):
        """Prepare deferred view `name` to be streamed: the query that computes it. The view itself
        is not defined when its file splits (sqlfiles.split_view): only its macros, and its query
        is run as it is, which saves DuckDB one binding of the whole query (5-20 ms a view)."""
        text = self._undefined.pop(name, None)
        if text is None:
            return f"SELECT * FROM {name}"
        split = sqlfiles.split_view(text, name)
        if split is None:
            self.con.execute(text)
            return f"SELECT * FROM {name}"
        setup, query = split
        if sqlfiles.has_statements(setup):
            self.con.execute(setup)
        return query

    def _read_file(self, name, path):
        """From now on, `name` reads the Parquet file(s) at `path` (a path or a list of them)."""
        self.con.execute(_file_view(name, path))

    def _timed_stream_to(self, con, name, path, view_seconds, writer, query=None, whole=False):
        t = time.perf_counter()
        self._stream_to(con, name, path, writer, query=query, whole=whole)
        if view_seconds is not None:
            view_seconds[name] = time.perf_counter() - t

    def _stream_to(self, con, name, path, writer, batch_rows=1 << 17, query=None, whole=False):
        """View `name` (or `query`) into the file `path` opened by `writer`, or, when `path` is
        None, into the database's table _held(name)."""
        query = query or f"SELECT * FROM {name}"
        try:
            if path is None:
                con.execute(f"CREATE TABLE {_held(name)} AS {query}")
                return
            reader = (con.execute(query) if whole else con.sql(query)).to_arrow_reader(batch_rows)
        except duckdb.Error as e:
            raise QueryError(self.origin, str(e)) from None
        with writer(path, reader.schema) as w:
            for batch in reader:
                w.write_batch(batch)


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


# Types polars cannot import (INTERVAL: month_day_nano; UNION), and beyond them those a CSV or
# JSON writer cannot hold (VARIANT, BLOB, BIT; MAP, whose keys JSON wants as text): such a
# column, or a LIST/STRUCT/ARRAY holding one, is taken as DuckDB's text of each value (CAST AS
# VARCHAR: INTERVAL '1 day 02:00:00', BLOB 'ab\\x00', MAP {1=x}).
POLARS_TEXT_TYPES = ("INTERVAL", "UNION")
TEXT_TYPES = (*POLARS_TEXT_TYPES, "VARIANT", "BLOB", "BIT", "MAP")
_TYPE_WORDS = re.compile(r"[A-Z_]+")


def as_text(rel: duckdb.DuckDBPyRelation, types: tuple[str, ...]) -> duckdb.DuckDBPyRelation:
    """`rel` with each column whose type is or holds one of `types` cast to VARCHAR."""
    cols = []
    for name, t in zip(rel.columns, rel.types, strict=True):
        ident = '"' + name.replace('"', '""') + '"'
        # a STRUCT's field names are not types: only the upper-case words of its type count
        held = set(_TYPE_WORDS.findall(str(t))) & set(types)
        cols.append(f"CAST({ident} AS VARCHAR) AS {ident}" if held else ident)
    if len(cols) == sum(not c.startswith("CAST(") for c in cols):
        return rel
    return rel.project(", ".join(cols))


# what `tracecols sql` runs: queries, and changes to its in-memory database only
READ_ONLY_KINDS = ("SELECT", "EXPLAIN", "CREATE", "INSERT", "UPDATE", "DELETE", "DROP", "ALTER")


def check_read_only(query, origin):
    """Raise Unsupported unless every statement of `query` is one of READ_ONLY_KINDS: COPY, EXPORT,
    ATTACH, INSTALL, LOAD, SET, PRAGMA … could write files (the inputs among them). Parses only."""
    try:
        with connect() as con:
            kinds = [st.type.name for st in con.extract_statements(query)]
    except duckdb.Error as e:
        raise query_error(origin, query, e) or QueryError(origin, str(e)) from None
    bad = sorted({k for k in kinds if k not in READ_ONLY_KINDS})
    if bad:
        raise Unsupported(
            origin,
            f"tracecols sql runs read-only queries over an in-memory database and writes "
            f"only with -o; {', '.join(bad)} statements are refused",
        )


def _held(name):
    """The table that holds private helper `name` computed by materialise_all_to."""
    return f"__held{name}"


def _file_view(name, path):
    return f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM read_parquet({sql_string(path)})"


def sql_string(v: object) -> str:
    """`v` as a SQL string literal (quotes doubled), or a list or tuple of them as a DuckDB list."""
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(sql_string(x) for x in v) + "]"
    return "'" + str(v).replace("'", "''") + "'"
