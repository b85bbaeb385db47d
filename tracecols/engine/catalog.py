"""The one catalog: a DuckDB connection over base tables held anywhere — Arrow tables in
memory, Parquet files of a saved trace, scans of a lake's files — with the device peak table
and every sql/ view on top, and secrets redacted on the way in (model/secrets.py)."""

from collections.abc import Callable
from contextlib import contextmanager

import duckdb
import pyarrow as pa

from ..errors import QueryError
from ..model.base_tables import BASE_TABLES
from ..model.secrets import METADATA_TABLES, redact_table, sql_candidates
from . import scheduler, sqlfiles
from .connect import connect, sql_string
from .public import is_public, public_names
from .query_errors import USER_ERRORS, failed_query, query_error
from .specs import device_specs_table
from .text_columns import POLARS_TEXT_TYPES, TEXT_TYPES, as_text

# a query that reads DuckDB's own catalog sees every view: the user lists what there is
_CATALOG_WORDS = {"information_schema", "duckdb_views", "duckdb_tables", "duckdb_columns", "show", "describe", "summarize"}


class Scan(str):
    """A SQL table expression to serve as a base table (a lake's `read_parquet([...])`)."""


class Engine:
    """Registers base tables and defines every sql/ view over them.

    `tables`: {name: Arrow table | Parquet path(s) | Scan | the function of no arguments that
    computes an Arrow table, when a query first names it}. `redact`: secrets are redacted on
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
        # base tables held as Parquet files, not read yet: {name: the statement that reads its file}.
        # DuckDB reads a file's footer when a view over it is defined: a saved trace of some 80
        # files defines each as a query first names it (_read_bases), as it does the views
        self._unread: dict[str, str] = {}
        # base tables given as the function that computes them (the critical path's edges of a
        # trace read in memory), computed when a query first names them, as the files are read
        self._deferred: dict[str, Callable[[], pa.Table]] = {}
        if self._persist:  # private helpers and the redacted rows sit in a schema apart (public.py)
            self.con.execute(f"CREATE SCHEMA IF NOT EXISTS {sqlfiles.PRIVATE_SCHEMA}")
        for name, t in tables.items():
            if callable(t) and not redact and not self._persist:
                self._deferred[name] = self.base[name] = t
                continue
            if callable(t):
                t = t()
            if redact and name in METADATA_TABLES:
                t = redact_table(t if isinstance(t, pa.Table) else self._read_all(t))
            elif redact and not clean:
                t = self._redacted(name, t)
            if isinstance(t, pa.Table):
                self._register(name, t)
            elif isinstance(t, Scan):
                self.con.execute(f"CREATE VIEW {name} AS SELECT * FROM {t}")
            elif name not in later:
                if self._persist:  # a database file is read by other programs: every table now
                    self._read_file(name, t)
                else:
                    self._unread[name] = scheduler.file_view(name, t)
            self.base[name] = t
        if "device_specs" not in self.base:  # the device peak table, for op_perf
            self.base["device_specs"] = device_specs_table()
            self._register("device_specs", self.base["device_specs"])
        # the macro modules (sql/macros) are defined as the first view that uses one is: a module
        # costs some ms to bind, and most queries need one or none
        self._macro_modules = sqlfiles.macro_modules()
        self._macros_defined: set[str] = set()
        files = sqlfiles.load_all()
        order = sqlfiles.ordered(files, set(self.base), BASE_TABLES)
        self.views = [n for n in order if n not in tables]
        # {name: (text, depends)} of every sql/ file over these tables, those a saved store holds as
        # files among them: `over` computes them again
        self._sql = {n: (files[n][0], set(files[n][1])) for n in order}
        self._reads = {n: self._sql[n][1] & set(self.views) for n in self.views}
        self._later = {n: set(files[n][1]) & set(later) for n in self.views}  # the later tables each reads
        # A view is defined when a query first names it (_define_named), with the views it reads:
        # DuckDB binds a view, and every view beneath it again, when it is defined: defining them
        # all is a cost every open would pay whether it ran one query or none (docs/performance.md,
        # "Views defined when first named"). The pipeline's materialise_all_to defines each view
        # once the views it reads are files.
        # A database file gets every view now: it is read by other programs.
        self._undefined = {} if self._persist else {n: files[n][0] for n in self.views}
        # Over a trace held in memory, a private helper is computed once, when a query first needs
        # it: DuckDB expands views inline, and one query of tracelens_unified_perf_summary computed
        # _tracelens_gpu_events three times (docs/performance.md, "Private helpers held once").
        # Not over files: a lake's helpers grow with its ranks and are not held.
        self._memoise = not self._persist and all(isinstance(t, pa.Table) or n in self._deferred for n, t in self.base.items())
        # a database file lists the public views only
        self._private = {n for n in self.views if not is_public(n)} if self._persist else set()
        for name in self.views:
            if name not in self._undefined:
                self._define_macros(files[name][0])
                self.con.execute(sqlfiles.private_in_schema(files[name][0], self._private))

    def _define_named(self, query):
        """Define the views `query` names (any word of it that is a view's name, in any case), each
        after the views it reads. A query that lists the catalog gets every view. Over a trace in
        memory, the private helpers beneath the views it names are computed (those it only lists
        are not)."""
        lowered = query.lower()
        if "_tc_" in lowered:  # a macro called by name
            self._define_macros(None)
        if not self._undefined and not self._memoise and not self._unread and not self._deferred:
            return
        words = sqlfiles.words(lowered)
        listing = bool(words & _CATALOG_WORDS)
        if listing:
            self._define_macros(None)
        self._read_bases([*self._unread, *self._deferred] if listing else words)
        for name in list(self._undefined) if listing else [n for n in self._undefined if n in words]:
            self._define_with_reads(name, hold=not listing)
        if self._memoise:  # views defined by a listing, then named
            for name in words & self._reads.keys():
                self._hold_helpers(name)

    def _define_with_reads(self, name, hold=True):
        text = self._undefined.get(name)
        if text is None:
            return
        if hold and self._memoise and not is_public(name) and name not in self._on_file and sqlfiles.split_view(text, name):
            self.materialise(name)  # held: computed by its own query, never defined from its text
            return
        del self._undefined[name]
        if name not in self._on_file:  # a view computed to a file reads that file alone
            for read in sorted(self._reads[name]):
                self._define_with_reads(read, hold)
            self._read_bases_in(text)
        self._define_macros(text)
        self.con.execute(text)
        # held before the views above it are defined: DuckDB binds those over the result
        if hold and self._memoise and not is_public(name):
            self.materialise(name)

    def _read_bases(self, names):
        """From now on, the base tables among `names` not read yet read their files, and those
        not computed yet are computed."""
        for name in names:
            statement = self._unread.pop(name, None)
            if statement is not None:
                self.con.execute(statement)
            compute = self._deferred.pop(name, None)
            if compute is not None:
                self.base[name] = compute()
                self._register(name, self.base[name])

    def _read_bases_in(self, text):
        """The base tables not read yet that the SQL `text` names (a view's `-- depends:` leaves
        `events` out) read their files from now on."""
        if self._unread or self._deferred:
            self._read_bases(sqlfiles.words(text))

    def _define_macros(self, text):
        """Define the macro modules the sql/ file `text` uses (its `-- uses:` lines), and those they
        use, that are not defined yet; every module when `text` is None."""
        wanted = list(self._macro_modules) if text is None else sqlfiles.uses(text)
        for module in sqlfiles.macro_order(wanted, self._macro_modules):
            if module not in self._macros_defined:
                self.con.execute(self._macro_modules[module])
                self._macros_defined.add(module)

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
            raise failed_query(self.origin, query, e) from None

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
        self._read_bases([name])
        t = self.base.get(name)
        if isinstance(t, pa.Table):
            return t
        if name not in self.names:
            raise QueryError(self.origin, f"no table named {name!r}; tables: {', '.join(self.public)}")
        return self.arrow(f"SELECT * FROM {name}")

    @contextmanager
    def over(self, tables, fresh=()):
        """A cursor in which the tables or views named in `tables` ({name: Arrow table}) are those
        tables, and every view that reads them, directly or through others, is computed over them:
        the same analyses over other rows (Face.critical_path over windows of the caller's
        choosing). The views named in `fresh`, and those that read them, are defined again there
        too: computed anew in the cursor, with its own settings (Face.findings's thresholds, DuckDB
        variables of that cursor). The connection itself, and every other cursor, still see their own.

        DuckDB binds a view's names when a query reads it, temporary objects first: the tables
        are registered in the cursor under the names they stand for, and the views above them are
        defined again there as temporary views from their own query text (one held by
        `materialise` reads its frozen result, a saved store's holds its file). A cursor sees none of the connection's registered
        Arrow tables, so they are registered in it too."""
        affected = (self._readers_of(set(tables)) | self._readers_of(set(fresh)) | (set(fresh) & set(self._sql))) - set(tables)
        for name in affected:  # what they read that stays as it is must exist in the catalog
            for read in self._sql[name][1] - affected:
                self._define_with_reads(read)
        queries = {}
        for name in [n for n in self._sql if n in affected]:  # each after the views it reads
            self._read_bases_in(self._sql[name][0])
            self._define_macros(self._sql[name][0])
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
        t = self._computed_once(name) if name in self._undefined else None
        if t is None:
            t = self.table(name)
        if name in self.views:
            self._hold(name, t)
        return t

    def _hold(self, name, t):
        """View `name` reads its result `t` from now on, and so does every view above it."""
        self.con.register(f"__done_{name}", t)
        self._registered[f"__done_{name}"] = t
        self.con.execute(f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM __done_{name}")
        self._done[name] = t

    def _computed_once(self, name):
        """View `name`, not defined yet, computed by its own query once the views it reads are
        defined: DuckDB binds a view's whole query when the view is defined and again when it is
        read; this binds it once. None when its file is not one view (sqlfiles.split_view). Errors
        are told as those of `SELECT * FROM name`."""
        split = None if name in self._on_file else sqlfiles.split_view(self._undefined[name], name)
        if split is None:
            return None
        for read in sorted(self._reads[name]):
            self._define_with_reads(read)
        if self._memoise:
            self._hold_helpers(name)
        self._read_bases_in(self._undefined[name])
        self._define_macros(self._undefined.pop(name))
        setup, query = split
        named = f"SELECT * FROM {name}"
        try:
            if sqlfiles.has_statements(setup):
                self.con.execute(setup)
            # DuckDB's DB-API result binds the query once, where a relation binds it to learn its
            # columns and again to run it (the warning it gives for the copy: scheduler.py)
            return self.con.execute(query).to_arrow_table()
        except duckdb.Error as e:
            raise failed_query(self.origin, named, e) from None

    def materialise_with_reads(self, names, threads=1):
        """Compute the views named, and every view they read, each once and each after the views it
        reads (`materialise`): a view read by several of them (gpu_timeline by headline, top_ops and
        graph_replay_share) is computed once instead of inside each, and each query plans only its
        own view over the results beneath it. Names that are not views are passed over.

        Over a trace in memory, up to `threads` views run at a time, each once the views it reads
        are computed (scheduler.materialise_in_memory)."""
        if threads > 1 and self._memoise:
            scheduler.materialise_in_memory(self, names, threads)
            return
        wanted = scheduler.wanted(self, names)
        for name in self.views:
            # a private helper over a trace in memory is held when the first view above it is defined
            if name in wanted and (is_public(name) or not self._memoise):
                self.materialise(name)

    def materialise_all_to(self, directory, writer, threads=1, view_seconds=None, only=None, whole=False, later=None):
        """Every view computed once, each result streamed to its own Parquet file, which the view
        then reads (scheduler.materialise_all_to)."""
        return scheduler.materialise_all_to(self, directory, writer, threads, view_seconds, only, whole, later)

    def _read_file(self, name, path):
        """From now on, `name` reads the Parquet file(s) at `path` (a path or a list of them)."""
        self.con.execute(scheduler.file_view(name, path))
