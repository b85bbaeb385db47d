"""What a Trace and a Lake share: SQL, tables and analyses over one Engine."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

# parses a query before any trace is read: `tracecols sql` refuses one that could write files
from .engine import sqlfiles
from .engine.public import is_public, public_names
from .engine.query_errors import check_read_only as check_read_only

if TYPE_CHECKING:
    import polars as pl
    import pyarrow as pa

    from .engine.catalog import Engine


def _finding_views() -> list[str]:
    return sorted(n for n, folder in sqlfiles.folders().items() if folder == "findings" and n.startswith("finding_"))


def finding_thresholds() -> list[str]:
    """The finding rules whose threshold `Face.findings(thresholds=…)` can replace."""
    import re

    texts = [sqlfiles.view_text(n) for n in _finding_views()]
    return sorted({m for t in texts for m in re.findall(r"_tc_threshold\('(\w+)'", t)})


class Face:
    """The query interface of `tracecols.Trace` and `tracecols.Lake` (each sets `_engine`)."""

    _engine: Engine
    origin: str

    @property
    def tables(self) -> list[str]:
        """Names of the public tables and views (engine/public.py): base tables, then the
        analyses. The private `_` helpers the views read are not listed (nor saved, nor exported)."""
        return self._engine.public

    @property
    def views(self) -> list[str]:
        """The public analyses (sql/ views whose names do not start with `_`), in dependency order."""
        return public_names(self._engine.views)

    def describe(self, view: str) -> pl.DataFrame:
        """What view `view` holds, from its sql/ file's header: one row per column with its
        `column` name, DuckDB `type`, `unit` (ns, µs, ms, s, bytes, GB/s or %; null where it
        has none) and `meaning`. The question the view answers is `answers(view)`."""
        import polars as pl

        rows = sqlfiles.columns(self._view_name(view))
        schema = {"column": pl.String, "type": pl.String, "unit": pl.String, "meaning": pl.String}
        return pl.DataFrame(rows, schema=schema, orient="row")

    def answers(self, view: str) -> str:
        """The question view `view` answers, as its sql/ file's header words it."""
        return sqlfiles.answers(sqlfiles.view_text(self._view_name(view)))

    def _public_name(self, name: str) -> str:
        if name not in self._engine.public:
            from .errors import QueryError

            raise QueryError(self.origin, f"no table or view named {name!r}; see .tables")
        return name

    def _view_name(self, view: str) -> str:
        if view not in self._engine.views:
            from .errors import QueryError

            raise QueryError(self.origin, f"no view named {view!r}; views: {', '.join(sorted(self.views))}")
        return view

    def sql(self, query: str, text_for_files: bool = False) -> pl.DataFrame:
        """Run DuckDB SQL over the tables; returns a polars DataFrame, never None: a query
        without a statement (empty, or comments only) gives an empty DataFrame with no columns
        (DDL gives DuckDB's one-column status frame: `Count` or `Success`). Columns of a type
        polars cannot hold (INTERVAL, UNION) come as DuckDB's text of each value; with
        `text_for_files`, so do those CSV or JSON cannot hold (BLOB, BIT, MAP, VARIANT)."""
        import polars as pl

        df = self._engine.polars(query, text_for_files=text_for_files)
        return pl.DataFrame() if df is None else df

    def arrow(self, query: str) -> pa.Table:
        """Run DuckDB SQL over the tables; returns an Arrow table (with no columns for a query
        without a statement), never None."""
        import pyarrow as pa

        t = self._engine.arrow(query)
        return pa.table({}) if t is None else t

    def head(self, query: str, n: int) -> pa.Table | None:
        """The first `n` rows of a query's result as an Arrow table (DuckDB stops there where
        it can); None for a statement that returns no rows."""
        return self._engine.head(query, n)

    def show(self, query: str, max_rows: int = 50) -> None:
        """Print a query's result as a terminal table."""
        self._engine.show(query, max_rows)

    def query(self, query: str, max_rows: int, timeout_s: float | None = None) -> tuple[pa.Table, bool]:
        """A read-only query for a caller that must bound what it gets (an agent over `tracecols
        mcp`): statements that could write are refused as in `tracecols sql`, at most `max_rows`
        rows come back (and whether more were left out), and a query still running after
        `timeout_s` seconds is interrupted (QueryError)."""
        import threading

        import pyarrow as pa

        from .errors import QueryError

        check_read_only(query, self.origin)
        stopped = threading.Event()

        def stop() -> None:
            stopped.set()
            self._engine.con.interrupt()

        timer = threading.Timer(timeout_s, stop) if timeout_s else None
        if timer:
            timer.start()
        try:
            t = self._engine.head(query, max_rows + 1)
        except Exception:  # DuckDB's InterruptException, or what the interrupted query raised
            if stopped.is_set():
                raise QueryError(self.origin, f"the query ran past its limit of {timeout_s:g} s and was stopped") from None
            raise
        finally:
            if timer:
                timer.cancel()
        if t is None:
            return pa.table({}), False
        return t.slice(0, max_rows), t.num_rows > max_rows

    def table(self, name: str) -> pa.Table:
        """One table or view as Arrow; a view is computed once, and views that read it read the result."""
        return self._engine.materialise(name)

    def schema(self, name: str) -> pa.Schema:
        """The columns and Arrow types of one public table or view, without computing it."""
        return self.arrow(f"SELECT * FROM {self._public_name(name)} LIMIT 0").schema

    def frame(self, name: str) -> pl.DataFrame:
        """One table or view as a polars DataFrame, computed once as with `table`. The CLI and the
        report read analyses this way: by name, never by a query of their own."""
        from .model.frames import frame

        return frame(self.table(self._public_name(name)))

    def findings(self, thresholds: dict[str, float] | None = None) -> pl.DataFrame:
        """The `findings` view: what to fix first, ranked by the time at stake (docs/analyses.md,
        Findings). `thresholds` ({rule: value}) replaces rules' default thresholds for this call
        only; a rule that takes none, or a value that is not a finite number, is a QueryError."""
        if not thresholds:
            return self.frame("findings")
        import math

        from .errors import QueryError

        rules = _finding_views()
        known = finding_thresholds()
        for rule, value in thresholds.items():
            if rule not in known:
                raise QueryError(self.origin, f"no finding rule with a threshold named {rule!r}; rules: {', '.join(known)}")
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise QueryError(self.origin, f"the threshold of rule {rule!r} must be a finite number, not {value!r}")
        # The rules are defined again in a cursor of their own, whose variables hold the
        # thresholds: the views of the connection, once computed (frame), keep the defaults.
        from .model.frames import frame

        with self._engine.over({}, fresh=rules) as cur:
            for rule, value in thresholds.items():
                cur.execute(f"SET VARIABLE tc_threshold_{rule} = {float(value)!r}::DOUBLE")
            return frame(cur.sql("SELECT * FROM findings").to_arrow_table())

    def compute(self, names: list[str]) -> None:
        """Compute the views named and the views they read now, each once, each over the results
        of those beneath it: for a reader of several views that share some (the summary), which
        `table` and `frame` then return. Names that are not views are passed over. Over a trace
        in memory, views that read none of each other run at a time, as many as the pipeline runs
        over the same number of events (pipeline.views_to_files.view_threads) on the cores other
        work leaves idle: a view run beside another on a busy core only costs both time."""
        from .pipeline.views_to_files import view_threads
        from .read.split import idle_cores

        events = getattr(self._engine.base.get("events"), "num_rows", 0)
        self._engine.materialise_with_reads(names, view_threads(events, idle_cores()))

    def analyses(self) -> tuple[dict[str, pa.Table], dict[str, float]]:
        """Every public view, computed: ({name: Arrow table}, {name: seconds}). The private
        helpers they read are computed once on the way (their seconds are listed too)."""
        out: dict[str, pa.Table] = {}
        secs: dict[str, float] = {}
        for name in self._engine.views:
            t0 = time.perf_counter()
            table = self.table(name)
            secs[name] = time.perf_counter() - t0
            if is_public(name):
                out[name] = table
        return out, secs

    def critical_path(self, annotation: str | None = None, summary: bool = False) -> pl.DataFrame:
        """The critical path (docs/analyses.md): the rows of the `critical_path` view — one per
        segment of each profiler step's longest dependency path — or, with `summary`, of
        `critical_path_summary`. With `annotation`, a SQL LIKE pattern over host slice names
        (e.g. 'forward', '[param|%|measure|forward]'), the path is taken through each
        annotation that matches instead of each step (overlapping ones each get theirs)."""
        import polars as pl

        name = "critical_path_summary" if summary else "critical_path"
        if annotation is None:
            return self.sql(f"SELECT * FROM {name}")
        from .errors import QueryError
        from .model.cp_graph import SYNC_COLUMNS, sync_events
        from .model.critical_path import critical_path_edges

        quoted = "'" + annotation.replace("'", "''") + "'"
        if not self.sql(f"SELECT count(*) AS n FROM slices WHERE name LIKE {quoted}")["n"][0]:
            raise QueryError(self.origin, f"no host annotation or op is named like {annotation!r}")
        syncs = sync_events(self.arrow(f"SELECT {', '.join(SYNC_COLUMNS)}, cat, ph FROM events WHERE cat = 'cuda_sync'"))
        edges = critical_path_edges(self.table("slices"), self.table("kernels"), syncs, annotation)
        with self._engine.over({"critical_path_edges": edges}) as cur:
            path = cur.sql(f"SELECT * FROM {name}").to_arrow_table()
        return pl.DataFrame(pl.from_arrow(path))

    def compare(
        self,
        other: Face,
        kinds: tuple[str, ...] = ("step", "phase", "kernel_class", "kernel", "op", "shape", "module", "callpath", "finding"),
        by_device: bool = False,
        min_change_pct: float | None = None,
    ) -> dict[str, pl.DataFrame]:
        """What changed from these traces (A) to `other`'s (B), and whether it is beyond noise:
        {kind: comparison frame} for the step metrics, step phases, kernel classes, kernels, ops
        (by name, by name and input shapes, by the module they ran in) and call paths, and the
        findings that appeared or disappeared (docs/diff.md). Kernels
        match by name over all devices, or by (device, name) with `by_device`. Each row holds
        its per-step samples' test (`significant`: a rank test's q-value below 0.05 and a shift
        of `min_change_pct` % of A or more, default 2)."""
        from .model.diff import diff, findings_diff

        a, b = self._diff_tables(), other._diff_tables()
        out = {k: diff(a, b, k, by_device, min_change_pct) for k in kinds if k != "finding"}
        if "finding" in kinds and "findings" in self.tables and "findings" in other.tables:
            out["finding"] = findings_diff(self.findings(), other.findings(), by_device)
        return out

    def _diff_tables(self) -> dict[str, pl.DataFrame]:
        import polars as pl

        d = {
            "slices": pl.DataFrame(pl.from_arrow(self.table("slices"))),
            "kernels": pl.DataFrame(pl.from_arrow(self.table("kernels"))),
        }
        if "kernel_perf" in self.tables:
            d["kernel_perf"] = self.sql("select * from kernel_perf")
        # an op's input shapes as compact JSON text: the typed column, or for shapes it cannot hold
        # (a TensorList's list of shape lists) the text the trace wrote, kept in args
        d["op_args"] = self.sql(
            """SELECT trace_id, uid, replace(coalesce(to_json(input_dims)::VARCHAR,
                      json_extract(args, '$."Input Dims"')::VARCHAR), ' ', '') AS input_dims
               FROM events WHERE cat = 'cpu_op'"""
        )
        return d

    def redactions(self, trace_id: int) -> tuple[int, int]:
        """How many values were redacted (model/secrets.py) in trace `trace_id`: (in its metadata,
        in its events)."""
        from .model.secrets import REDACTED, sql_redacted_count

        metadata = self.sql(f"SELECT metadata FROM traces WHERE trace_id = {int(trace_id)}").item()
        marks = sql_redacted_count(self.arrow("SELECT * FROM events LIMIT 0").schema)
        in_events = self.sql(f"SELECT coalesce(sum({marks}), 0)::BIGINT FROM events WHERE trace_id = {int(trace_id)}").item()
        return (metadata or "").count(REDACTED), in_events  # distributedInfo is inside metadata

    def unknown_devices(self) -> list[str]:
        """Names of devices that ran work but have no row in the device peak table."""
        rows = self._device_models()
        return sorted({r["name"] or "(no name)" for r in rows if r["ran_work"] and r["model"] is None})

    def assumed_devices(self) -> list[tuple[int, int, str]]:
        """(trace_id, device, name) of the devices that ran work but are not listed in their
        trace's deviceProperties, named after the trace's only listed device type."""
        rows = self._device_models()
        found = [
            (r["trace_id"], r["device"], r["name"])
            for r in rows
            if r["ran_work"] and (r["name_source"] or "").startswith("assumed")
        ]
        return sorted(found, key=lambda d: (d[0] is None, d[0] or 0, d[1] is None, d[1] or 0))

    def _device_models(self) -> list[dict]:
        """The rows of `_device_models` (a handful: one per device of each trace), computed once
        for both questions above and for op_perf, which reads it too: each question a query of its
        own cost a small trace's `analyze` as much as computing them."""
        if "_device_models" not in self._engine.views:
            return []
        return self._engine.materialise("_device_models").to_pylist()

    def close(self) -> None:
        """Release the DuckDB connection (and the files it holds open)."""
        self._engine.con.close()
