"""The same public tables and views, with the same rows, whether a trace is queried in memory,
from a saved directory or from a one-trace lake: one catalog over every store."""

import threading

import pyarrow as pa
import pytest
from conftest import CORPUS, DATA_TRACE
from polars.testing import assert_frame_equal

import tracecols
from tracecols.errors import QueryError
from tracecols.fleet.ingest import ingest_lake
from tracecols.store import parquet

_DLRM = CORPUS / "param/et_replay/tests/inputs/dlrm_kineto.tar.gz.extracted/dlrm_kineto"
CASES = {
    "eager": [DATA_TRACE],  # training step, H100
    "inference": [CORPUS / "TraceLens/tests/traces/inference/vllm_decode_full/graph_execution.json.gz"],
    "multi-rank": sorted(_DLRM.glob("worker[01]_*.json")),  # two ranks of one NCCL job
    "cpu-only": [CORPUS / "HolisticTraceAnalysis/tests/data/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"],
}


@pytest.mark.corpus
@pytest.mark.parametrize("kind", sorted(CASES))
def test_memory_saved_and_lake_agree(kind, tmp_path):
    paths = CASES[kind]
    assert paths
    t = tracecols.open(*paths)
    t.save(tmp_path / "saved")
    saved = tracecols.open(tmp_path / "saved")
    assert ingest_lake([str(p) for p in paths], str(tmp_path / "lake"), jobs=1).ok
    lake = tracecols.Lake(tmp_path / "lake")
    public = [n for n in t.tables if not n.startswith("_")]
    assert "op_perf" in public and "device_specs" in public
    assert set(public) <= set(saved.tables) and set(public) <= set(lake.tables)
    for name in public:
        cols = t.sql(f"select * from {name} limit 0").columns
        # a lake partitions by rank: tables without a rank column gain one there
        q = f"select {', '.join(map(_quoted, cols))} from {name} order by all"
        want = t.sql(q)
        for other in (saved, lake):
            # sums of floats may be added in another order: equal to the last few bits
            assert_frame_equal(other.sql(q), want, check_exact=False, rel_tol=1e-12, abs_tol=1e-9), name


def _quoted(c):
    return '"' + c.replace('"', '""') + '"'


@pytest.mark.corpus
def test_analyze_a_lake_writes_every_public_view(tmp_path):
    import subprocess
    import sys

    paths = sorted((CORPUS / "param/et_replay/tests/inputs/dlrm_kineto.tar.gz.extracted/dlrm_kineto").glob("worker[01]_*.json"))
    assert len(paths) == 2
    assert ingest_lake([str(p) for p in paths], str(tmp_path / "lake"), jobs=1).ok
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from tracecols.cli import main; sys.exit(main())",
            "analyze",
            str(tmp_path / "lake"),
            "-o",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    written = {p.stem for p in (tmp_path / "out").glob("*.parquet")}
    lake = tracecols.Lake(tmp_path / "lake")
    assert written == set(lake.views)
    assert {"stragglers", "collective_skew", "rank_summary", "op_perf", "kernel_stats"} <= written
    assert not {w for w in written if w.startswith("_")}


def test_open_streams_a_big_trace_and_cleans_up(monkeypatch):
    """tracecols.open of a trace over IN_MEMORY_BYTES goes through the streaming ingest into a
    temporary directory: the same rows, and the directory goes with the Trace."""
    import gc
    import os

    import tracecols.pipeline.memory_or_disk as memory_or_disk

    want = tracecols.open(DATA_TRACE)
    monkeypatch.setattr(memory_or_disk, "IN_MEMORY_BYTES", 0)
    t = tracecols.open(DATA_TRACE)
    scratch = t._scratch.name
    assert os.path.isdir(scratch)
    for q in (
        "select * from kernels order by uid",
        "select * exclude (rank) from slices order by uid",
        "select * from kernel_stats order by all",
    ):
        assert_frame_equal(t.sql(q), want.sql(q), check_exact=False, rel_tol=1e-12, abs_tol=1e-9), q
    t.close()
    del t
    gc.collect()
    assert not os.path.exists(scratch)


_PAIRWISE = ("PIECEWISE MERGE JOIN", "IE JOIN", "NESTED LOOP JOIN")


