#!/usr/bin/env python3
"""The cost of the capture merge (docs/graphs.md) against the ingest of the replay trace.

usage: bench/graph.py REPLAY CAPTURE_DIR [--repeat N]

In one fresh process, N times (best of N kept for each):
  ingest   the in-memory ingest of REPLAY alone (read, host tree, launch links, graph
           stage with no capture traces: the pseudo ops)
  capture  reading the capture traces of CAPTURE_DIR (their own ingest: parse, tree, links)
  merge    the graph stage of REPLAY's ingest with those captures: match the replayed
           kernel sequences, build the graft templates, graft, relink the kernels
  streaming  the streaming ingest of `analyze` (events to Parquet, tree, links, graphs; no
           views) of REPLAY without and with the captures: what --capture adds there
           (the merge, and the grafted rows written to slices.parquet and events.parquet)
Ends
  RESULT capture_merge_ratio_to_ingest=R capture_added_ratio_to_streaming_ingest=S
         capture_read_ratio_to_ingest=C matched=M/N kernels=K peak_rss_mb=P
The merge is what `--capture` adds to every replay trace; reading the capture traces is
paid once per capture folder (they are often far larger than a replay trace).
"""

import json
import os
import subprocess
import sys

_CODE = r"""
import json, resource, sys, tempfile, time
from tracecols import memory
memory.for_this_process()
from tracecols.pipeline import ingest_to_dir
from tracecols.pipeline import read_captures
from tracecols.pipeline import read_tables as ingest
replay, folder, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
best = {}
def keep(k, v):
    best[k] = min(best.get(k, v), v)
for _ in range(n):
    t = {}
    t0 = time.perf_counter(); ingest([replay], timings=t); keep("ingest", time.perf_counter() - t0)
    keep("graphs_alone", t.get("graphs", 0.0))
    t0 = time.perf_counter(); caps = read_captures(folder); keep("capture", time.perf_counter() - t0)
    t = {}
    tables, _ = ingest([replay], timings=t, captures=caps)
    keep("merge", t["graphs"])
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter(); ingest_to_dir([replay], d + "/a", views=False); keep("stream", time.perf_counter() - t0)
        t0 = time.perf_counter(); ingest_to_dir([replay], d + "/b", views=False, captures=caps)
        keep("stream_cap", time.perf_counter() - t0)
g = tables["graph_replays"]
print(json.dumps({**best, "launches": g.num_rows, "matched": sum(g.column("matched").to_pylist()),
                  "kernels": sum(g.column("kernels").to_pylist()),
                  "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def main():
    args = sys.argv[1:]
    repeat = 3
    if "--repeat" in args:
        i = args.index("--repeat")
        repeat = int(args[i + 1])
        del args[i : i + 2]
    if len(args) != 2:
        sys.exit(__doc__)
    replay, folder = args
    r = subprocess.run([sys.executable, "-c", _CODE, replay, folder, str(repeat)], capture_output=True, text=True, check=False)
    if r.returncode:
        sys.exit(r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "failed")
    m = json.loads(r.stdout.strip().splitlines()[-1])
    load = os.getloadavg()[0]
    print(f"replay   {replay}")
    print(f"capture  {folder}")
    print(f"ingest   {m['ingest']:.3f} s   (its graph stage without capture traces: {m['graphs_alone']:.3f} s)")
    print(f"capture  {m['capture']:.3f} s   (reading the capture traces, once per folder)")
    print(f"merge    {m['merge']:.3f} s   ({m['matched']} of {m['launches']} graph launches matched, {m['kernels']} kernels)")
    print(f"streaming {m['stream']:.3f} s without the captures, {m['stream_cap']:.3f} s with them")
    print(f"load average {load:.2f}, best of {repeat}")
    print(
        f"RESULT capture_merge_ratio_to_ingest={m['merge'] / m['ingest']:.3f} "
        f"capture_added_ratio_to_streaming_ingest={(m['stream_cap'] - m['stream']) / m['stream']:.3f} "
        f"capture_read_ratio_to_ingest={m['capture'] / m['ingest']:.2f} matched={m['matched']}/{m['launches']} "
        f"kernels={m['kernels']} peak_rss_mb={m['rss'] / 2**20:.0f}"
    )


if __name__ == "__main__":
    main()
