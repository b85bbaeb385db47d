#!/usr/bin/env python3
"""tracecols against the tools users have today, on the same input, in one run.

usage: bench/peers.py TRACE_OR_DIR [--hta-python PY] [--tracelens-python PY]
                      [--skip hta,tracelens,duckdb,events] [--timeout S]

Each contender runs in its own subprocess (so its peak RSS is its own), one after the other:
  tracecols  `tracecols analyze TRACE -o OUT`, in process: ingest + host tree + links + every
             analysis view, each as Parquet, and the summary it prints (several files: the
             streaming ingest of them all, bench/e2e.py's)
  tracecols summary  `tracecols analyze TRACE` without -o: the summary alone (GPU timeline,
             kernels, ops, idle gaps, optimizable ops), nearer HTA's four breakdowns in what it
             computes; printed and given as vs_hta_summary, the RESULT's vs_hta is the line above
  hta        HolisticTraceAnalysis: TraceAnalysis(trace_dir=…) + temporal, kernel-type and
             idle-time breakdowns + queue-length summary  (package `holistictraceanalysis`, the
             `bench` extra; --hta-python runs it from another environment)
  tracelens  AMD's TraceLens: generate_perf_report_pytorch(…, output_csvs_dir, kernel_summary)
             per trace file, its PyTorch perf report with the kernel summary. It installs from
             its GitHub repository only (the PyPI project named TraceLens is an unrelated tool):
             --tracelens-python names a python that has it; without one the line says so
  duckdb     DuckDB's own JSON reader: read_json(…) + unnest(traceEvents) → Parquet
and, unless skipped, what DuckDB's contender produces done by tracecols (not in the RESULT):
  tracecols events  the read stage alone: every event, typed and lossless, → events.parquet
For a directory, every trace file in it is one input (HTA reads the directory as one job).
Prints wall time and peak memory for each: the process's own ru_maxrss plus the peak
private memory of its worker processes, sampled (an upper bound: peaks that do not coincide
are added), and, where it has workers, the highest coincident total sampled (a lower bound;
bench/memwatch.py). Ends
  RESULT vs_hta=R1 vs_tracelens=R2 vs_duckdb_read_json=R3      (peer time ÷ tracecols time)
A peer stopped by --timeout gives a lower bound instead: vs_hta>=R (timeout ÷ tracecols time).
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile

from memwatch import Watch

_TRACECOLS = r"""
import contextlib, io, json, resource, sys, time
from tracecols import memory
memory.for_this_process()  # as the tracecols command does, before polars and pyarrow load
memory.without_pandas()
from tracecols.cli import main
from tracecols.pipeline import ingest_to_dir
paths, out, write = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3] == "1"
t = time.perf_counter()
if len(paths) == 1:  # the command itself: ingest, the analyses, the summary it prints
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        rc = main(["analyze", paths[0]] + (["-o", out] if write else []))
    if rc:
        sys.exit(f"error: tracecols analyze exited {rc}")
else:
    ingest_to_dir(paths, out)
