"""The sql/ files as modules: each header's column list against DESCRIBE, each `-- depends:`
line against the names its SQL reads, and the loader's errors on a planted missing or
circular dependency."""

import re

import duckdb
import pytest
from conftest import DATA_TRACE

import tracecols
from tracecols.engine import sqlfiles
from tracecols.model.base_tables import BASE_TABLES

TYPES = (
    r"STRUCT\([\w ,]+\)\[\]|BIGINT\[\]|VARCHAR\[\]|INTEGER\[\]|DOUBLE\[\]|INTEGER|BIGINT|UBIGINT|HUGEINT|VARCHAR|DOUBLE|FLOAT|"
    r"BOOLEAN|TIMESTAMP|DATE"
)
_PART = re.compile(r"\s*([\w\"%(), ./-]+?)\s+(" + TYPES + r")(?![\w\[])")
FILES = sqlfiles.load_all()


def _documented(name):
    """[(column, type)] from the file's `-- Columns` section: indented lines of `name[, name…] TYPE
    meaning`, several per line when separated by `;`; `every column of X` takes X's list, `every
    column of X but a, b` all of it but those."""
    lines = FILES[name][0].splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(r"--\s*Columns", line))
    out = []
    every = re.search(r"every column of (\w+)(?: but ([\w, ]+))?", lines[start])
    if every:
        but = {c.strip() for c in (every.group(2) or "").split(",")}
        out += [c for c in _documented(every.group(1)) if c[0] not in but]
    for line in lines[start + 1 :]:
        if not line.startswith("--"):
            break
        if not line[2:].startswith("   "):
            continue
        for part in line[2:].split(";"):
            m = _PART.match(part)
            if m:
                out += [(n.strip().strip('"'), m.group(2)) for n in m.group(1).split(",") if n.strip()]
    return out


@pytest.fixture(scope="module")
def trace():
    return tracecols.open(DATA_TRACE)


def test_every_file_defines_a_view(trace):
    assert set(FILES) <= set(trace._engine.views)  # private helpers included


@pytest.mark.parametrize("name", sorted(FILES))
def test_header_lists_the_columns_of_describe(trace, name):
    d = trace.sql(f"DESCRIBE SELECT * FROM {name}")
    assert _documented(name) == list(zip(d["column_name"], d["column_type"])), name


def _referenced(name):
    """The base tables and sql/ views that a file's SQL reads (FROM / JOIN), besides itself."""
    text = re.sub(r"--[^\n]*", "", FILES[name][0])
    known = set(FILES) | set(BASE_TABLES) | {"device_specs"}
    read = {m.group(2) for m in re.finditer(r"\b(FROM|JOIN)\s+(\w+)", text, re.IGNORECASE)}
    return (read & known) - {name, "events"}


@pytest.mark.parametrize("name", sorted(FILES))
def test_depends_line_names_what_the_sql_reads(name):
    assert set(FILES[name][1]) - {"events"} == _referenced(name)


def test_a_missing_dependency_is_an_error(tmp_path):
    (tmp_path / "a.sql").write_text("-- depends: kernels, no_such_view\nCREATE VIEW a AS SELECT 1;\n")
    with pytest.raises(sqlfiles.SqlModuleError, match="a -> no_such_view"):
        sqlfiles.ordered(sqlfiles.load_all(tmp_path), {"kernels"}, BASE_TABLES)


def test_a_circle_is_an_error(tmp_path):
    (tmp_path / "a.sql").write_text("-- depends: b\nCREATE VIEW a AS SELECT * FROM b;\n")
    (tmp_path / "b.sql").write_text("-- depends: a\nCREATE VIEW b AS SELECT * FROM a;\n")
    (tmp_path / "c.sql").write_text("-- depends: kernels\nCREATE VIEW c AS SELECT * FROM kernels;\n")
    with pytest.raises(sqlfiles.SqlModuleError, match="circle: a, b"):
        sqlfiles.ordered(sqlfiles.load_all(tmp_path), {"kernels"}, BASE_TABLES)


