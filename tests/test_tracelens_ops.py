"""tracelens_ops_summary against TraceLens's own ops_summary.csv for every shipped reference."""

import csv
import math

import polars as pl
import pytest
from corpus_files import CORPUS

import tracecols

REFS = sorted(CORPUS.glob("TraceLens/**/*_perf_report_csvs/ops_summary.csv")) if CORPUS.is_dir() else []

# Every name of every reference must match (normalization_layer_test too, since GPU events
# link through the ac2g flow pair as TraceLens links them: docs/tree.md).
KNOWN = {}

COLUMNS = [
    "name",
    "total_direct_kernel_time_sum",
    "total_subtree_kernel_time_sum",
    "total_direct_kernel_time_ms",
    "total_subtree_kernel_time_ms",
    "Count",
    "Categories",
    "Percentage (%)",
    "Cumulative Percentage (%)",
]


def _trace_of(ref):
    base = str(ref.parent).removesuffix("_perf_report_csvs")
    return base + ".json.gz"


def _close(a, b, count=1):
    # 0.1 % relative, plus TraceLens's float-µs rounding (~1e-3 µs per interval edge)
    return math.isclose(a, b, rel_tol=1e-3, abs_tol=0.01 * max(count, 1))


@pytest.mark.corpus
def test_reference_files_present():
    assert len(REFS) == 7


@pytest.mark.corpus
@pytest.mark.parametrize("ref", REFS, ids=lambda p: str(p.parent.relative_to(CORPUS / "TraceLens/tests/traces")))
def test_ops_summary_matches_tracelens(ref):
    key = str(ref.parent.relative_to(CORPUS / "TraceLens/tests/traces")).removesuffix("_perf_report_csvs")
    known = KNOWN.get(key, set())
    with open(ref, newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == COLUMNS
    t = tracecols.open(_trace_of(ref))
    got_df = _by_name(t.sql("select * exclude (trace_id) from tracelens_ops_summary"))
    assert got_df.columns == COLUMNS
    got = {r["name"]: r for r in got_df.iter_rows(named=True)}
    want = {r["name"]: r for r in rows}
    assert set(got) == set(want)
    bad = []
    for name, w in want.items():
        g = w_count = int(w["Count"])
        g = got[name]
        assert g["Count"] == w_count, name
        assert g["Categories"] == w["Categories"], name
        ok = all(_close(float(w[c]), g[c], w_count) for c in ("total_direct_kernel_time_sum", "total_subtree_kernel_time_sum"))
        ok &= all(
            _close(float(w[c]), g[c], w_count / 1000) for c in ("total_direct_kernel_time_ms", "total_subtree_kernel_time_ms")
        )
        if not ok:
            bad.append(name)
    assert set(bad) == known, f"names off by more than 0.1 %: {sorted(bad)}"
    if not known:
        # same order and same percentages
        assert [r["name"] for r in rows] == list(got_df["name"]) or _ties_only(rows, got_df)
        for w in rows:
            g = got[w["name"]]
            for c in ("Percentage (%)", "Cumulative Percentage (%)"):
                assert math.isclose(float(w[c]), g[c], rel_tol=1e-3, abs_tol=1e-3), (w["name"], c)
        total = sum(r["total_direct_kernel_time_sum"] for r in got.values())
        assert _close(total, sum(float(r["total_direct_kernel_time_sum"]) for r in rows), len(rows))


def _by_name(df):
    """Rows per (name, parent_module) summed to rows per name, as ORACLES.md says to compare
    with a name-only summary; percentages re-derived from the sums."""
    sums = [
        "total_direct_kernel_time_sum",
        "total_subtree_kernel_time_sum",
        "total_direct_kernel_time_ms",
        "total_subtree_kernel_time_ms",
        "Count",
        "Percentage (%)",
    ]
    out = (
        df.group_by("name")
        .agg([pl.col(c).sum() for c in sums] + [pl.col("Categories").first()])
        .sort(["total_direct_kernel_time_sum", "name"], descending=[True, False])
    )
    total = out["total_direct_kernel_time_sum"].sum()
    out = out.with_columns((100.0 * pl.col("total_direct_kernel_time_sum").cum_sum() / total).alias("Cumulative Percentage (%)"))
    return out.select(COLUMNS)


def _ties_only(rows, got_df):
    """Row orders differ only among names whose direct times are equal within rounding."""
    a = [r["name"] for r in rows]
    b = list(got_df["name"])
    t = {r["name"]: float(r["total_direct_kernel_time_sum"]) for r in rows}
    return all(x == y or _close(t[x], t[y]) for x, y in zip(a, b))
