"""Fuzzing, bounded in time: mutated real traces (structure-aware) and arbitrary bytes.

The only outcomes of reading a trace are its tables or a TraceError (one line); never
another exception. Each test runs a fixed, small number of examples (a few seconds).
"""

import atexit
import gzip
import json
import os
import shutil
import tempfile

import pytest
from conftest import DATA_TRACE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracecols.errors import TraceError
from tracecols.pipeline import read_tables as ingest

FAST = settings(
    max_examples=int(os.environ.get("TRACECOLS_FUZZ_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
)


def _base():
    """A small real trace: the metadata and a slice of the events of the quick-start trace,
    host ops, runtime launches and the kernels they launched included."""
    d = json.loads(gzip.decompress(DATA_TRACE.read_bytes()))
    ev = d["traceEvents"]
    corr = {e["args"]["correlation"] for e in ev if e.get("cat") == "kernel"}
    launches = [e for e in ev if e.get("cat") == "cuda_runtime" and e.get("args", {}).get("correlation") in corr][:4]
    keep_corr = {e["args"]["correlation"] for e in launches}
    kernels = [e for e in ev if e.get("cat") == "kernel" and e["args"].get("correlation") in keep_corr]
    t0 = min(e["ts"] for e in launches)
    host = [
        e for e in ev if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation") and t0 - 2000 <= e["ts"] <= t0 + 200
    ][:30]
    other = [e for e in ev if e.get("ph") in ("M", "s", "f", "i")][:10]
    d["traceEvents"] = other + host + launches + kernels
    d.pop("metadata", None)  # the run's environment (large): examples stay short
    return d


BASE = _base()
TMP = tempfile.mkdtemp(prefix="tracecols-fuzz-")
atexit.register(shutil.rmtree, TMP, True)


def _outcome(data, name="t.json"):
    p = os.path.join(TMP, name)
    with open(p, "wb") as f:
        f.write(data)
    try:
        tables, _ = ingest([p])
    except TraceError as e:
        line = e.line()
        assert "\n" not in line and p in line
        return "error"
    assert tables["events"].num_rows == tables["traces"].column("n_events")[0].as_py()
    return "ok"


def test_base_trace_reads():
    assert _outcome(json.dumps(BASE).encode()) == "ok"
    assert len(BASE["traceEvents"]) > 20


ODD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
FIELDS = ("ph", "ts", "dur", "pid", "tid", "name", "cat", "args", "id", "bp", "s")
ARG_FIELDS = ("correlation", "External id", "device", "stream", "Input Dims", "Input type", "grid", "Ev Idx")


@st.composite
def mutated_trace(draw):
    doc = json.loads(json.dumps(BASE))
    events = doc["traceEvents"]
    for _ in range(draw(st.integers(1, 6))):
        i = draw(st.integers(0, len(events) - 1))
        op = draw(st.sampled_from(["drop_field", "retype", "retype_arg", "duplicate", "delete", "swap", "meta"]))
        e = events[i]
        if op == "drop_field" and e:
            e.pop(draw(st.sampled_from(sorted(e))), None)
        elif op == "retype":
            e[draw(st.sampled_from(FIELDS))] = draw(ODD_VALUES)
        elif op == "retype_arg" and isinstance(e.get("args"), dict):
            e["args"][draw(st.sampled_from(ARG_FIELDS))] = draw(ODD_VALUES)
        elif op == "duplicate":
            events.insert(draw(st.integers(0, len(events))), json.loads(json.dumps(e)))
        elif op == "delete" and len(events) > 1:
            events.pop(i)
        elif op == "swap":
            j = draw(st.integers(0, len(events) - 1))
            events[i], events[j] = events[j], events[i]
        elif op == "meta":
            doc[
                draw(
                    st.sampled_from(
                        ["distributedInfo", "deviceProperties", "schemaVersion", "baseTimeNanoseconds", "traceEvents"]
                    )
                )
            ] = draw(ODD_VALUES)
    data = json.dumps(doc).encode()
    if draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data)))]
    return data


@FAST
@given(mutated_trace(), st.booleans())
def test_structure_aware(data, gz):
    assert _outcome(gzip.compress(data, 1) if gz else data, "s.json") in ("ok", "error")


@FAST
@given(st.binary(max_size=400))
def test_arbitrary_bytes(data):
    assert _outcome(data, "b.json") in ("ok", "error")


@FAST
@given(st.data())
def test_flipped_bytes_of_a_real_trace(data):
    raw = bytearray(json.dumps(BASE).encode())
    if data.draw(st.booleans()):
        raw = bytearray(gzip.compress(bytes(raw), 1))
    for _ in range(data.draw(st.integers(1, 8))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    assert _outcome(bytes(raw), "f.json") in ("ok", "error")


@pytest.mark.parametrize("prefix", [b"{", b"[", b'{"traceEvents": [', b'{"traceEvents": [{"ph": "X", "ts": '])
def test_prefixes_are_errors(prefix):
    assert _outcome(prefix, "p.json") == "error"