def test_a_base_table_this_store_lacks_leaves_its_views_out(tmp_path):
    (tmp_path / "a.sql").write_text("-- depends: graph_replays\nCREATE VIEW a AS SELECT 1;\n")
    (tmp_path / "b.sql").write_text("-- depends: a\nCREATE VIEW b AS SELECT 1;\n")
    (tmp_path / "c.sql").write_text("-- depends: kernels\nCREATE VIEW c AS SELECT 1;\n")
    assert sqlfiles.ordered(sqlfiles.load_all(tmp_path), {"kernels"}, BASE_TABLES) == ["c"]


def test_the_checkers_catch_a_planted_drift(trace, monkeypatch):
    text, deps = FILES["kernel_stats"]
    assert "\n--   name " in text
    monkeypatch.setitem(FILES, "kernel_stats", (text.replace("\n--   name ", "\n--   kernel_name ", 1), deps + ["slices"]))
    d = trace.sql("DESCRIBE SELECT * FROM kernel_stats")
    assert _documented("kernel_stats") != list(zip(d["column_name"], d["column_type"]))
    assert set(FILES["kernel_stats"][1]) - {"events"} != _referenced("kernel_stats")


def test_two_files_of_one_name_are_an_error(tmp_path):
    for d in ("ops", "time"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "a.sql").write_text("-- depends: kernels\nCREATE VIEW a AS SELECT 1;\n")
    with pytest.raises(sqlfiles.SqlModuleError, match="two sql/ files define a"):
        sqlfiles.load_all(tmp_path)


@pytest.mark.parametrize("name", sorted(FILES))
def test_the_query_alone_gives_the_columns_of_the_view(trace, name):
    """The streaming path runs each view's query without defining the view (sqlfiles.split_view):
    every file must split, and its query must answer with the view's columns."""
    setup, query = sqlfiles.split_view(FILES[name][0], name)
    assert "CREATE OR REPLACE VIEW" not in setup.upper()
    # the engine runs the query as one statement and the setup only when it holds SQL
    con = duckdb.connect()
    assert len(con.extract_statements(query)) == 1
    assert sqlfiles.has_statements(setup) == bool(con.extract_statements(setup))
    d = trace.sql(f"DESCRIBE SELECT * FROM {name}")
    q = trace.sql(f"DESCRIBE {query}")
    assert list(zip(q["column_name"], q["column_type"])) == list(zip(d["column_name"], d["column_type"]))


def test_split_view_declines_what_is_not_one_view_of_that_name():
    assert sqlfiles.split_view("CREATE OR REPLACE VIEW b AS SELECT 1;", "a") is None
    assert sqlfiles.split_view("CREATE VIEW a AS SELECT 1;", "a") is None
    two = "CREATE OR REPLACE VIEW a AS SELECT 1;\nCREATE OR REPLACE VIEW a AS SELECT 2;"
    assert sqlfiles.split_view(two, "a") is None
    assert sqlfiles.split_view("-- a\nCREATE MACRO m() AS 1;\nCREATE OR REPLACE VIEW a AS\nSELECT m();\n", "a") == (
        "-- a\nCREATE MACRO m() AS 1;\n",
        "SELECT m()",
    )


def test_the_sql_folders_keep_their_layers():
    assert sqlfiles.layering_errors() == []


def test_generic_folders_sit_below_the_specialised_ones_and_the_summary_on_top():
    rank = {folder: i for i, layer in enumerate(sqlfiles.LAYERS) for folder in layer}
    assert set(rank) == set(sqlfiles.folders().values())  # every folder of sql/ has a layer
    for generic in ("core", "time", "memory", "ops", "kernels"):
        for special in ("serving", "fleet", "compat/tracelens", "summary"):
            assert rank[generic] < rank[special], (generic, special)
    assert sqlfiles.folders()["headline"] == "summary"
    assert max(rank.values()) == rank["summary"]


@pytest.fixture
def sql_copy(tmp_path):
    import shutil

    copy = tmp_path / "sql"
    shutil.copytree(sqlfiles.sql_dir(), copy)
    return copy


def test_a_planted_layer_violation_is_caught(sql_copy):
    f = sql_copy / "time" / "gpu_timeline.sql"
    f.write_text(
        f.read_text().replace("-- depends: _kernels_in_span, traces", "-- depends: _kernels_in_span, traces, inference_steps")
    )
    assert sqlfiles.layering_errors(sql_copy) == [
        "gpu_timeline (time/) reads inference_steps (serving/), which is not in a lower layer"
    ]


