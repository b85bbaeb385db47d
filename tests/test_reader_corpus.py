"""Every real Kineto trace ingests losslessly: each event equals a json+decimal reference."""

import pytest
from reference import kineto_files, load, not_kineto_files, short

import tracecols
from tracecols.errors import NotATrace
from tracecols.read.kineto import read_trace
from tracecols.read.restore import restore_event

pytestmark = pytest.mark.corpus


@pytest.mark.parametrize("path", kineto_files(), ids=short)
def test_every_event_round_trips_exactly(path):
    ref_events, ref_meta = load(path)
    batches = []
    # Small batches so that every trace crosses batch boundaries and mixes event groups.
    info = read_trace(path, batches.append, batch_size=2048)
    assert info["n_events"] == len(ref_events)
    rows = sorted((r for b in batches for r in b.to_pylist()), key=lambda r: r["uid"])
    assert [r["uid"] for r in rows] == list(range(len(ref_events)))
    mismatches = [(i, e) for i, (r, e) in enumerate(zip(rows, ref_events)) if restore_event(r) != e]
    assert not mismatches, f"{len(mismatches)} events differ, first: {mismatches[0]}"
    assert info["metadata"] == ref_meta
    _core_columns_equal_the_reference(path, ref_events)


def _core_columns_equal_the_reference(path, ref_events):
    """ph, cat_raw, name, pid, tid, ts_ns, dur_ns straight from the public table (not via restore)."""
    t = tracecols.open(path).table("events").sort_by("uid")
    cols = {c: t.column(c).to_pylist() for c in ("ph", "cat_raw", "name", "pid", "tid", "pid_str", "tid_str", "ts_ns", "dur_ns")}
    for i, e in enumerate(ref_events):
        assert cols["ph"][i] == e.get("ph")
        assert cols["cat_raw"][i] == e.get("cat")
        assert cols["name"][i] == e.get("name")
        for key in ("pid", "tid"):
            v = e.get(key)
            if isinstance(v, str):
                assert cols[key + "_str"][i] == v
            else:
                assert cols[key][i] == v and cols[key + "_str"][i] is None
        for key, col in (("ts", "ts_ns"), ("dur", "dur_ns")):
            v = e.get(key)
            assert cols[col][i] == (None if v is None else int(v * 1000)), (i, key, v)
            if v is not None:
                assert cols[col][i] * 1 == v * 1000  # exact: no float rounding anywhere


@pytest.mark.parametrize("path", not_kineto_files(), ids=short)
def test_other_formats_are_named(path):
    with pytest.raises(NotATrace) as e:
        tracecols.open(path)
    line = e.value.line()
    assert "\n" not in line and path in line
    assert ("Execution Trace" in line) or ("list of graph capture files" in line)
