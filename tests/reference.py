"""Deliberately simple references, written with the json module only, to check tracecols against."""
import gzip
import json
import os
from decimal import Decimal
from functools import lru_cache

from conftest import CORPUS

NOT_KINETO = ("/rocprof/", "_et.json", "dlrm_eg_", "pt2_et.json", "resnet_1gpu_et", "resnet_2gpu_et",
              "linear_et", "resnet_et")


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
    return [p for p in corpus_files() if not any(s in p for s in NOT_KINETO)]


def not_kineto_files():
    return [p for p in corpus_files() if any(s in p for s in NOT_KINETO)]


def short(path):
    return os.path.relpath(path, CORPUS)