def _plan(con, query):
    return con.execute(f"EXPLAIN {query}").fetchall()[0][1].upper().replace("_", " ")


def test_no_view_is_planned_as_a_join_that_tests_pairs(tmp_path):
    """DuckDB plans a join on inequalities as a merge join, an IEJoin or a nested loop, and an
    as-of join whose left side it thinks small as a nested loop, choosing from size estimates
    that differ between Arrow tables and Parquet files; where they are wrong, the join tests
    pairs by the billion. memory_timeline's search for the op around each memory event took
    0.17 s over Parquet and 8.7 s over Arrow, where it became a merge join (df_index_resolver,
    28k memory events). The views join on equalities and as-of conditions only, and the engine
    keeps every as-of join one, over Arrow tables in memory and over the pipeline's Parquet files."""
    from tracecols.engine.catalog import Engine

    t = tracecols.open(DATA_TRACE)
    for name in t._engine.base:  # the base tables only, as the pipeline writes them
        parquet.write_table(tmp_path / f"{name}.parquet", t._engine.table(name))
    on_disk = Engine(parquet.table_files(tmp_path))
    assert set(on_disk.views) == set(t._engine.views)
    for engine in (t._engine, on_disk):
        for name in engine.views:
            engine._define_named(name)
            plan = _plan(engine.con, f"SELECT * FROM {name}")
            assert not [w for w in _PAIRWISE if w in plan], name
    # what such a plan looks like: a join on an inequality alone, small sides
    assert "NESTED LOOP JOIN" in _plan(t._engine.con, "SELECT * FROM range(9) a(x) JOIN range(3) b(y) ON b.y < a.x")
    asof = "SELECT * FROM range(9) a(x) ASOF JOIN range(3) b(y) ON b.y <= a.x"
    for con in (t._engine.con, on_disk.con.cursor()):  # the cursors that stream the views too
        assert "ASOF JOIN" in _plan(con, asof) and "NESTED LOOP" not in _plan(con, asof)


def test_helpers_are_computed_once_over_a_trace_in_memory(tmp_path):
    """DuckDB expands views inline: a query of tracelens_unified_perf_summary holds
    _tracelens_gpu_events three times. Over a trace in memory each private helper is computed
    the first time a query needs it and read from then on; the results are the same. Over
    files (a saved directory, a lake) nothing is held."""
    t = tracecols.open(DATA_TRACE)
    engine = t._engine
    want = t.sql("select * from tracelens_unified_perf_summary order by all")
    held = set(engine._done)
    assert {"_tracelens_gpu_events", "_tracelens_unified_ops", "_tracelens_op_category"} <= held
    assert all(n.startswith("_") for n in held)  # public views are computed where queried
    computed = []
    engine.table = lambda name, _table=engine.table: computed.append(name) or _table(name)
    assert_frame_equal(t.sql("select * from tracelens_unified_perf_summary order by all"), want)
    assert t.table("_tracelens_gpu_events") is engine._done["_tracelens_gpu_events"]
    assert computed == []  # no helper computed again
    t.save(tmp_path / "saved")
    saved = tracecols.open(tmp_path / "saved")
    saved.sql("select * from tracelens_unified_perf_summary")
    assert saved._engine._done == {}
    # listing the catalog defines every view and computes none; a view named later gets its helpers
    listed = tracecols.open(DATA_TRACE)
    assert "op_perf" in set(listed.sql("select view_name from duckdb_views()")["view_name"])
    assert listed._engine._done == {}
    assert_frame_equal(listed.sql("select * from tracelens_unified_perf_summary order by all"), want)
    assert set(listed._engine._done) == held


def test_views_are_defined_when_a_query_names_them():
    """Opening a trace defines no view; a query defines the views it names and those they read,
    whatever the case it writes them in; a query of DuckDB's catalog sees every view."""
    t = tracecols.open(DATA_TRACE)
    engine = t._engine

    def defined():
        views = engine.con.execute("select view_name from duckdb_views() where not internal").fetchall()
        return {r[0] for r in views} & set(engine.views)  # registered base tables show as views too

    assert defined() == set()  # nothing bound at open: the cost of every view at once (0.5 s) is gone
    total = t.sql("select sum(gpu_sum_ns) as t from OP_PERF_SUMMARY")["t"][0]
    assert {"op_perf_summary", "op_perf", "_device_models", "_tracelens_op_category"} <= defined()
    assert "stacks" not in defined() and "critical_path" not in defined()
    assert total == t.sql("select sum(gpu_sum_ns) as t from op_perf_summary")["t"][0]
    listed = set(t.sql("select view_name from duckdb_views() where not internal")["view_name"])
    assert set(engine.views) <= listed
    t.close()


