"""`compare` on real runs (tests/data/runs, recorded on an H200 by its make.py): a run against
another sample of itself, a run with one kernel family made 10 % slower, a library change that
renames every GEMM kernel, and the CI gate over them. The expected changes are what was done to
the files, measured here from the JSON; the code under test only reports them."""

import gzip
import json
import re

import polars as pl
import pytest

import tracecols
from tracecols.cli import main

RUNS = __import__("pathlib").Path(__file__).parent / "data" / "runs"
GEMM = re.compile(r"gemm", re.IGNORECASE)  # every GEMM kernel of these traces names itself so


def _load(name):
    with gzip.open(RUNS / f"{name}.pt.trace.json.gz", "rt") as f:
        return json.load(f)


def _steps(doc):
    return sorted(
        (e["ts"], e["ts"] + e["dur"])
        for e in doc["traceEvents"]
        if e.get("ph") == "X" and re.fullmatch(r"ProfilerStep#\d+", e.get("name", "")) and e.get("cat") == "user_annotation"
    )


def _cut(doc, keep):
    """A copy with the events whose start `keep` accepts (and every metadata event): the steps
    of make.py end with a synchronize, so a step's device work lies inside its host range."""
    out = dict(doc)
    out["traceEvents"] = [e for e in doc["traceEvents"] if e.get("ph") == "M" or "ts" not in e or keep(e["ts"])]
    return out


