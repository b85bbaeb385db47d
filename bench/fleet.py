#!/usr/bin/env python3
"""Parallel lake ingest vs one process, and vs HTA's TraceAnalysis load, on one directory of rank traces.

usage: bench/fleet.py DIR [--jobs 2] [--hta-python PY] [--make-ranks 8 --steps 140]

  DIR           rank traces of one job (e.g. 8 x 35 MB); with --make-ranks N and DIR empty or
                absent, N synthetic ranks are written there first by ../shared/tools/synth_trace.py
                (--steps 140 gives ~35 MB per rank)
  --hta-python  a Python that has `holistictraceanalysis` (pip install 'tracecols[bench]';
                HTA 0.5.0 fails on pandas 3 with "Invalid value ... for dtype 'int16'", hence
                pandas<3 in that extra; a separate venv keeps HTA's many dependencies out of
                tracecols's); default: this one. HTA is timed in that interpreter, in its own process, around
                the TraceAnalysis(trace_dir=DIR) constructor only (imports excluded).

Times are wall-clock, measured in this one run (the machines are shared and noisy: compare
the ratios, not the seconds). Ends with:  RESULT parallel_speedup=S vs_hta=R
  S = (1-process ingest time) / (N-process ingest time)
  R = (HTA load time) / (N-process ingest time)
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SYNTH = HERE.parent.parent / "shared" / "tools" / "synth_trace.py"

HTA_SNIPPET = r"""
import sys, time, logging
logging.disable(logging.CRITICAL)
from hta.trace_analysis import TraceAnalysis
t = time.perf_counter()
ta = TraceAnalysis(trace_dir=sys.argv[1])
dt = time.perf_counter() - t
ranks = sorted(ta.t.traces.keys()) if hasattr(ta.t, "traces") else []
print(f"HTA_SECONDS {dt:.6f} RANKS {len(ranks)}")
"""


def peak_rss_mb():
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_ours(src, jobs):
    from tracecols.fleet.ingest import ingest_lake

    out = Path(tempfile.mkdtemp(prefix="tracecols-bench-")) / "lake"
    t = time.perf_counter()
    res = ingest_lake([str(src)], str(out), jobs=jobs)
    dt = time.perf_counter() - t
    if not res.ok or not res.added:
        sys.exit(f"bench: ingest failed: {res.failed[:2]}")
    import tracecols

    n = tracecols.Lake(out).sql("select count(*) as n from events")["n"][0]
    shutil.rmtree(out.parent, ignore_errors=True)
    return dt, n, len(res.added)


def run_hta(src, python):
    r = subprocess.run([python, "-c", HTA_SNIPPET, str(src)], capture_output=True, text=True)
    for line in r.stdout.splitlines():
        if line.startswith("HTA_SECONDS"):
            parts = line.split()
            return float(parts[1]), int(parts[3]), None
    tail = " ".join((r.stderr or r.stdout).strip().splitlines()[-1:])
    return None, 0, tail or f"exit code {r.returncode}"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--hta-python", default=sys.executable)
    p.add_argument("--make-ranks", type=int, default=0)
    p.add_argument("--steps", type=int, default=140)
    a = p.parse_args()
    src = Path(a.dir)
    if a.make_ranks and (not src.is_dir() or not any(src.iterdir())):
        subprocess.run(
            [sys.executable, str(SYNTH), "--fleet", str(src), "--world", str(a.make_ranks), "--steps", str(a.steps)], check=True
        )
    files = sorted(f for f in src.iterdir() if f.is_file())
    mb = sum(f.stat().st_size for f in files) / 1e6
    print(f"input      {len(files)} files, {mb:,.1f} MB in {src}   cores: {os.cpu_count()}")

    t1, n_events, n_traces = run_ours(src, 1)
    print(
        f"1 process  {t1:8.2f} s   {n_events / t1:12,.0f} events/s   {mb / t1:8.1f} MB/s   "
        f"({n_traces} traces, {n_events:,} events)"
    )
    tn, _, _ = run_ours(src, a.jobs)
    print(f"{a.jobs} processes{tn:8.2f} s   {n_events / tn:12,.0f} events/s   {mb / tn:8.1f} MB/s")
    th, hta_ranks, err = run_hta(src, a.hta_python)
    if th is None:
        print(f"HTA        not run: {err}")
    else:
        print(f"HTA load   {th:8.2f} s   TraceAnalysis(trace_dir=DIR), {hta_ranks} ranks, in {a.hta_python}")
    print(f"peak RSS   {peak_rss_mb():,.0f} MB (this process)")
    s = t1 / tn
    r = "n/a" if th is None else f"{th / tn:.2f}"
    print(f"RESULT parallel_speedup={s:.2f} vs_hta={r}")


if __name__ == "__main__":
    main()
