"""Benchmark: Execution Trace <-> Kineto linking, end to end (read both, ingest, link).

usage: python bench/link.py [ET KINETO]   (default: param's linear_et + linear_kineto from ../shared/traces)
Prints the time of each stage, the floor (bare ijson iteration of both files), peak RSS, and ends
with `RESULT link_seconds=S match_rate=M` (S: wall time of read + ingest + link, this run).
Chakra's trace linker needs about 2 minutes on the default pair.
"""

import argparse
import resource
import time
from pathlib import Path

import ijson

from tracecols.model.et_link import link
from tracecols.pipeline import read_tables as ingest
from tracecols.read.execution_trace import read_execution_trace
from tracecols.read.source import Source

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "traces" / "param/et_replay/tests/inputs"


def floor(path, prefix):
    t = time.perf_counter()
    with Source(path).stream() as f:
        for _ in ijson.get_backend("yajl2_c").items(f, prefix):
            pass
    return time.perf_counter() - t


def main(et_path, k_path):
    fl = floor(et_path, "nodes.item") + floor(k_path, "traceEvents.item")
    t0 = time.perf_counter()
    et = read_execution_trace(et_path)
    t1 = time.perf_counter()
    tables, _ = ingest([str(k_path)])
    t2 = time.perf_counter()
    nodes, kern, s = link(et["nodes"], tables["events"], tables["slices"], tables["kernels"], et["meta"].get("pid"))
    t3 = time.perf_counter()
    total = t3 - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"et        {et_path}: {et['nodes'].num_rows:,} nodes, read {t1 - t0:.2f} s")
    print(f"kineto    {k_path}: {tables['events'].num_rows:,} events, ingest {t2 - t1:.2f} s")
    print(f"link      {t3 - t2:.2f} s  method {s['method']}, matched {s['matched']}/{s['et_ops']}, kernels {s['kernels_linked']}")
    print(f"floor     {fl:.2f} s (bare ijson iteration of both files); ratio to floor {total / fl:.1f}x")
    print(f"peak RSS  {rss:.0f} MB")
    print(f"RESULT link_seconds={total:.2f} match_rate={s['match_rate']:.4f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("et", nargs="?", default=CORPUS / "linear_et.json.gz")
    parser.add_argument("kineto", nargs="?", default=CORPUS / "linear_kineto.json.gz")
    a = parser.parse_args()
    main(a.et, a.kineto)
