"""Every view of a catalog computed once through Parquet files (Engine.materialise_all_to): each
result streamed to its own file, which the view then reads, as many views at a time as there are
threads, each once the views it reads are files and the later base tables it reads are there.
Over a trace in memory, the views asked for computed and held the same way, several at a time
(materialise_in_memory)."""

import time
import warnings
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

import duckdb
import pyarrow as pa

from ..errors import QueryError
from ..progress import tracker
from . import sqlfiles
from .connect import sql_string
from .public import is_public
from .query_errors import failed_query

# A small trace's views are fetched through DuckDB's DB-API result, which binds a query once
# where a relation binds it twice; DuckDB warns that its Arrow output copies the rows, a copy
# of a small result taken knowingly (materialise_all_to's `whole`).
warnings.filterwarnings("ignore", "Arrow output on a DB-API result", UserWarning)


def materialise_all_to(engine, directory, writer, threads=1, view_seconds=None, only=None, whole=False, later=None):
    """Like Engine.materialise(), for every view of `engine`, through Parquet files: each result
    is streamed to `directory`/<view>.parquet (never held whole in memory, unless `whole`) and the
    view then reads that file. `writer(path, schema)` opens a file for the batches of one view (a
    context manager with `write_batch`: store.parquet.writer); the engine writes no file format
    of its own. Up to `threads` views run at a time, each once the views it reads are files.

    `whole`: each result is computed whole before it is written, which DuckDB does with one
    binding of the query where a streamed result takes two. For small results only: a whole
    result is copied once more on its way to Arrow.

    Over a small trace a view is mostly per-query overhead that leaves a core idle; over a big one
    DuckDB already keeps every core busy, and a second view's batches only add to the peak. The
    base tables must be Parquet files: a registered Arrow table is not seen by a cursor.
    `view_seconds`, when a dict, receives each view's own wall time (its query and its file).
    `only` (names) limits the work to those views and the views they read. Returns the
    names of the views written, in the order they were started.

    With `whole`, a private helper (`_name`) is held as a table of the database instead of a
    file: only the views above it read it, and a file would be compressed, written and decoded
    again for them. It is not written to `directory` and not among the names returned, and it is
    dropped once every view that reads it is written: after this call it is no longer there to
    be queried. (docs/performance.md, "Views written to files", has the measurements.)

    `later`: {name: Future} for the base tables the Engine was told come later (`later`); a
    view reading one (directly or through another view) starts once its future is done, so
    the views that do not read it run meanwhile. Its exception, if any, is raised here.
    """
    registered = [n for n, t in engine.base.items() if isinstance(t, pa.Table)]
    if registered:
        raise ValueError(f"materialise_all_to needs Parquet base tables, not {registered}")
    run = _Run(engine, directory, writer, threads, view_seconds, whole, later or {})
    return run.all([n for n in engine.views if n in wanted(engine, only)])


def wanted(engine, only):
    """The views asked for (`only`, None for all) and, recursively, those they read."""
    if only is None:
        return set(engine.views)
    todo, wanted = [n for n in only if n in engine._reads], set()
    while todo:
        n = todo.pop()
        if n not in wanted:
            wanted.add(n)
            todo += engine._reads[n]
    return wanted


class _Run:
    """One materialise_all_to: the views pending, running and done, and the later base tables
    still awaited."""

    def __init__(self, engine, directory, writer, threads, view_seconds, whole, later):
        self.engine, self.directory, self.writer = engine, directory, writer
        self.threads, self.view_seconds, self.whole = threads, view_seconds, whole
        self.waiting = {f: n for n, f in later.items()}  # base tables not read yet
        self.running: dict[Future, tuple[str, duckdb.DuckDBPyConnection, bool]] = {}
        self.done: set[str] = set()
        self.started: list[str] = []
        self.readers: dict[str, set[str]] = {}  # {view: the views that read it not yet written}

    def all(self, pending: list[str]) -> list[str]:
        self.readers = {n: {v for v in pending if n in self.engine._reads[v]} for n in pending}
        # the files and macros the views need, before any runs: none is defined on the connection
        # while the views' queries run on its cursors
        for name in pending:
            text = self.engine._undefined.get(name)
            if text is not None:
                self.engine._read_bases_in(text)
                self.engine._define_macros(text)
        cursors = [self.engine.con.cursor() for _ in range(self.threads)]
        with ThreadPoolExecutor(self.threads) as pool:
            while pending or self.running or self.waiting:
                self._start_ready(pool, pending, cursors)
                finished, _ = wait([*self.running, *self.waiting], return_when=FIRST_COMPLETED)
                for f in finished:
                    if f in self.waiting:
                        f.result()
                        name = self.waiting.pop(f)
                        self.engine._read_file(name, self.engine.base[name])
                    else:
                        cursors.append(self._written(f))
        for cur in cursors:
            cur.close()
        return self.started

    def _holds(self, name: str) -> bool:
        """Whether view `name` is held as a table of the database, not written as a file."""
        return self.whole and not is_public(name)

    def _start_ready(self, pool, pending, cursors):
        engine = self.engine
        absent = set(self.waiting.values())
        ready = [n for n in pending if engine._reads[n] <= self.done and not engine._later[n] & absent]
        for name in ready[: self.threads - len(self.running)]:
            pending.remove(name)
            self.started.append(name)
            for read in engine._reads[name]:
                engine._define_with_reads(read)
            query = _query_of(engine, name)
            cur = cursors.pop()
            held = self._holds(name)
            path = None if held else self.directory / f"{name}.parquet"
            task = pool.submit(
                _timed_stream_to, engine.origin, cur, name, path, self.view_seconds, self.writer, query, self.whole
            )
            self.running[task] = (name, cur, held)

    def _written(self, f):
        """View `name` of finished task `f` is written: it reads its file (or table) from now on;
        returns the cursor it ran on."""
        engine = self.engine
        name, cur, held = self.running.pop(f)
        f.result()
        tracker().item()
        # defined when a view or query needs it: most views are read by none, and defining one
        # costs the thread that starts the views
        if held:
            engine._undefined[name] = f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM {held_table(name)}"
            self.started.remove(name)
        else:
            engine._undefined[name] = file_view(name, self.directory / f"{name}.parquet")
        engine._on_file.add(name)
        self.done.add(name)
        for read in engine._reads[name]:  # a held helper goes once every view above it is written
            self.readers[read].discard(name)
            if self._holds(read) and not self.readers[read]:
                engine.con.execute(f"DROP TABLE {held_table(read)}")
        return cur


