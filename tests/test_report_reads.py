"""The report holds no analysis: it reads public tables and views by name (Face.frame) and
never runs a query of its own."""

import re
from pathlib import Path

REPORT = Path(__file__).resolve().parents[1] / "tracecols" / "report"
QUERY = re.compile(r"\bSELECT\b[\s\S]*?\bFROM\b", re.IGNORECASE)


def test_no_module_of_the_report_runs_sql():
    found = []
    for f in sorted(REPORT.glob("*.py")):
        text = f.read_text()
        found += [f"{f.name}: .sql(" for _ in re.finditer(r"\.sql\(", text)]
        found += [f"{f.name}: {m.group(0)[:40]!r}" for m in QUERY.finditer(text)]
    assert len(list(REPORT.glob("*.py"))) > 5 and found == []
