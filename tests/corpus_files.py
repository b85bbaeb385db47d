"""The real traces of ../shared/traces that the tree/kernel tests walk (shared by those tests)."""

import functools
import gzip
import json
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "traces"


def all_files():
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.rglob("*.json*") if p.is_file() and "_perf_report_csvs" not in str(p))


@functools.cache
def is_kineto(path):
    """True for a Chrome-trace JSON with traceEvents (ET files and the rocprof file are not)."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as f:
        head = f.read(1 << 16)
    if b'"traceEvents"' in head:
        return True
    with opener(path, "rb") as f:  # traceEvents may come after a large metadata block
        try:
            d = json.load(f)
        except ValueError:
            return False
    return isinstance(d, dict) and "traceEvents" in d


def kineto_files():
    return [p for p in all_files() if is_kineto(p)]


def rel(p):
    return str(Path(p).relative_to(CORPUS))
