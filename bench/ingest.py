#!/usr/bin/env python3
"""Ingest speed and memory against the parser floor, measured in one run.

usage: bench/ingest.py TRACE [--repeat N]

Each measurement runs in a fresh subprocess (so peak RSS is its own):
  floor   for e in ijson.items(f, "traceEvents.item"): pass   (C backend, defaults)
  decode  the same loop over tracecols' own event decoder (read/chunked.py: msgspec on
          multi-MB chunks, ijson for the rest), for comparison: it is below the floor
  ingest  the reader + model: every event into the Arrow `events` table, all args kept
          (the tree, links and analyses are timed by bench/tree.py and bench/e2e.py), by
          the compiled reader on one thread (one core for the parse; the file is read and
          inflated beside it), on every core, and by the Python reader on one core. Each
          process has imported tracecols before its clock starts (pyarrow's first conversion
          imports pandas where it is installed: 0.2-0.3 s, the same in every process).
Prints events/s, MB/s, peak RSS and the load average, and ends with
  RESULT ratio_to_floor=R ratio_to_floor_all_cores=R2 ratio_python_reader=R3 peak_rss_mb=M events=N
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
import pyarrow as pa
pa.array([0])  # pyarrow imports pandas (if installed) on its first conversion: a process's fixed cost, not the read's
p, threads = sys.argv[1], int(sys.argv[2])
t = time.perf_counter()
batches = []
read_trace(p, batches.append, threads=threads)
n = events_table(batches, 0, None).num_rows
dt = time.perf_counter() - t
print(json.dumps({"s": dt, "n": n, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def _run(code, path, *args, env=None):
    out = subprocess.run(
        [sys.executable, "-c", code, path, *map(str, args)],
        check=True,
        capture_output=True,
        text=True,
        env=None if env is None else {**os.environ, **env},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _best(a, code, *args, env=None):
    return min((_run(code, a.trace, *args, env=env) for _ in range(a.repeat)), key=lambda r: r["s"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace")
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args()
    size = os.path.getsize(a.trace)
    warm(a.trace)
    load = os.getloadavg()[0]
    floor = _best(a, _FLOOR)
    dec = _run(_DECODE, a.trace)
    ing = _best(a, _INGEST, 1)
    cores = os.cpu_count() or 1
    ing_all = _best(a, _INGEST, cores)
    ing_py = _best(a, _INGEST, 1, env={"TRACECOLS_READER": "python"})
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
    for label, r in (("ingest", ing), (f"ingest{cores}", ing_all), ("python", ing_py)):
        print(
            f"{label:7s} {r['s']:8.2f} s  {r['n'] / r['s']:>12,.0f} ev/s  {mb / r['s']:7.1f} MB/s"
            f"  peak RSS {r['rss'] / 1e6:7.0f} MB"
        )
    assert floor["n"] == dec["n"] == ing["n"] == ing_all["n"] == ing_py["n"], "event counts differ"
    print(f"load    {load:.2f} before, {os.getloadavg()[0]:.2f} after (1-minute average)")
    print(
        f"RESULT ratio_to_floor={ing['s'] / floor['s']:.3f} ratio_to_floor_all_cores={ing_all['s'] / floor['s']:.3f}"
        f" ratio_python_reader={ing_py['s'] / floor['s']:.2f} peak_rss_mb={ing['rss'] / 1e6:.0f} events={ing['n']}"
    )


if __name__ == "__main__":
    main()
