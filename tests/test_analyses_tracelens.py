"""The TraceLens compatibility views and op_perf's GEMM sizes against TraceLens's own CSVs."""

import ast
import collections
import csv
import math
from pathlib import Path

import pytest
from conftest import CORPUS
from reference import assert_tracelens_gpu_timeline

import tracecols

pytestmark = pytest.mark.corpus

REPORTS = sorted((CORPUS / "TraceLens").rglob("*_perf_report_csvs")) if CORPUS.is_dir() else []


def _trace(report):
    return Path(str(report).replace("_perf_report_csvs", ".json.gz"))


def _close(a, b, rel=1e-3, abs_=1e-3):
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)


@pytest.fixture(scope="module", params=REPORTS, ids=lambda p: p.name.replace("_perf_report_csvs", ""))
def report(request):
    return request.param, tracecols.open(_trace(request.param))


def test_gpu_timeline(report):
    d, t = report
    assert_tracelens_gpu_timeline(d / "gpu_timeline.csv", t)


def test_kernel_summary(report):
    d, t = report
    with open(d / "kernel_summary.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    has_op = "Parent cpu_op" in rows[0]

    def key(r):
        return (r["Parent op category"], r["Parent cpu_op"] if has_op else None, r["Kernel name"], int(r["Kernel stream"]))

    ref = {key(r): r for r in rows}
    ours = {key(r): r for r in t.sql("select * from tracelens_kernel_summary").iter_rows(named=True)}
    assert set(ours) == set(ref)
    for k, r in ref.items():
        o = ours[k]
        assert int(r["Kernel duration (µs)_count"]) == o["Kernel duration (µs)_count"]
        for col in (
            "Kernel duration (µs)_sum",
            "Kernel duration (µs)_mean",
            "Kernel duration (µs)_min",
            "Kernel duration (µs)_max",
        ):
            assert _close(float(r[col]), o[col]), (k[2][:60], col, r[col], o[col])
        for col in ("Percent of kernels time (%)", "Percent of total time (%)"):
            assert _close(float(r[col]), o[col], abs_=1e-4), (k[2][:60], col, r[col], o[col])


def test_gemm_sizes_and_flops(report):
    d, t = report
    if not (d / "GEMM.csv").exists():  # TraceLens writes GEMM.csv only when the trace has GEMMs
        assert t.sql("select count(*) as n from op_perf_summary where category = 'gemm'")["n"][0] == 0
        return
    ref = collections.defaultdict(lambda: [0, set()])
    with open(d / "GEMM.csv", newline="") as f:
        gemm_rows = list(csv.DictReader(f))
    for r in gemm_rows:
        k = (
            r["name"],
            int(r["param: M"]),
            int(r["param: N"]),
            int(r["param: K"]),
            int(r["param: B"]),
            ast.literal_eval(r["param: dtype_A_B"])[0],
        )
        ref[k][0] += int(r["name_count"])
        ref[k][1].add(float(r["GFLOPS_first"]))
    ours = collections.defaultdict(lambda: [0, set()])
    for r in t.sql("select * from op_perf_summary where category = 'gemm'").iter_rows(named=True):
        k = (r["name"], r["gemm_m"], r["gemm_n"], r["gemm_k"], r["gemm_b"], r["dtype"])
        ours[k][0] += r["count"]
        ours[k][1].add(r["flops"] / 1e9)
    for k, (n, gflops) in ref.items():
        assert k in ours, k
        assert ours[k][0] == n, (k, n, ours[k][0])
        assert ours[k][1] == gflops, (k, gflops, ours[k][1])  # exact
