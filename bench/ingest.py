#!/usr/bin/env python3
"""Ingest speed and memory against the parser floor, measured in one run.

usage: bench/ingest.py TRACE [--repeat N]

Each measurement runs in a fresh subprocess (so peak RSS is its own):
  floor   for e in ijson.items(f, "traceEvents.item"): pass   (C backend, defaults)
  decode  the same loop over tracecols' own event decoder (read/chunked.py: msgspec on
          multi-MB chunks, ijson for the rest), for comparison: it is below the floor
  ingest  the reader + model: every event into the Arrow `events` table, all args kept
          (the tree, links and analyses are timed by bench/tree.py and bench/e2e.py)
Prints both, events/s, MB/s, peak RSS, and ends with
  RESULT ratio_to_floor=R peak_rss_mb=M events=N
(R = ingest time / floor time; with --repeat, the best of N for each.)
"""

import argparse
import json
import os
import subprocess
import sys

_FLOOR = r"""
import gzip, json, resource, sys, time, ijson
p = sys.argv[1]
t = time.perf_counter()
with open(p, "rb") as raw:
    f = gzip.GzipFile(fileobj=raw) if raw.read(2) == b"\x1f\x8b" else raw
    raw.seek(0)
    n = 0
    for e in ijson.items(f, "traceEvents.item"):
        n += 1
dt = time.perf_counter() - t
print(json.dumps({"s": dt, "n": n, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                  "backend": ijson.backend}))
"""


def warm(path):
    """Read the file once, so that it is in the page cache before anything is timed: the floor
    runs first and would otherwise pay the disk alone (a 1 GB trace's floor measured 17.7, 25.3
    and 33.0 s on one machine in one day as the cache held it or not; the pipeline after it
    read it from memory each time)."""
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass


_DECODE = r"""
import gc, gzip, json, resource, sys, time
from tracecols.read.chunked import Items
from tracecols.read.kineto import _Tap
from tracecols.read.toplevel import ijson_backend
p = sys.argv[1]
gc.disable()  # as the reader does while it holds parsed events
t = time.perf_counter()
with open(p, "rb") as raw:
    f = gzip.GzipFile(fileobj=raw) if raw.read(2) == b"\x1f\x8b" else raw
    raw.seek(0)
    n = 0
    for e in Items(f, "traceEvents.item", ijson_backend().items, _Tap):
        n += 1
dt = time.perf_counter() - t
print(json.dumps({"s": dt, "n": n, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""

_INGEST = r"""
import json, resource, sys, time
from tracecols.model.events import events_table
from tracecols.read.kineto import read_trace
p = sys.argv[1]
t = time.perf_counter()
batches = []
read_trace(p, batches.append)
n = events_table(batches, 0, None).num_rows
dt = time.perf_counter() - t
print(json.dumps({"s": dt, "n": n, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def _run(code, path):
    out = subprocess.run([sys.executable, "-c", code, path], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace")
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args()
    size = os.path.getsize(a.trace)
    warm(a.trace)
    floor = min((_run(_FLOOR, a.trace) for _ in range(a.repeat)), key=lambda r: r["s"])
    dec = _run(_DECODE, a.trace)
    ing = min((_run(_INGEST, a.trace) for _ in range(a.repeat)), key=lambda r: r["s"])
    mb = size / 1e6
    print(f"trace   {a.trace}  {mb:.1f} MB on disk, {ing['n']:,} events, {os.cpu_count()} cores")
    print(
        f"floor   {floor['s']:8.2f} s  {floor['n'] / floor['s']:>12,.0f} ev/s  {mb / floor['s']:7.1f} MB/s"
        f"  peak RSS {floor['rss'] / 1e6:7.0f} MB  (ijson {floor['backend']})"
    )
    print(
        f"decode  {dec['s']:8.2f} s  {dec['n'] / dec['s']:>12,.0f} ev/s  {mb / dec['s']:7.1f} MB/s"
        f"  peak RSS {dec['rss'] / 1e6:7.0f} MB  (tracecols' chunked decoder alone)"
    )
    print(
        f"ingest  {ing['s']:8.2f} s  {ing['n'] / ing['s']:>12,.0f} ev/s  {mb / ing['s']:7.1f} MB/s"
        f"  peak RSS {ing['rss'] / 1e6:7.0f} MB"
    )
    assert floor["n"] == dec["n"] == ing["n"], "event counts differ"
    print(f"RESULT ratio_to_floor={ing['s'] / floor['s']:.2f} peak_rss_mb={ing['rss'] / 1e6:.0f} events={ing['n']}")


if __name__ == "__main__":
    main()
