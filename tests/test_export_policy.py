"""One export policy (engine/public.py): every way a trace leaves tracecols — Trace.save,
`analyze -o` of a trace file and of a saved directory, a lake written by `ingest`, `export
--duckdb`, `Face.tables` and `repr` — shows the same public tables and views, and no private
`_` helper."""

import json
import shutil
import subprocess
import sys

import duckdb
import pytest
from conftest import DATA_TRACE

import tracecols
from tracecols.model.base_tables import BASE_TABLES

# views every full output holds, named here rather than taken from the code under test
SOME_VIEWS = {"headline", "kernel_stats", "op_perf", "critical_path", "gpu_timeline", "idle_gaps", "top_ops"}


def cli(*args):
    r = subprocess.run(
        [sys.executable, "-c", "import sys; from tracecols.cli import main; sys.exit(main())", *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    return r


def parquet_names(directory):
    return {p.stem for p in directory.glob("*.parquet")}


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    """{output path: the names it holds}."""
    tmp = tmp_path_factory.mktemp("outputs")
    t = tracecols.open(DATA_TRACE)
    t.save(tmp / "saved")
    cli("analyze", DATA_TRACE, "-o", tmp / "analyzed", "-q")
    cli("analyze", tmp / "saved", "-o", tmp / "reanalyzed", "-q")
    cli("ingest", DATA_TRACE, "-o", tmp / "lake", "-q")
    cli("export", tmp / "lake", "--duckdb", tmp / "lake.duckdb", "-q")
    lake = tracecols.Lake(tmp / "lake")
    con = duckdb.connect(str(tmp / "lake.duckdb"), read_only=True)
    in_db = con.sql("select table_schema, table_name, table_type from information_schema.tables").fetchall()
    con.close()
    # repr lists the names after the origin: "<tracecols.Trace ORIGIN: a, b, c>"
    shown = repr(t).removesuffix(">").split(": ", 1)[1].split(", ")
    out = {
        "Trace.save": parquet_names(tmp / "saved"),
        "Trace.save manifest": set(json.loads((tmp / "saved" / "_tracecols.json").read_text())["tables"]),
        "analyze -o (file)": parquet_names(tmp / "analyzed"),
        "analyze -o (saved directory)": parquet_names(tmp / "reanalyzed"),
        "a saved directory's tables": set(tracecols.open(tmp / "saved").tables),
        "ingest (the lake's tables)": set(lake.tables),
        "export --duckdb": {name for schema, name, _ in in_db if schema == "main"},
        "Trace.tables": set(t.tables),
        "repr": set(shown),
    }
    return out, lake, in_db


def test_every_output_holds_the_same_public_set(outputs):
    out, _, _ = outputs
    want = out["Trace.save"]
    assert {*BASE_TABLES, "device_specs"} | SOME_VIEWS <= want
    for path, names in out.items():
        assert not [n for n in names if n.startswith("_")], path
        assert names == want, (path, sorted(names ^ want))


def test_the_lake_stores_public_base_tables_only(outputs):
    _, lake, _ = outputs
    stored = set(lake.manifest["tables"])
    assert "events" in stored and not [n for n in stored if n.startswith("_")]
    assert not [p for p in lake.lfs.listdir() if p.startswith("_") and p != "_tracecols.json"]


def test_the_duckdb_file_keeps_only_view_definitions_apart(outputs):
    """The private helpers the public views read are there as views (SQL text, no rows) in a
    schema of their own, out of a BI tool's list of tables."""
    _, _, in_db = outputs
    apart = {(name, kind) for schema, name, kind in in_db if schema != "main"}
    assert apart and {kind for _, kind in apart} == {"VIEW"}
    assert {schema for schema, _, _ in in_db} == {"main", "tracecols_internal"}


def test_an_older_output_with_private_files_still_opens(tmp_path):
    """Outputs written before the policy hold `_` helpers as files: they open, and list and
    save only the public set (the helpers are computed again from the base tables)."""
    t = tracecols.open(DATA_TRACE)
    t.save(tmp_path / "saved")
    shutil.copy(tmp_path / "saved" / "events.parquet", tmp_path / "saved" / "_device_models.parquet")  # wrong rows
    old = tracecols.open(tmp_path / "saved")
    assert set(old.tables) == set(t.tables)
    assert old.unknown_devices() == t.unknown_devices()
    assert old.sql("select count(*) as n from op_perf")["n"][0] == t.sql("select count(*) as n from op_perf")["n"][0]
    old.save(tmp_path / "again")
    assert parquet_names(tmp_path / "again") == set(t.tables)