s = time.perf_counter() - t
print(json.dumps({"s": s, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""

_TRACECOLS_EVENTS = r"""
import json, resource, sys, time
from tracecols import memory
memory.for_this_process()
from tracecols.pipeline import write_events
paths, out = json.loads(sys.argv[1]), sys.argv[2]
t = time.perf_counter()
write_events(paths, f"{out}/events.parquet")
print(json.dumps({"s": time.perf_counter() - t, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""

_HTA = r"""
import json, resource, sys, time, os, contextlib, io
from hta.trace_analysis import TraceAnalysis
d = sys.argv[1]
t = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()):
    a = TraceAnalysis(trace_dir=d)
    a.get_temporal_breakdown(visualize=False)
    a.get_gpu_kernel_breakdown(visualize=False)
    a.get_idle_time_breakdown(ranks=list(a.t.traces), visualize=False)
    a.get_queue_length_summary(ranks=list(a.t.traces))
print(json.dumps({"s": time.perf_counter() - t, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""

_TRACELENS = r"""
import json, resource, sys, time, os, contextlib, io
try:
    from TraceLens.Reporting.generate_perf_report_pytorch import generate_perf_report_pytorch
except ImportError:
    sys.exit("error: AMD's TraceLens is not installed in this python (the PyPI package of that name "
             "is an unrelated project; install it from its repository and pass --tracelens-python)")
paths, out = json.loads(sys.argv[1]), sys.argv[2]
t = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()):
    for i, p in enumerate(paths):
        generate_perf_report_pytorch(p, output_csvs_dir=os.path.join(out, str(i)), kernel_summary=True)
print(json.dumps({"s": time.perf_counter() - t, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""

_DUCKDB = r"""
import json, os, resource, sys, time
import duckdb
paths, out = json.loads(sys.argv[1]), sys.argv[2]
t = time.perf_counter()
con = duckdb.connect()
biggest = max(os.path.getsize(p) for p in paths)
for i, p in enumerate(paths):
    # the whole trace is one JSON object: the reader must be allowed an object that large
    # (the setting is a UINT32: 4 GiB is the most it takes)
    limit = min(max(biggest * 2, 1 << 24), (1 << 32) - 1)
    con.execute(f"COPY (SELECT unnest(traceEvents, recursive := true) FROM read_json(?, "
                f"format='auto', maximum_object_size={limit})) "
                f"TO '{out}/events_{i}.parquet' (FORMAT parquet, COMPRESSION zstd)", [p])
print(json.dumps({"s": time.perf_counter() - t, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def _trace_files(src):
    if os.path.isdir(src):
        return sorted(os.path.join(src, f) for f in os.listdir(src) if f.endswith((".json", ".json.gz")))
    return [src]


def _run(python, code, *args, timeout=None):
    # its own session, so that a timeout stops the peer's worker processes too
    p = subprocess.Popen(
        [python, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    watch = Watch(p)  # the contender and its workers, each page counted once
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return {"timeout": timeout}
    watch.join()
    r = subprocess.CompletedProcess(p.args, p.returncode, out, err)
    if r.returncode != 0:
        lines = [x for x in r.stderr.strip().splitlines() if "Error" in x or "error" in x]
        return {"error": (lines or r.stderr.strip().splitlines() or ["failed"])[-1].strip()}
    res = json.loads(r.stdout.strip().splitlines()[-1])
    res["rss_sampled"], res["rss"] = watch.bounds(res["rss"])
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source")
    ap.add_argument("--hta-python", default=sys.executable, help="python with holistictraceanalysis installed")
    ap.add_argument("--tracelens-python", default=sys.executable, help="python with AMD's TraceLens installed")
    ap.add_argument("--skip", default="", help="comma-separated: hta, tracelens, duckdb, events")
    ap.add_argument("--timeout", type=float, default=None, help="stop a peer after this many seconds")
    a = ap.parse_args()
    paths = [os.path.abspath(p) for p in _trace_files(a.source)]
    size = sum(os.path.getsize(p) for p in paths)
    skip = set(filter(None, a.skip.split(",")))
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        results["tracecols"] = _run(sys.executable, _TRACECOLS, json.dumps(paths), os.path.join(tmp, "tc"), "1")
        if len(paths) == 1:
            results["tracecols summary"] = _run(sys.executable, _TRACECOLS, json.dumps(paths), os.path.join(tmp, "tc2"), "0")
        if "hta" not in skip:
            hdir = os.path.join(tmp, "hta")
            os.mkdir(hdir)
            for p in paths:
                os.symlink(p, os.path.join(hdir, os.path.basename(p)))
            results["hta"] = _run(a.hta_python, _HTA, hdir, timeout=a.timeout)
        if "tracelens" not in skip:
            tdir = os.path.join(tmp, "tracelens")
            os.mkdir(tdir)
            results["tracelens"] = _run(a.tracelens_python, _TRACELENS, json.dumps(paths), tdir, timeout=a.timeout)
        if "duckdb" not in skip:
            ddir = os.path.join(tmp, "duck")
            os.mkdir(ddir)
            results["duckdb read_json"] = _run(sys.executable, _DUCKDB, json.dumps(paths), ddir, timeout=a.timeout)
        if "events" not in skip:
            edir = os.path.join(tmp, "tc_events")
            os.mkdir(edir)
            results["tracecols events"] = _run(sys.executable, _TRACECOLS_EVENTS, json.dumps(paths), edir)
    print(f"input   {a.source}: {len(paths)} file(s), {size / 1e6:.1f} MB on disk, {os.cpu_count()} cores")
    base = results["tracecols"]
    if "error" in base:
        sys.exit(f"tracecols failed: {base['error']}")
    for name, r in results.items():
        if "error" in r:
            print(f"{name:<17} failed: {r['error']}")
        elif "timeout" in r:
            print(f"{name:<17} stopped after {r['timeout']:.0f} s (--timeout), unfinished")
        else:
            ratio = "" if name.startswith("tracecols") else f"   {r['s'] / base['s']:.2f}x tracecols' time"
            sampled = "" if r["rss_sampled"] >= 0.99 * r["rss"] else f" at most, {r['rss_sampled'] / 1e6:.0f} MB sampled"
            print(f"{name:<17} {r['s']:8.2f} s   peak RSS {r['rss'] / 1e6:7.0f} MB{sampled}{ratio}")
    ev, duck = results.get("tracecols events"), results.get("duckdb read_json")
    if ev and duck and "s" in ev and "s" in duck:
        print(
            f"like for like (events → Parquet only): duckdb read_json takes {duck['s'] / ev['s']:.2f}x "
            f"tracecols' read stage, in {duck['rss'] / ev['rss']:.1f}x its memory"
        )
    parts = []
    for key, name in (("vs_hta", "hta"), ("vs_tracelens", "tracelens"), ("vs_duckdb_read_json", "duckdb read_json")):
        r = results.get(name)
        if r and "timeout" in r:
            parts.append(f"{key}>={r['timeout'] / base['s']:.2f}")
        else:
            parts.append(f"{key}={r['s'] / base['s']:.2f}" if r and "error" not in r else f"{key}=n/a")
    short, hta = results.get("tracecols summary"), results.get("hta")
    if short and hta and "s" in short and "s" in hta:
        parts.append(f"vs_hta_summary={hta['s'] / short['s']:.2f}")
    print("RESULT " + " ".join(parts))


if __name__ == "__main__":
    main()