def test_a_summary_below_what_it_summarises_and_a_folder_without_layer_are_caught(sql_copy):
    (sql_copy / "summary" / "headline.sql").rename(sql_copy / "core" / "headline.sql")
    (sql_copy / "extra").mkdir()
    (sql_copy / "extra" / "x.sql").write_text("-- depends: kernels\nCREATE OR REPLACE VIEW x AS SELECT 1;\n")
    assert sqlfiles.layering_errors(sql_copy) == [
        "x: folder extra/ is in no layer",
        "headline (core/) reads gpu_timeline (time/), which is not in a lower layer",
        "headline (core/) reads top_ops (ops/), which is not in a lower layer",
        "headline (core/) reads inference_steps (serving/), which is not in a lower layer",
    ]


def test_peers_of_one_layer_do_not_read_each_other(sql_copy):
    f = sql_copy / "memory" / "memory_summary.sql"
    f.write_text(f.read_text().replace("-- depends: memory_timeline", "-- depends: memory_timeline, idle_time"))
    assert sqlfiles.layering_errors(sql_copy) == [
        "memory_summary (memory/) reads idle_time (time/), which is not in a lower layer"
    ]


def test_no_view_defines_a_macro_and_each_calls_only_the_modules_it_declares():
    assert sqlfiles.macro_errors() == []
    assert set(sqlfiles.macro_modules()) == {"args", "intervals", "python_text", "rules", "shapes", "tracelens"}
    assert sqlfiles.uses(FILES["op_perf"][0]) == ["intervals", "shapes"]


def test_planted_macro_faults_are_caught(sql_copy):
    f = sql_copy / "ops" / "op_perf.sql"
    f.write_text(f.read_text().replace("-- uses: intervals, shapes\n", "-- uses: intervals, nowhere\n"))
    f = sql_copy / "kernels" / "kernel_stats.sql"
    f.write_text(
        f.read_text().replace("CREATE OR REPLACE VIEW", "CREATE OR REPLACE MACRO _tc_two() AS 2;\nCREATE OR REPLACE VIEW")
    )
    f = sql_copy / "memory" / "memory_summary.sql"
    f.write_text(f.read_text().replace("-- depends: memory_timeline\n", "-- depends: memory_timeline\n-- uses: args\n"))
    assert sqlfiles.macro_errors(sql_copy) == [
        "kernel_stats defines macros _tc_two: they belong in a module of sql/macros/",
        "memory_summary uses macro module args without calling it",
        "op_perf uses macro module nowhere, which does not exist",
        "op_perf calls _tc_at, from module shapes, not on its uses: line",
        "op_perf calls _tc_dtype_bytes, from module shapes, not on its uses: line",
        "op_perf calls _tc_ints, from module shapes, not on its uses: line",
        "op_perf calls _tc_numel, from module shapes, not on its uses: line",
        "op_perf calls _tc_precision, from module shapes, not on its uses: line",
        "op_perf calls _tc_true, from module shapes, not on its uses: line",
    ]


def test_macros_come_each_after_the_modules_it_uses(tmp_path):
    (tmp_path / "macros").mkdir()
    (tmp_path / "macros" / "a.sql").write_text("-- uses: b\nCREATE OR REPLACE MACRO _tc_a() AS _tc_b() + 1;\n")
    (tmp_path / "macros" / "b.sql").write_text("CREATE OR REPLACE MACRO _tc_b() AS 1;\n")
    (tmp_path / "macros" / "unused.sql").write_text("CREATE OR REPLACE MACRO _tc_c() AS 3;\n")
    (tmp_path / "v.sql").write_text("-- depends: kernels\n-- uses: a\nCREATE OR REPLACE VIEW v AS SELECT _tc_a() AS x;\n")
    assert sqlfiles.macros(tmp_path) == [(tmp_path / "macros" / n).read_text() for n in ("b.sql", "a.sql")]
    assert sqlfiles.macro_errors(tmp_path) == []
    assert list(sqlfiles.load_all(tmp_path)) == ["v"]
    (tmp_path / "w.sql").write_text("-- depends: kernels\n-- uses: gone\nCREATE OR REPLACE VIEW w AS SELECT 1;\n")
    with pytest.raises(sqlfiles.SqlModuleError, match="macro modules that do not exist: gone"):
        sqlfiles.macros(tmp_path)
