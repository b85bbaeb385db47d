#!/usr/bin/env python3
"""`tracecols compare A B` against analysing both, in one run.

usage: bench/compare.py [A B] [--repeat N]     (default: tests/data/runs base_a and base_b,
                                                two sessions of one training job, 24 steps each)

Fresh subprocesses, one after the other, each N times (the fastest kept: on a shared machine
the minimum is the least disturbed measurement):
  analyze   `tracecols analyze A -q` then `tracecols analyze B -q` (the summary of each)
  compare   `tracecols compare A B -q` (every comparison, with the per-step noise test)
Ends with
  RESULT compare_s=S analyze_both_s=S ratio=R load=L
where ratio = compare / (analyze A + analyze B); the target is at most 1.3.
"""

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = ROOT / "tests" / "data" / "runs"


def _time(argv: list[str]) -> float:
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "tracecols", *argv, "-q"], capture_output=True, text=True)
    if r.returncode not in (0, 1):  # 1: a gate breach, still a full comparison
        sys.exit(f"bench/compare.py: {' '.join(argv)} failed: {r.stderr.strip()}")
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("sides", nargs="*", default=[str(RUNS / "base_a.pt.trace.json.gz"), str(RUNS / "base_b.pt.trace.json.gz")])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if len(args.sides) != 2:
        sys.exit("bench/compare.py: give two sides, A and B")
    a, b = args.sides
    load0 = os.getloadavg()[0]
    analyze, compare = [], []
    for _ in range(args.repeat):  # alternately, so both see the same machine
        analyze.append(_time(["analyze", a]) + _time(["analyze", b]))
        compare.append(_time(["compare", a, b]))
    both, cmp = min(analyze), min(compare)
    print(f"A {a}\nB {b}")
    print(f"analyze A + analyze B: {both:.2f} s (min of {args.repeat}); compare: {cmp:.2f} s")
    load = max(load0, os.getloadavg()[0])
    print(f"RESULT compare_s={cmp:.2f} analyze_both_s={both:.2f} ratio={cmp / both:.2f} load={load:.2f}")


if __name__ == "__main__":
    main()
