#!/usr/bin/env python3
"""The whole pipeline on one trace, against the parser floor, measured in one run.

usage: bench/e2e.py TRACE

The file is read once first (into the page cache, as it is for every measurement after it),
then fresh subprocesses, one after the other (each reports its own peak RSS):
  floor  for e in ijson.items(f, "traceEvents.item"): pass    (C backend, defaults)
  decode the same loop over tracecols' own event decoder (shown, not in the RESULT)
  e2e    the streaming ingest of `tracecols ingest`/`analyze`: read → events.parquet (encoded
         on a second thread while parsing) → host tree → launch links → FX markers → every
         sql/ view streamed to its own Parquet file (tracecols.pipeline.ingest_to_dir)
Peak RSS is the process's own (ru_maxrss) plus the peak private memory of its part parsers,
sampled (bench/memwatch.py: a forked parser shares its parent's pages, which its own RSS
would count a second time); peaks that do not coincide are added all the same, so this is an
upper bound. The highest coincident total sampled every 20 ms (a lower bound) is printed
beside it: the parsers live during the read, the process peaks later, in the views.
Prints each stage's time, and ends
  RESULT e2e_ratio_to_floor=R peak_rss_mb=M peak_rss_sampled_mb=S events=N
"""

import argparse
import json
import os
import sys

_E2E = r"""
import json, resource, sys, time
from tracecols import memory
memory.for_this_process()  # as the tracecols command does, before polars and pyarrow load
memory.without_pandas()
import pyarrow.parquet as pq
from tracecols.store.parquet import read_manifest
from tracecols.pipeline import ingest_to_dir
p, out = sys.argv[1], sys.argv[2]
stages = {}
t0 = time.perf_counter()
ingest_to_dir([p], out, timings=stages)
s = time.perf_counter() - t0
print(json.dumps({"s": s, "stages": stages, "tables": len(read_manifest(out)["tables"]),
                  "events": pq.ParquetFile(f"{out}/events.parquet").metadata.num_rows,
                  "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def _run(code, *args):
    """Run `code` in a fresh interpreter; its JSON result, with "rss" its own peak plus the
    peak private memory of its part parsers and "rss_sampled" the highest coincident total
    sampled (the upper and lower bound of its peak: bench/memwatch.py)."""
    from memwatch import run

    r, watch = run([sys.executable, "-c", code, *args])
    if r.returncode:
        sys.exit(r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "failed")
    out = json.loads(r.stdout.strip().splitlines()[-1])
    out["rss_sampled"], out["rss"] = watch.bounds(out.get("rss", 0))
    return out


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("trace")
    path = parser.parse_args().trace
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    import tempfile

    from ingest import _DECODE, _FLOOR, warm  # the same floor as bench/ingest.py

    warm(path)
    floor = _run(_FLOOR, path)
    decode = _run(_DECODE, path)
    with tempfile.TemporaryDirectory() as tmp:
        e2e = _run(_E2E, path, os.path.join(tmp, "out"))
    mb = os.path.getsize(path) / 1e6
    print(f"trace    {path}  {mb:.1f} MB on disk, {e2e['events']:,} events, {os.cpu_count()} cores")
    print(f"floor    {floor['s']:8.2f} s   (bare ijson iteration, {floor['backend']})")
    print(f"decode   {decode['s']:8.2f} s   (tracecols' chunked decoder alone, {decode['s'] / floor['s']:.2f}x floor)")
    views = e2e["stages"].pop("view_seconds", {})
    for stage, s in e2e["stages"].items():
        print(f"  {stage:<12} {s:8.2f} s   {s / floor['s']:5.2f}x floor")
    for name, s in sorted(views.items(), key=lambda kv: -kv[1])[:5]:
        print(f"    view {name:<24} {s:8.3f} s   {s / floor['s']:5.2f}x floor")
    print(
        f"e2e      {e2e['s']:8.2f} s   {e2e['events'] / e2e['s']:,.0f} ev/s, {e2e['tables']} tables and views, "
        f"peak RSS {e2e['rss'] / 1e6:.0f} MB at most, {e2e['rss_sampled'] / 1e6:.0f} MB sampled"
    )
    print(
        f"RESULT e2e_ratio_to_floor={e2e['s'] / floor['s']:.2f} peak_rss_mb={e2e['rss'] / 1e6:.0f} "
        f"peak_rss_sampled_mb={e2e['rss_sampled'] / 1e6:.0f} events={e2e['events']}"
    )


if __name__ == "__main__":
    main()
