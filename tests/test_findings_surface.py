"""Where the findings reach the user: the first screen of `analyze` (text and JSON), the report,
and `--rule-threshold`. The rows must be the `findings` view's, in its order."""

import contextlib
import io
import json
from pathlib import Path

import pytest

import tracecols
from tracecols.cli import main

TRACE = Path(__file__).parent / "data" / "runs" / "base_a.pt.trace.json.gz"


def _cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def view():
    return tracecols.open(TRACE).findings()


def test_analyze_leads_with_what_to_fix_first(view):
    code, out, _ = _cli("analyze", TRACE, "-q", "--top", "3")
    assert code == 0
    lines = out.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("What to fix first"))
    assert start < next(i for i, ln in enumerate(lines) if ln.startswith("GPU timeline"))
    shown = [ln.split()[:2] for ln in lines[start + 2 : start + 5]]
    want = [[r["severity"], r["rule"]] for r in view.head(3).iter_rows(named=True)]
    assert shown == want
    assert view["rule"][0] == "host_idle" and view["kind"][0] == "launch"  # the host cannot keep up (docs)


def test_analyze_json_carries_the_findings_first(view):
    code, out, _ = _cli("analyze", TRACE, "-q", "--format", "json", "--top", "5")
    doc = json.loads(out)
    assert code == 0 and next(iter(doc)) == "findings"
    assert [(r["rule"], r["kind"], r["stake_ns"]) for r in doc["findings"]] == [
        (r["rule"], r["kind"], r["stake_ns"]) for r in view.head(5).iter_rows(named=True)
    ]


def test_a_rule_threshold_changes_what_is_found(view):
    launch = view.filter(view["kind"] == "launch")["stake_pct"].item()
    assert 30 < launch < 50
    code, out, _ = _cli("analyze", TRACE, "-q", "--format", "json", "--rule-threshold", "host_idle=50")
    assert code == 0
    assert not [r for r in json.loads(out)["findings"] if r["rule"] == "host_idle"]
    code, _, err = _cli("analyze", TRACE, "-q", "--rule-threshold", "no_rule=1")
    assert code == 2 and err.count("\n") == 1 and "no finding rule with a threshold named 'no_rule'" in err
    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as stop:  # a usage error, as argparse says it
        main(["analyze", str(TRACE), "-q", "--rule-threshold", "host_idle=x"])
    assert stop.value.code == 2 and "expected RULE=NUMBER" in err.getvalue()


def test_the_report_opens_with_the_findings(tmp_path, view):
    out = tmp_path / "r.html"
    assert _cli("report", TRACE, "-o", out, "-q")[0] == 0
    page = out.read_text()
    sections = [s.split('"')[1] for s in page.split("<section id=")[1:]]
    assert sections[0] == "fix-first"
    first = view.row(0, named=True)
    assert f'title="{first["rule"]} · {first["kind"]}"' in page
