#!/usr/bin/env python3
"""How fast `tracecols sql OUT "<query>"` answers over an ingest's output directory.

usage: bench/sql.py OUT_DIR [--repeat N]

OUT_DIR is what `tracecols analyze TRACE -o OUT_DIR` (or bench/e2e.py) wrote. The query is
the kernel statistics one: time per kernel name over every kernel of the trace, top 10.
Measured, best of N runs each:
  cli     the whole command in a fresh process: interpreter start, imports, opening the
          directory, the query, printing
  query   the query alone, on an already opened directory (tracecols.open(OUT_DIR).sql)
Ends with
  RESULT sql_cli_seconds=S1 sql_query_seconds=S2 kernels=N
"""

import argparse
import os
import shutil
import subprocess
import sys
import time

QUERY = """SELECT name, count(*) AS n, sum(dur_ns) AS total_ns, avg(dur_ns) AS mean_ns,
       min(dur_ns) AS min_ns, max(dur_ns) AS max_ns
FROM kernels GROUP BY name ORDER BY total_ns DESC LIMIT 10"""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    exe = shutil.which("tracecols") or os.path.join(os.path.dirname(sys.executable), "tracecols")
    cli = []
    for _ in range(a.repeat):
        t = time.perf_counter()
        subprocess.run([exe, "sql", a.out_dir, QUERY], check=True, capture_output=True)
        cli.append(time.perf_counter() - t)
    import tracecols

    tr = tracecols.open(a.out_dir)
    n = tr.sql("SELECT count(*) AS n FROM kernels")["n"][0]
    query = []
    for _ in range(a.repeat):
        t = time.perf_counter()
        tr.sql(QUERY)
        query.append(time.perf_counter() - t)
    print(f"output  {a.out_dir}: {n:,} kernels, {os.cpu_count()} cores")
    print(f"cli     {min(cli):.3f} s  (best of {a.repeat}: {', '.join(f'{x:.3f}' for x in cli)})")
    print(f"query   {min(query):.3f} s  (best of {a.repeat}: {', '.join(f'{x:.3f}' for x in query)})")
    print(f"RESULT sql_cli_seconds={min(cli):.3f} sql_query_seconds={min(query):.3f} kernels={n}")


if __name__ == "__main__":
    main()
