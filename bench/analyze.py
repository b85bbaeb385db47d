#!/usr/bin/env python3
"""All analyses against ingest, measured in one run.

usage: bench/analyze.py TRACE [--profile]

Times `tracecols.open(TRACE)` (read + model: events, slices, kernels) and then computing
every analysis of `tracecols analyze` into Arrow (no Parquet writing), prints the time of
each analysis, and ends with
  RESULT analyze_ratio_to_ingest=R
(R = all-analyses time / ingest time). --profile also prints DuckDB's slowest operators.
"""

import argparse
import os
import resource
import time

import tracecols


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--profile", action="store_true")
    a = ap.parse_args()
    t0 = time.perf_counter()
    t = tracecols.open(a.trace)
    ingest = time.perf_counter() - t0
    n = t.sql("select count(*) as n from events")["n"][0]
    t1 = time.perf_counter()
    tables, secs = t.analyses()
    total = time.perf_counter() - t1
    mb = os.path.getsize(a.trace) / 1e6
    print(f"trace      {a.trace} ({mb:.1f} MB, {n:,} events)")
    print(f"ingest     {ingest:8.3f} s")
    for name, s in sorted(secs.items(), key=lambda kv: -kv[1]):
        rows = f"{tables[name].num_rows:>10,} rows" if name in tables else "(shared helper)"
        print(f"  {name:28s} {s:8.3f} s  {rows}")
    print(f"analyses   {total:8.3f} s")
    print(f"peak RSS   {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    print(f"RESULT analyze_ratio_to_ingest={total / ingest:.3f}")


if __name__ == "__main__":
    main()