def test_macros_are_defined_with_the_first_view_that_uses_them():
    """Opening a trace binds no macro module (sql/macros); a view brings those its file's `-- uses:`
    names, and a query that calls a macro by name gets them all."""
    t = tracecols.open(DATA_TRACE)

    def macros():
        rows = t._engine.con.execute("select distinct function_name from duckdb_functions()").fetchall()
        return {r[0] for r in rows if r[0].startswith("_tc_")}

    assert macros() == set()
    t.frame("gpu_timeline")  # uses: intervals
    assert "_tc_covered" in macros() and "_tc_numel" not in macros()
    assert t.sql("select _tc_covered(0, 10, 5) as n")["n"][0] == 5  # 10 - max(0, 5)
    assert "_tc_numel" in macros()
    t.close()


def test_a_saved_trace_reads_a_file_when_a_query_names_it(tmp_path):
    """Opening a saved directory reads none of its Parquet files (DuckDB reads a file's footer when
    a view over it is defined); a query reads those it names and those its views read, a listing
    of the catalog every one."""
    tracecols.open(DATA_TRACE).save(tmp_path / "saved")
    t = tracecols.open(tmp_path / "saved")
    unread = t._engine._unread
    assert {"events", "kernels", "headline", "op_perf"} <= set(unread)
    assert t.frame("headline").height == 1
    assert "headline" not in unread and {"events", "op_perf"} <= set(unread)
    assert t.sql("select count(*) as n from EVENTS")["n"][0] == 2551 and "events" not in unread
    listed = set(t.sql("select table_name from information_schema.tables")["table_name"])
    assert unread == {} and {"op_perf", "kernels"} <= listed
    t.close()


def test_a_trace_in_memory_computes_its_critical_path_when_a_query_first_reads_it(monkeypatch):
    import tracecols.model.derive as derive

    calls = []
    real = derive.critical_path_edges
    monkeypatch.setattr(derive, "critical_path_edges", lambda *a: calls.append(1) or real(*a))
    t = tracecols.open(DATA_TRACE)
    t.frame("headline"), t.frame("top_ops")  # what `analyze` shows reads none of it
    assert calls == [] and "critical_path_edges" in t.tables
    assert t.sql("select count(*) as n from critical_path_edges")["n"][0] > 0
    assert t.sql("select count(*) as n from critical_path")["n"][0] > 0
    assert calls == [1]  # once
    t.close()


def _base_files(tmp_path):
    """The bundled trace analysed into a directory, and its base tables' files (with the device
    peaks, which the pipeline also writes as a file)."""
    from tracecols.model.base_tables import BASE_TABLES
    from tracecols.pipeline import ingest_to_dir

    out = ingest_to_dir([str(DATA_TRACE)], tmp_path / "out")
    return out, {n: p for n, p in parquet.table_files(out).items() if n in BASE_TABLES or n == "device_specs"}


def test_views_run_while_a_base_table_is_still_being_written(tmp_path):
    """A base table given as `later` is read once its future is done: the views that do not read
    it run meanwhile, those that do read the file it ends as."""
    import shutil
    import time
    from concurrent.futures import ThreadPoolExecutor

    import pyarrow.parquet as pq

    from tracecols.engine.catalog import Engine

    out, base = _base_files(tmp_path)
    src = base["critical_path_edges"]
    late = tmp_path / "late" / "critical_path_edges.parquet"
    late.parent.mkdir()
    into = tmp_path / "views"
    into.mkdir()
    engine = Engine({**base, "critical_path_edges": str(late)}, later={"critical_path_edges"})

    def write_when_others_ran():
        deadline = time.monotonic() + 60
        while not (into / "kernel_stats.parquet").exists():  # a view that does not read it
            assert time.monotonic() < deadline, "no view ran while the table was being written"
            time.sleep(0.01)
        shutil.copy(src, late)

    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(write_when_others_ran)
        started = engine.materialise_all_to(into, parquet.writer, threads=2, whole=True, later={"critical_path_edges": future})
    assert started.index("kernel_stats") < started.index("critical_path") < started.index("critical_path_summary")
    for name in ("critical_path", "critical_path_summary", "kernel_stats"):
        assert pq.read_table(into / f"{name}.parquet").equals(pq.read_table(out / f"{name}.parquet")), name
    assert pq.read_table(into / "critical_path.parquet").num_rows > 0