def _slowed(doc, factor=1.1):
    """A copy whose GEMM kernels last `factor` times longer. Each stream runs one thing at a time,
    so the device work after a longer kernel (kernels, copies, memsets) starts when the one
    before it ends, if that is later: the delay lasts until an idle gap absorbs it."""
    out = json.loads(json.dumps(doc))
    work = sorted(
        (e for e in out["traceEvents"] if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")),
        key=lambda e: (e["args"]["stream"], e["ts"]),
    )
    stream, free_at = None, 0.0
    for e in work:
        if e["args"]["stream"] != stream:
            stream, free_at = e["args"]["stream"], 0.0
        e["ts"] = max(e["ts"], free_at)
        if GEMM.search(e["name"]):
            e["dur"] = round(e["dur"] * factor, 3)  # whole ns, as the profiler writes them
        free_at = round(e["ts"] + e["dur"], 3)
    return out


def _gemm_per_step(doc, keep):
    """ns of GEMM kernels per step among the kernels whose start `keep` accepts (12 steps)."""
    gemms = [e for e in doc["traceEvents"] if e.get("cat") == "kernel" and GEMM.search(e["name"]) and keep(e["ts"])]
    return sum(e["dur"] * 1000 for e in gemms) / 12


def _write(doc, path):
    path.write_text(json.dumps(doc))
    return str(path)


@pytest.fixture(scope="module")
def halves(tmp_path_factory):
    """Steps 1-12 of base_a (A), steps 13-24 (B), and steps 13-24 with GEMMs 10 % slower (B'):
    each step of make.py ends with a synchronize, so a step's device work lies inside its host
    range and a cut between steps splits nothing."""
    d = tmp_path_factory.mktemp("halves")
    doc = _load("base_a")
    steps = _steps(doc)
    assert len(steps) == 24
    cut = steps[12][0]
    slow = _slowed(_cut(doc, lambda ts: ts >= cut))
    return {
        "a": _write(_cut(doc, lambda ts: ts < cut), d / "a.json"),
        "b": _write(_cut(doc, lambda ts: ts >= cut), d / "b.json"),
        "slow": _write(slow, d / "slow.json"),
        "gemm_a": _gemm_per_step(doc, lambda ts: ts < cut),
        "gemm_slow_b": _gemm_per_step(slow, lambda ts: ts >= cut),
    }


def _compare(a, b):
    return tracecols.open(a).compare(tracecols.open(b))


def test_a_run_against_other_steps_of_itself_changes_nothing(halves):
    res = _compare(halves["a"], halves["b"])
    assert res["step"]["steps_a"].to_list() == [12] * 3 and res["step"]["steps_b"].to_list() == [12] * 3
    for kind, f in res.items():
        if kind != "finding":  # findings are matched, not tested against noise
            assert f["significant"].fill_null(False).sum() == 0, (kind, f.filter(pl.col("significant")))


def test_a_slowed_kernel_family_is_found_with_its_size_and_nothing_else(halves):
    res = _compare(halves["a"], halves["slow"])
    classes = res["kernel_class"]
    gemm = classes.filter(pl.col("kernel_class") == "gemm").row(0, named=True)
    assert gemm["significant"] is True
    # the GEMM time a step gained, from the files' durations: the estimate is within 1 % of it
    want = halves["gemm_slow_b"] - halves["gemm_a"]
    assert gemm["shift_ns"] == pytest.approx(want, rel=0.01)
    assert gemm["shift_pct"] == pytest.approx(10.0, abs=1.0)
    assert classes.filter(pl.col("significant") & (pl.col("kernel_class") != "gemm")).height == 0
    # the ops whose own kernels are GEMMs, and only they
    ops = res["op"].filter(pl.col("significant"))
    assert set(ops["name"]) == {"aten::mm", "aten::addmm"}
    assert ops["shift_pct"].to_list() == [pytest.approx(10.0, abs=1.0)] * 2
    kernels = res["kernel"].filter(pl.col("significant"))
    assert kernels.height and all(GEMM.search(n) for n in kernels["name"])
    # the host did not change: the step time is not beyond noise
    step = res["step"].filter(pl.col("metric") == "step_time").row(0, named=True)
    assert step["significant"] is False


def test_a_second_run_of_the_same_job_differs_on_the_host_only():
    """base_b is the same job in a second profiler session whose host ran slower (its steps take
    9.8 ms against 7.5, with the same device work): the step time and idle time move beyond
    noise, the device busy time does not, and what else moves is below 0.5 % of a step (the
    AdamW kernels and a memset, by 0.4-1.4 µs a step: real, and tiny)."""
    res = _compare(str(RUNS / "base_a.pt.trace.json.gz"), str(RUNS / "base_b.pt.trace.json.gz"))
    step = {r["metric"]: r for r in res["step"].iter_rows(named=True)}
    assert step["step_time"]["significant"] and step["step_time"]["shift_pct"] > 10
    assert step["gpu_idle"]["significant"]
    assert step["gpu_busy"]["significant"] is False
    for kind in ("kernel_class", "kernel", "op", "callpath"):
        moved = res[kind].filter(pl.col("significant"))
        assert (moved["shift_ns"].abs() < 0.005 * step["step_time"]["per_step_ns_a"]).all(), kind


def test_ops_pair_across_renamed_kernels():
    """TF32 GEMMs are other kernels (sm90 tf32 names instead of sm80 f32 ones): no GEMM kernel is
    in both runs, yet aten::mm and aten::addmm pair and show the change."""
    res = _compare(str(RUNS / "base_a.pt.trace.json.gz"), str(RUNS / "tf32.pt.trace.json.gz"))
    k = res["kernel"]
    assert k.filter(pl.col("name").str.contains("(?i)gemm") & (pl.col("status") == "both")).height == 0
    ops = res["op"].filter(pl.col("name").is_in(["aten::mm", "aten::addmm"]))
    assert ops["status"].to_list() == ["both", "both"]
    assert ops["significant"].to_list() == [True, True]
    assert (ops["shift_pct"] < -50).all()


def _cli(*argv):
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main([str(a) for a in argv])
    return code, out.getvalue()


RULES = ["--fail-if", "step_time:+3%", "--fail-if", "kernel_class:gemm:+5%", "--fail-if", "op:aten::mm:+5%"]


def test_the_gate_fails_on_the_slowed_pair_and_passes_the_unchanged_one(halves):
    code, out = _cli("compare", halves["a"], halves["slow"], *RULES)
    assert code == 1
    breaches = [line for line in out.splitlines() if line.startswith("BREACH")]
    assert len(breaches) == 2
    assert any("kernel_class:gemm:+5%" in b for b in breaches) and any("op:aten::mm:+5%" in b for b in breaches)
    code, out = _cli("diff", halves["a"], halves["b"], *RULES)  # the old name runs the same command
    assert code == 0 and "no breach" in out


def test_a_bad_rule_is_one_line_and_exit_2(halves, capsys):
    code = main(["compare", halves["a"], halves["b"], "--fail-if", "op:aten::mm:5"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--fail-if" in err and "+N%" in err


def test_json_output_holds_every_comparison(halves):
    code, out = _cli("compare", halves["a"], halves["slow"], "--format", "json", "--fail-if", "kernel_class:gemm:+5%")
    doc = json.loads(out)
    assert code == 1
    assert set(doc["comparisons"]) == {"step", "phase", "kernel_class", "kernel", "op", "shape", "module", "callpath", "finding"}
    assert [b["key"] for b in doc["breaches"]] == ["gemm"]
    gemm = next(r for r in doc["comparisons"]["kernel_class"] if r["kernel_class"] == "gemm")
    assert gemm["significant"] is True


def test_html_page_of_a_comparison(halves, tmp_path):
    out = tmp_path / "cmp.html"
    code, text = _cli("compare", halves["a"], halves["slow"], "--html", out)
    assert code == 0 and f"wrote {out}" in text
    page = out.read_text()
    # the steps, the changes beyond noise, then each comparison; the slowed class is listed as beyond noise
    assert (
        page.index('id="steps"')
        < page.index('id="findings"')
        < page.index('id="beyond-noise"')
        < page.index('id="cmp-kernel_class"')
    )
    beyond = page[page.index('id="beyond-noise"') : page.index('id="cmp-kernel_class"')]
    assert '<td class="name" title="gemm">gemm</td>' in beyond
    assert '<td class="name" title="aten::mm">aten::mm</td>' in beyond
    assert "<script src" not in page and "http://" not in page.split("<body>")[1]


def test_two_runs_of_one_lake_compare_as_their_files(tmp_path):
    """A lake holding base_a as run `fp32` and tf32 as run `tf32`: comparing the lake's two runs
    gives the numbers of comparing the two files."""
    from tracecols.fleet.ingest import ingest_lake

    lake = tmp_path / "lake"
    for run, name in (("fp32", "base_a"), ("tf32", "tf32")):
        src = tmp_path / run
        src.mkdir()
        (src / f"{name}.pt.trace.json.gz").write_bytes((RUNS / f"{name}.pt.trace.json.gz").read_bytes())
        ingest_lake([str(src)], str(lake), jobs=1, run=run)
    files = _compare(str(RUNS / "base_a.pt.trace.json.gz"), str(RUNS / "tf32.pt.trace.json.gz"))
    runs = tracecols.Lake(lake, run="fp32").compare(tracecols.Lake(lake, run="tf32"))
    for kind in ("step", "kernel_class", "op"):
        cols = [c for c in files[kind].columns if c not in ("p_value", "q_value")]
        assert runs[kind].select(cols).equals(files[kind].select(cols)), kind
    code, out = _cli("compare", lake, lake, "--run-a", "fp32", "--run-b", "tf32", "--fail-if", "kernel_class:gemm:-50%")
    assert code == 1 and "BREACH  kernel_class:gemm:-50%" in out
    code = main(["compare", str(lake), str(lake), "--run-a", "nope", "--run-b", "tf32"])
    assert code == 2


def test_ops_by_shape_and_by_module_count_as_the_file_does():
    """Ops keyed by (name, input shapes): the counts of each pair in the JSON, TensorList shapes
    (the foreach ops of AdamW) included; every op is in one module row (these traces record no
    nn.Module frames: all in `(no module)`)."""
    from collections import Counter

    doc = _load("base_a")
    want = Counter(
        (e["name"], json.dumps(e["args"]["Input Dims"]).replace(" ", ""))
        for e in doc["traceEvents"]
        if e.get("ph") == "X" and e.get("cat") == "cpu_op" and "Input Dims" in e.get("args", {})
    )
    res = _compare(str(RUNS / "base_a.pt.trace.json.gz"), str(RUNS / "base_b.pt.trace.json.gz"))
    got = Counter(
        {
            (r["name"], r["input_dims"].replace(" ", "")): r["count_a"]
            for r in res["shape"].iter_rows(named=True)
            if r["input_dims"]
        }
    )
    assert +got == +want
    n_ops = sum(1 for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "cpu_op")
    assert res["module"]["module"].to_list() == ["(no module)"] and res["module"]["count_a"].item() == n_ops


def test_step_phases_as_the_file_nests_them():
    """Ops by step phase: an op inside an `Optimizer.step#…` range of its thread is optimizer
    work, one inside (or being) an autograd `evaluate_function` is backward, any other forward;
    the counts per phase as the JSON's time ranges give them."""
    from collections import Counter

    doc = _load("base_a")
    xs = [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation")]

    def ranges(pred):
        out = {}
        for e in xs:
            if pred(e):
                out.setdefault(e["tid"], []).append((e["ts"], e["ts"] + e["dur"]))
        return out

    opt = ranges(lambda e: e["name"].startswith("Optimizer.step#"))
    bwd = ranges(lambda e: e["name"].startswith("autograd::engine::evaluate_function"))

    def inside(e, rs):
        return any(a <= e["ts"] and e["ts"] + e["dur"] <= b for a, b in rs.get(e["tid"], []))

    want = Counter(
        "optimizer" if inside(e, opt) else "backward" if inside(e, bwd) else "forward" for e in xs if e["cat"] == "cpu_op"
    )
    res = _compare(str(RUNS / "base_a.pt.trace.json.gz"), str(RUNS / "tf32.pt.trace.json.gz"))
    got = {r["phase"]: r["count_a"] for r in res["phase"].iter_rows(named=True)}
    assert got == dict(want)
    # TF32 speeds up the forward and backward GEMMs, not the optimizer's elementwise work
    sig = {r["phase"]: r["significant"] for r in res["phase"].iter_rows(named=True)}
    assert sig == {"forward": True, "backward": True, "optimizer": False}


def test_findings_that_appeared_and_disappeared():
    """A single-GPU run against a DDP rank of the same model over gloo: the gloo rank's findings
    that the other run lacks are `appeared`, and the other way round `disappeared`, by rule and
    kind; a finding in both carries both times at stake."""
    a = tracecols.open(RUNS / "base_a.pt.trace.json.gz")
    b = tracecols.open(RUNS / "ddp_rank0.pt.trace.json.gz")
    key = lambda f: {(r["rule"], r["kind"]) for r in f.iter_rows(named=True)}  # noqa: E731
    fa, fb = key(a.findings()), key(b.findings())
    got = a.compare(b, ("finding",))["finding"]
    by_status = {
        s: {(r["rule"], r["kind"]) for r in got.filter(pl.col("status") == s).iter_rows(named=True)}
        for s in ("appeared", "disappeared", "both")
    }
    assert by_status == {"appeared": fb - fa, "disappeared": fa - fb, "both": fa & fb}
    assert by_status["appeared"]  # gloo's synchronising calls leave the device idle
    stakes: dict = {}
    for r in b.findings().iter_rows(named=True):  # one device here: each (rule, kind) once
        assert (r["rule"], r["kind"]) not in stakes
        stakes[(r["rule"], r["kind"])] = r["stake_ns"]
    for r in got.filter(pl.col("status") != "disappeared").iter_rows(named=True):
        assert r["stake_ns_b"] == stakes[(r["rule"], r["kind"])]


@pytest.mark.corpus
def test_two_halves_of_the_ranks_of_one_dlrm_job():
    """The 8-rank DLRM job (one step a rank): ranks 0-3 against ranks 4-7 pool four samples a side,
    one per rank; the same job raises no change beyond noise, and the findings the two halves
    share by rule and kind are both sides' exposed communication and host launch gaps."""
    from conftest import CORPUS

    d = CORPUS / "param/et_replay/tests/inputs/dlrm_kineto.tar.gz.extracted/dlrm_kineto"
    a = tracecols.open(*sorted(d.glob("worker[0-3]_*.json")))
    b = tracecols.open(*sorted(d.glob("worker[4-7]_*.json")))
    res = a.compare(b, ("step", "kernel_class", "op", "finding"))
    assert res["step"]["steps_a"].to_list() == [4] * 3 and res["step"]["steps_b"].to_list() == [4] * 3
    for kind in ("step", "kernel_class", "op"):
        assert not res[kind]["significant"].fill_null(False).any(), kind
    both = res["finding"].filter(pl.col("status") == "both")
    assert {("exposed_comm", "communication"), ("host_idle", "launch")} <= set(zip(both["rule"], both["kind"]))