def materialise_in_memory(engine, names, threads):
    """Engine.materialise_with_reads over a trace in memory, up to `threads` views at a time: each
    starts once the views it reads are computed, runs on a cursor of its own, and its result is
    then held as `materialise` holds it, for the views above it to read.

    Over a small trace a view's query is mostly DuckDB's binding and planning, which leaves a
    core idle. A cursor sees none of the connection's registered Arrow tables (the base tables,
    the results held): each is registered on a cursor before the first query that runs there.
    The views, macros and settings of the database are the connection's, seen by every cursor;
    they are defined only here, between the queries that the cursors run."""
    pending = [n for n in engine.views if n in wanted(engine, names) and n not in engine._done]
    idle = [_Cursor(engine.con.cursor()) for _ in range(threads)]
    every = list(idle)
    running: dict[Future, tuple[str, _Cursor]] = {}
    try:
        with ThreadPoolExecutor(threads) as pool:
            while pending or running:
                ready = [n for n in pending if engine._reads[n] <= engine._done.keys()]
                for name in ready[: len(idle)]:
                    pending.remove(name)
                    query = _query_of(engine, name)
                    cur = idle.pop()
                    task = pool.submit(cur.computed, engine.origin, name, query, _registered_for(engine, name))
                    running[task] = (name, cur)
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for f in finished:
                    name, cur = running.pop(f)
                    idle.append(cur)
                    engine._hold(name, f.result())
    finally:
        for cur in every:
            cur.con.close()


def _registered_for(engine, name: str) -> dict[str, pa.Table]:
    """The registered tables that view `name` reads: the base tables its file names and the results
    held of the views it names (each a view over its `__done_` table), everything beneath those
    being held results too. A registration costs about as much as binding a small query."""
    words = sqlfiles.words(engine._sql[name][0])
    return {n: t for n, t in engine._registered.items() if n in words or n.removeprefix("__done_") in words}


class _Cursor:
    """A cursor of materialise_in_memory, with the registered tables it has been given."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.con = con
        self.registered: set[str] = set()

    def computed(self, origin: str, name: str, query: str, registered: dict[str, pa.Table]) -> pa.Table:
        """View `name` computed by `query`; errors told as those of `SELECT * FROM name`."""
        for table, t in registered.items():
            if table not in self.registered:
                self.con.register(table, t)
                self.registered.add(table)
        try:
            return self.con.execute(query).to_arrow_table()
        except duckdb.Error as e:
            raise failed_query(origin, f"SELECT * FROM {name}", e) from None


def _query_of(engine, name):
    """Prepare deferred view `name` to be run on a cursor: the query that computes it. The view itself
    is not defined when its file splits (sqlfiles.split_view): only its macros, and its query
    is run as it is, which saves DuckDB one binding of the whole query."""
    text = engine._undefined.pop(name, None)
    if text is None:
        return f"SELECT * FROM {name}"
    engine._read_bases_in(text)
    engine._define_macros(text)
    split = sqlfiles.split_view(text, name)
    if split is None:
        engine.con.execute(text)
        return f"SELECT * FROM {name}"
    setup, query = split
    if sqlfiles.has_statements(setup):
        engine.con.execute(setup)
    return query


def _timed_stream_to(origin, con, name, path, view_seconds, writer, query=None, whole=False):
    t = time.perf_counter()
    _stream_to(origin, con, name, path, writer, query=query, whole=whole)
    if view_seconds is not None:
        view_seconds[name] = time.perf_counter() - t


def _stream_to(origin, con, name, path, writer, batch_rows=1 << 17, query=None, whole=False):
    """View `name` (or `query`) into the file `path` opened by `writer`, or, when `path` is
    None, into the database's table held_table(name)."""
    query = query or f"SELECT * FROM {name}"
    try:
        if path is None:
            con.execute(f"CREATE TABLE {held_table(name)} AS {query}")
            return
        reader = (con.execute(query) if whole else con.sql(query)).to_arrow_reader(batch_rows)
    except duckdb.Error as e:
        raise QueryError(origin, str(e)) from None
    with writer(path, reader.schema) as w:
        for batch in reader:
            w.write_batch(batch)


def held_table(name):
    """The table that holds private helper `name` computed by materialise_all_to."""
    return f"__held{name}"


def file_view(name, path):
    """The statement that makes `name` read the Parquet file(s) at `path`."""
    return f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM read_parquet({sql_string(path)})"