def test_a_failed_later_table_fails_the_views(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    from tracecols.engine.catalog import Engine

    _, base = _base_files(tmp_path)
    engine = Engine({**base, "critical_path_edges": str(tmp_path / "never.parquet")}, later={"critical_path_edges"})

    def fail():
        raise RuntimeError("the critical path failed")

    with ThreadPoolExecutor(1) as pool, pytest.raises(RuntimeError, match="critical path failed"):
        engine.materialise_all_to(
            tmp_path, parquet.writer, threads=2, whole=True, later={"critical_path_edges": pool.submit(fail)}
        )


def _computed(threads, views=("findings", "headline", "top_ops", "kernel_stats", "idle_gaps")):
    t = tracecols.open(DATA_TRACE)
    t._engine.materialise_with_reads(list(views), threads)
    return t._engine


def test_views_over_a_trace_in_memory_run_at_a_time_with_the_same_results(monkeypatch):
    """Over a trace in memory, the views that read none of each other run at a time, each on a
    cursor of its own in a thread of its own (a cursor sees none of the connection's registered
    tables: given to it); the tables held are those computed one after another, row for row.
    optimizable_ops's score sums floating-point numbers in whatever order DuckDB's threads meet
    them, one after another too: not among the views compared."""
    one = _computed(1)
    from tracecols.engine import scheduler

    threads = set()
    computed = scheduler._Cursor.computed

    def recorded(self, *args):
        threads.add(threading.get_ident())
        return computed(self, *args)

    monkeypatch.setattr(scheduler._Cursor, "computed", recorded)
    two = _computed(2)
    assert len(threads) == 2
    assert set(one._done) == set(two._done) and {"findings", "headline", "_device_models"} <= set(one._done)
    for name, t in one._done.items():
        assert t.equals(two._done[name]), name
    # a query of the connection reads the results held
    assert two.con.execute("SELECT count(*) FROM headline").fetchone()[0] == one._done["headline"].num_rows


def test_a_view_failing_while_views_run_at_a_time_is_the_error_it_is_one_at_a_time():
    """A view whose query fails is one line naming what failed, the same whether the views run one
    at a time or two; no thread is left running."""
    errors = []
    for threads in (1, 2):
        t = tracecols.open(DATA_TRACE)
        engine = t._engine
        engine._undefined["kernel_stats"] = "CREATE OR REPLACE VIEW kernel_stats AS SELECT 'none'::INTEGER AS n FROM kernels"
        before = threading.active_count()
        with pytest.raises(QueryError) as e:
            engine.materialise_with_reads(["top_ops", "kernel_stats"], threads)
        assert threading.active_count() == before
        errors.append(str(e.value))
    assert errors[0] == errors[1]
    assert "\n" not in errors[0] and "'none'" in errors[0]


def test_a_small_trace_in_memory_runs_its_views_side_by_side_each_on_one_duckdb_thread():
    """As the pipeline runs a small trace's views: one per core, each query on one DuckDB thread
    (a second thread costs a query this small more than it saves); up to 1M events two at a time,
    beyond one; a big trace in memory keeps DuckDB's threads for each query."""
    from tracecols.pipeline.views_to_files import query_options, view_threads

    t = tracecols.open(DATA_TRACE)
    assert t._engine.con.execute("SELECT current_setting('threads')").fetchone()[0] == 1
    assert view_threads(1000, 2) == 2 and view_threads(1000, 8) == 8 and view_threads(1000, 1) == 1
    assert view_threads(300_000, 8) == 2 and view_threads(2_000_000, 8) == 1
    big = pa.table({"uid": pa.array(range(300_000), pa.int64())})
    assert query_options({"events": big}, None) == {}
    assert query_options({"events": big.slice(0, 1000)}, None) == {"query_threads": 1}
