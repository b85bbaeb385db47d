#!/usr/bin/env python3
"""Peak memory of the read stage, and of `tracecols info` on a gzip bomb.

usage: bench/read_memory.py TRACE [--threads N] [--discard]
       bench/read_memory.py --bomb GIB [--where events|head|tail]

TRACE: the read stage as `analyze -o` and `ingest` run it (tracecols.pipeline.write_events:
every event parsed and written to events.parquet, encoded on a second thread), in a fresh
subprocess; its time, events/s and peak RSS (ru_maxrss). With --discard, the reader alone: every
batch dropped as it comes (read.kineto.read_trace), the memory the reader itself holds. Ends with
  RESULT read_seconds=S peak_rss_mb=M events=N reader=R

--bomb GIB: a gzip file of GIB GiB of whitespace (a few MB on disk: members of 1 GiB of spaces
each, compressed once) around a small trace, placed between the events (`events`, the default),
before `traceEvents` (`head`) or after the events array (`tail`); then `tracecols info` on it,
its resident size sampled every 20 ms from /proc while it runs. Ends with
  RESULT bomb_gib=G exit=C seconds=S peak_rss_mb=M first_line=…
"""

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

_READ = r"""
import json, resource, sys, tempfile, time
import pyarrow as pa
pa.array([0])  # pyarrow imports pandas (if installed) on its first conversion: not the read's
from tracecols.pipeline import write_events
from tracecols.read.kineto import read_trace
from tracecols.trace import reader
p, threads, discard = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
with tempfile.TemporaryDirectory() as d:
    t = time.perf_counter()
    if discard:
        info = read_trace(p, lambda b: None, threads=threads)
    else:
        [info] = write_events([p], d + "/events.parquet", parts=threads)
    dt = time.perf_counter() - t
print(json.dumps({"s": dt, "n": info["n_events"], "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                  "reader": reader()}))
"""


def read_stage(a):
    args = [sys.executable, "-c", _READ, a.trace, str(a.threads), "1" if a.discard else "0"]
    out = subprocess.run(args, check=True, capture_output=True, text=True)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    size = os.path.getsize(a.trace)
    print(f"trace   {a.trace}  {size / 1e6:.1f} MB, {r['n']:,} events, {a.threads} thread(s), load {os.getloadavg()[0]:.2f}")
    rate = f"{r['n'] / r['s']:,.0f} ev/s  {size / 1e6 / r['s']:.1f} MB/s"
    print(f"read    {r['s']:.2f} s  {rate}  peak RSS {r['rss'] / 1e6:.0f} MB")
    reader = r["reader"].replace(" ", "_")
    stage = "reader_alone" if a.discard else "read_stage"
    print(f"RESULT {stage}_seconds={r['s']:.2f} peak_rss_mb={r['rss'] / 1e6:.0f} events={r['n']} reader={reader}")


_EVENT = '{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": %d, "dur": 5}'


def _bomb(path, gib, where):
    """Write the bomb: gzip members one after another (a reader inflates them as one stream)."""
    spaces = gzip.compress(b" " * (1 << 30), compresslevel=9)
    events = ", ".join(_EVENT % i for i in range(100))
    parts = {
        "events": (b'{"traceEvents": [' + events.encode() + b",", b" " + events.encode() + b"]}"),
        "head": (b'{"schemaVersion": 1,', b'"traceEvents": [' + events.encode() + b"]}"),
        "tail": (b'{"traceEvents": [' + events.encode() + b"],", b'"k": 1}'),
    }[where]
    with open(path, "wb") as f:
        f.write(gzip.compress(parts[0]))
        for _ in range(gib):
            f.write(spaces)
        f.write(gzip.compress(parts[1]))


def bomb(a):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "bomb.json.gz")
        _bomb(path, a.bomb, a.where)
        size = os.path.getsize(path)
        print(f"bomb    {size / 1e6:.1f} MB on disk, {a.bomb} GiB of whitespace ({a.where}), load {os.getloadavg()[0]:.2f}")
        t = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "tracecols", "info", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        peak = [0]

        def watch():
            while proc.poll() is None:
                try:
                    with open(f"/proc/{proc.pid}/statm") as f:
                        peak[0] = max(peak[0], int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE"))
                except OSError:
                    pass
                time.sleep(0.02)

        w = threading.Thread(target=watch)
        w.start()
        out, err = proc.communicate()
        w.join()
        dt = time.perf_counter() - t
        first = (err.strip() or out.strip()).splitlines()[0] if (err.strip() or out.strip()) else ""
        print(f"info    exit {proc.returncode} after {dt:.1f} s, peak RSS {peak[0] / 1e6:.0f} MB (sampled)")
        print(f"        {first}")
        print(
            f"RESULT bomb_gib={a.bomb} where={a.where} exit={proc.returncode} seconds={dt:.1f} "
            f"peak_rss_mb={peak[0] / 1e6:.0f} first_line={first.replace(' ', '_')[:80]}"
        )


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace", nargs="?")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--discard", action="store_true", help="the reader alone: batches dropped as they come")
    ap.add_argument("--bomb", type=int, metavar="GIB")
    ap.add_argument("--where", choices=["events", "head", "tail"], default="events")
    a = ap.parse_args()
    if a.bomb:
        bomb(a)
    elif a.trace:
        read_stage(a)
    else:
        ap.error("a trace, or --bomb GIB")


if __name__ == "__main__":
    main()
