"""Deliberately simple references, written with the json module only, to check tracecols against."""

import gzip
import json
import os
from decimal import Decimal
from functools import lru_cache

from conftest import CORPUS

ROCPROFV3 = ("/rocprof/",)  # rocprofiler-sdk JSON: read (test_rocprof.py), but not a Kineto trace
NOT_KINETO = (
    "_et.json",
    "dlrm_eg_",
    "pt2_et.json",
    "resnet_1gpu_et",
    "resnet_2gpu_et",
    "linear_et",
    "resnet_et",
    "execution_details.json",
)  # the last: TraceLens's capture list


def raw_bytes(path):
    with open(path, "rb") as f:
        data = f.read()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


@lru_cache(maxsize=4)
def load(path):
    """(events, metadata) of a trace, with every non-integer number as an exact Decimal."""
    doc = json.loads(raw_bytes(path), parse_float=Decimal)
    if isinstance(doc, list):
        return doc, {}
    return doc["traceEvents"], {k: v for k, v in doc.items() if k != "traceEvents"}


def corpus_files():
    out = []
    for root, _dirs, files in os.walk(CORPUS):
        for f in files:
            if f.endswith(".json") or f.endswith(".gz"):
                out.append(os.path.join(root, f))
    return sorted(out)


def kineto_files():
    """Every Kineto trace in the corpus (the Execution Traces and the rocprof file are not)."""
    return [p for p in corpus_files() if not any(s in p for s in NOT_KINETO + ROCPROFV3)]


def not_kineto_files():
    """The files tracecols does not read as traces (Execution Traces, capture lists)."""
    return [p for p in corpus_files() if any(s in p for s in NOT_KINETO)]


def short(path):
    return os.path.relpath(path, CORPUS)


def assert_tracelens_gpu_timeline(csv_path, trace):
    """tracelens_gpu_timeline against TraceLens's gpu_timeline.csv: same rows in the same order,
    times within 0.1 % (or 1e-5 ms), percentages within 0.1 % (or 1e-3 points)."""
    import csv
    import math

    with open(csv_path, newline="") as f:
        ref = {r["type"]: (float(r["time ms"]), float(r["percent"])) for r in csv.DictReader(f)}
    ours = {
        r["type"]: (r["time ms"], r["percent"]) for r in trace.sql("select * from tracelens_gpu_timeline").iter_rows(named=True)
    }
    assert list(ours) == list(ref)
    for typ, (ms, pct) in ref.items():
        assert math.isclose(ms, ours[typ][0], rel_tol=1e-3, abs_tol=1e-5), (typ, ms, ours[typ])
        assert math.isclose(pct, ours[typ][1], rel_tol=1e-3, abs_tol=1e-3), (typ, pct, ours[typ])
