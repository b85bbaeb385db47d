"""Shared fixtures: where the real trace corpus is, and which of its files are Kineto traces."""

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "traces"
DATA_TRACE = REPO / "data" / "bert_small_h100.pt.trace.json.gz"


def pytest_sessionstart(session):
    if os.environ.get("CI") == "true" and not CORPUS.is_dir():
        raise pytest.UsageError(f"CI=true but the trace corpus {CORPUS} is missing")


def pytest_collection_modifyitems(config, items):
    if not CORPUS.is_dir():
        skip = pytest.mark.skip(reason=f"trace corpus {CORPUS} not present")
        for item in items:
            if "corpus" in item.keywords:
                item.add_marker(skip)


def pytest_configure(config):
    config.addinivalue_line("markers", "corpus: needs ../shared/traces")


def open_events(tmp_path, events):
    """A trace of `events` (on an H100), written to tmp_path and opened: the hand-built cases' way in."""
    import json

    import tracecols

    p = tmp_path / "t.json"
    p.write_text(
        json.dumps({"schemaVersion": 1, "traceEvents": events, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}]})
    )
    return tracecols.open(p)
