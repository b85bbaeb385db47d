"""Benchmark: host tree + launch links (slices, kernels) against ingest, on one trace.

usage: python bench/tree.py TRACE
Prints the ingest time (read + events table), the tree+links time, rows and peak RSS, and
ends with `RESULT tree_ratio_to_ingest=R` (both measured in this one run).
"""

import argparse
import resource
import time

from tracecols.model.events import events_table
from tracecols.model.kernels import build_kernels
from tracecols.model.traces import detect_rank
from tracecols.model.tree import build_slices
from tracecols.read.kineto import read_trace


def main(path):
    t0 = time.perf_counter()
    batches = []
    info = read_trace(path, batches.append)
    rank, _ = detect_rank(path, info["metadata"])
    events = events_table(batches, 0, rank)
    del batches
    t1 = time.perf_counter()
    slices = build_slices(events)
    t2 = time.perf_counter()
    kernels = build_kernels(events, slices)
    t3 = time.perf_counter()
    ingest, tree, links = t1 - t0, t2 - t1, t3 - t2
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"trace        {path}")
    print(f"events       {events.num_rows:,}   slices {slices.num_rows:,}   kernels {kernels.num_rows:,}")
    print(f"ingest       {ingest:8.2f} s   ({events.num_rows / ingest:,.0f} events/s)")
    print(f"tree         {tree:8.2f} s   (slices)")
    print(f"links        {links:8.2f} s   (kernels)")
    print(f"tree+links   {tree + links:8.2f} s")
    print(f"peak RSS     {rss:,.0f} MB")
    print(f"RESULT tree_ratio_to_ingest={(tree + links) / ingest:.3f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trace")
    main(parser.parse_args().trace)
