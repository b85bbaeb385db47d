"""op_averages and op_averages_by_shape against torch.profiler's own key_averages() tables.

tests/data/key_averages/make.py recorded a CPU training run with torch 2.13.0 and saved both
the exported trace and the profiler's key_averages() rows (by name, and by input shape) from
that same run: the expected numbers are torch's, computed from its in-memory events.
"""

import json
from pathlib import Path

import pytest

import tracecols

HERE = Path(__file__).parent / "data" / "key_averages"


@pytest.fixture(scope="module")
def both():
    expected = json.loads((HERE / "key_averages.json").read_text())
    return tracecols.open(HERE / "cpu_mlp.pt.trace.json.gz"), expected


def _close(ns, us, calls):
    """Our ns against torch's µs float: the trace writes each event to the ns, so the sums
    may differ by the rounding of each event (under 1 ns each)."""
    return abs(ns / 1000 - us) <= 0.001 * calls + 1e-9


@pytest.mark.parametrize(
    "view, table, key", [("op_averages", "by_name", ()), ("op_averages_by_shape", "by_shape", ("input_shapes",))]
)
def test_every_row_of_key_averages(both, view, table, key):
    t, expected = both
    rows = expected[table]
    assert len(rows) > 40
    ours = {}
    for r in t.sql(f"select * from {view}").to_dicts():
        k = (r["name"],) + tuple(r[c] or "" for c in key)
        assert k not in ours, k
        ours[k] = r
    assert set(ours) == {(r["name"],) + tuple(r[c] for c in key) for r in rows}
    for r in rows:
        o = ours[(r["name"],) + tuple(r[c] for c in key)]
        assert o["calls"] == r["calls"], r
        assert _close(o["self_cpu_ns"], r["self_cpu_us"], r["calls"]), (o, r)
        assert _close(o["cpu_total_ns"], r["cpu_total_us"], r["calls"]), (o, r)


def test_the_fixture_has_what_the_comparison_needs(both):
    _, expected = both
    shapes = {r["name"]: set() for r in expected["by_shape"]}
    for r in expected["by_shape"]:
        shapes[r["name"]].add(r["input_shapes"])
    assert expected["torch"].startswith("2.13")
    assert len(shapes["aten::addmm"]) >= 2  # two batch sizes: the by-shape table really splits
    assert any(r["self_cpu_us"] != r["cpu_total_us"] for r in expected["by_name"])  # nesting present
