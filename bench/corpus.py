#!/usr/bin/env python3
"""The whole pipeline on every real trace, each against its own parser floor, in one run.

usage: bench/corpus.py [DIR_OR_TRACE ...] [--repeat N] [--top N] [--json OUT]
                       [--small-only] [--base TREE]   (default: ../shared/traces and tests/data)

For every Kineto trace found (ET files, rocprof output and TraceLens's CSVs are passed over),
three fresh subprocesses, one after the other:
  floor  for e in ijson.items(f, "traceEvents.item"): pass    (bench/ingest.py's, C backend)
  e2e    `tracecols analyze TRACE -o OUT`'s pipeline (bench/e2e.py's): read, host tree, links,
         every sql/ view to Parquet, with each stage's and each view's own wall time
  memory `tracecols.open(TRACE)`, then `select * from VIEW` of every public view, each timed
         alone, as `tracecols sql` and `report` query them: over Arrow tables, the views each
         reads computed again inside it (DuckDB plans these queries apart from the pipeline's)
Every time is printed as a ratio to that trace's floor; peak memory as bench/e2e.py gives it,
an upper bound (RSS MB) and the highest coincident total sampled. The table is sorted by the e2e
ratio, worst first; each row names the trace's slowest view in either. With --repeat N each trace's
floor and pipeline run N times, alternately, and the fastest of each is kept (on a shared
machine the minimum is the least disturbed measurement of either). Ends with
  RESULT worst_e2e_ratio=R worst_trace=NAME worst_view=VIEW:R median_e2e_ratio=R traces=N
         worst_query=VIEW:R
(worst_view: the highest single-view ratio of the pipeline over all traces; worst_query: the
same for a view queried in memory). The load average is printed
before and after: compare runs only on a quiet machine.

A small trace (under SMALL_EVENTS events) is bound by what every command pays before its first
event, not by the parser: it is measured against the import floor instead, as the user runs it,
each a fresh subprocess, alternately, the fastest of --repeat kept:
  import floor  python -c "import tracecols, duckdb, polars, pyarrow"   (starting Python and
                importing the package and the libraries `tracecols analyze` runs on)
  analyze       `tracecols analyze -q TRACE` (the summary)
  analyze -o    `tracecols analyze -q TRACE -o OUT` (every table and analysis written, and the summary)
with the columns analyze/floor and analyze -o/floor, and the line
  RESULT small_worst_analyze=R small_worst_analyze_o=R import_floor_s=S traces=N
(the worst ratio of each over the small traces; S the fastest floor of the run). --small-only
measures the small traces only, and only so (their events counted from the JSON). --base TREE
runs the same commands from another tracecols tree (a checkout of an earlier commit, with its
compiled reader) in the same run, alternately: its ratios are printed beside, and
  RESULT base_small_worst_analyze=R base_small_worst_analyze_o=R
Run with the bytecode of both trees written (python -m compileall), as an install has it: with
PYTHONDONTWRITEBYTECODE set, every command would compile the package's sources again.
"""

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_DIR = HERE.parent.parent / "shared" / "traces"
# the real traces the project keeps itself (tests/data/h100: torch 2.11 on an H100, with torch's
# own key_averages), named from the repository's root
OWN_DIR = HERE.parent / "tests" / "data"
DEFAULT_DIRS = [DEFAULT_DIR, OWN_DIR]
SMALL_EVENTS = 5000  # below this a trace is measured against the import floor
# what `tracecols analyze` needs loaded before it reads a byte: the package and its libraries
IMPORT_FLOOR = "import tracecols, duckdb, polars, pyarrow"


def is_kineto(path):
    """A Chrome-trace JSON object with traceEvents (looked for in the first 64 KiB, then whole)."""
    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            head = f.read(1 << 16)
            if b'"traceEvents"' in head:
                return True
            if not head.lstrip().startswith(b"{"):
                return False
            return b'"traceEvents"' in head + f.read()
    except (OSError, EOFError):
        return False


def traces(args):
    out = []
    for a in args or [str(d) for d in DEFAULT_DIRS]:
        p = Path(a)
        files = sorted(f for f in p.rglob("*.json*") if f.is_file()) if p.is_dir() else [p]
        out += [f for f in files if f.name.endswith((".json", ".json.gz")) and is_kineto(f)]
    return out


def short(path, roots):
    """The trace's name: its path under the first directory given that holds it, else under
    the corpus, else under the repository, else its file name (a trace given by itself is no
    root: all would be '.')."""
    for r in [r for r in roots if Path(r).is_dir()] + [str(DEFAULT_DIR), str(HERE.parent)]:
        try:
            return str(Path(path).resolve().relative_to(Path(r).resolve()))
        except ValueError:
            pass
    return Path(path).name


_IN_MEMORY = r"""
import json, sys, time
import tracecols
import tracecols.pipeline, tracecols.trace  # the libraries loaded before the clock starts, as in e2e
t0 = time.perf_counter()
t = tracecols.open(sys.argv[1])
opened = time.perf_counter() - t0
views = {}
for name in t.views:
    t0 = time.perf_counter()
    t.arrow(f"select * from {name}")
    views[name] = time.perf_counter() - t0
print(json.dumps({"s": opened, "views": views}))
"""


def json_events(path):
    """How many trace events the file holds, counted from its JSON (a small file's: --small-only)."""
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as f:
        doc = json.load(f)
    return len(doc.get("traceEvents") or []) if isinstance(doc, dict) else len(doc)


def _wall(argv, tree):
    """Seconds of one fresh process running `argv` with `tree` first on the import path. It runs
    in `tree`: `python -m` and `python -c` put their working directory before PYTHONPATH, and run
    from another checkout they would import that one's tracecols, whatever `tree` says."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    t0 = time.perf_counter()
    r = subprocess.run(argv, env=env, cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    s = time.perf_counter() - t0
    if r.returncode:
        sys.exit(f"bench/corpus.py: {' '.join(map(str, argv))}: {(r.stderr.strip().splitlines() or ['failed'])[-1]}")
    return s


def measure_small(path, repeat=1, trees=(HERE.parent,)):
    """The import floor, `analyze` and `analyze -o` of a small trace, alternately, `repeat`
    times each, for each tree: the fastest of each, {tree: {"floor", "analyze", "analyze -o"}}."""
    best: dict = {str(t): {} for t in trees}
    py = [sys.executable]
    for _ in range(max(1, repeat)):
        for tree in trees:
            with tempfile.TemporaryDirectory() as tmp:
                trace = os.path.abspath(path)  # the commands run in `tree` (_wall)
                runs = {
                    "floor": py + ["-c", IMPORT_FLOOR],
                    "analyze": py + ["-m", "tracecols", "analyze", "-q", trace],
                    "analyze -o": py + ["-m", "tracecols", "analyze", "-q", trace, "-o", os.path.join(tmp, "out")],
                }
                for what, argv in runs.items():
                    s = _wall(argv, tree)
                    b = best[str(tree)]
                    b[what] = min(s, b.get(what, s))
    return best


def measure(path, repeat=1):
    """Floor and pipeline, alternately, `repeat` times; the fastest of each (their peak RSS
    is the run's)."""
    sys.path.insert(0, str(HERE))
    from e2e import _E2E, _run
    from ingest import _FLOOR, warm

    warm(path)
    floor = e2e = mem = None
    for _ in range(repeat):
        f = _run(_FLOOR, str(path))
        with tempfile.TemporaryDirectory() as tmp:
            e = _run(_E2E, str(path), os.path.join(tmp, "out"))
        m = _run(_IN_MEMORY, str(path))
        floor = f if floor is None or f["s"] < floor["s"] else floor
        e2e = e if e2e is None or e["s"] < e2e["s"] else e2e
        mem = m if mem is None else {**m, "views": {k: min(v, mem["views"][k]) for k, v in m["views"].items()}}
    f = floor["s"]
    views = e2e["stages"].pop("view_seconds", {})
    worst = max(views.items(), key=lambda kv: kv[1], default=("-", 0.0))
    worst_mem = max(mem["views"].items(), key=lambda kv: kv[1], default=("-", 0.0))
    return {
        "mb": path.stat().st_size / 1e6,
        "events": e2e["events"],
        "floor_s": f,
        "e2e_s": e2e["s"],
        "e2e": e2e["s"] / f,
        "stages": {k: v / f for k, v in e2e["stages"].items()},
        "views": {k: v / f for k, v in views.items()},
        "worst_view": (worst[0], worst[1] / f),
        "queries": {k: v / f for k, v in mem["views"].items()},
        "worst_query": (worst_mem[0], worst_mem[1] / f),
        "open": mem["s"] / f,
        "rss_mb": e2e["rss"] / 1e6,
        "rss_sampled_mb": e2e["rss_sampled"] / 1e6,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--top", type=int, default=0, help="print only the N worst rows (default: all)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per trace, the fastest kept (default 1)")
    ap.add_argument("--json", help="also write every measurement (per view too) to this file")
    ap.add_argument(
        "--small-only", action="store_true", help=f"only the traces under {SMALL_EVENTS} events, against the import floor"
    )
    ap.add_argument("--base", help="another tracecols tree whose commands run beside, for the small traces")
    a = ap.parse_args()
    roots = a.paths
    files = traces(a.paths)
    if not files:
        sys.exit(f"bench/corpus.py: no Kineto trace under {', '.join(roots or map(str, DEFAULT_DIRS))}")
    trees = [HERE.parent] + ([Path(a.base).resolve()] if a.base else [])
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    if a.small_only:
        return small_only(files, roots, a, trees, load0, t0)
    rows = {}
    for i, p in enumerate(files, 1):
        name = short(p, roots)
        print(f"[{i}/{len(files)}] {name}", file=sys.stderr, flush=True)
        rows[name] = measure(p, a.repeat)
        if rows[name]["events"] < SMALL_EVENTS:
            rows[name]["small"] = measure_small(p, a.repeat, trees)
    load1 = os.getloadavg()
    order = sorted(rows, key=lambda n: -rows[n]["e2e"])
    stages = ["read", "tree", "links", "critical path", "views"]
    w = max(len(n) for n in order)
    print(
        f"{'trace':<{w}} {'MB':>6} {'events':>8} {'floor s':>8} "
        + " ".join(f"{s:>6}" for s in stages)
        + f" {'e2e':>6} {'RSS MB':>6} {'sampled':>7}  slowest view (x floor)  open, slowest query in memory"
    )
    for n in order[: a.top or None]:
        r = rows[n]
        print(
            f"{n:<{w}} {r['mb']:6.1f} {r['events']:8d} {r['floor_s']:8.3f} "
            + " ".join(f"{r['stages'].get(s, 0):6.2f}" for s in stages)
            + f" {r['e2e']:6.2f} {r['rss_mb']:6.0f} {r['rss_sampled_mb']:7.0f}  {r['worst_view'][0]}:{r['worst_view'][1]:.3f}"
            + f"  {r['open']:.2f}, {r['worst_query'][0]}:{r['worst_query'][1]:.3f}"
        )
    big = sorted(rows, key=lambda n: -rows[n]["events"])[:5]
    print(
        f"five largest (by events): worst e2e ratio {max(rows[n]['e2e'] for n in big):.2f} "
        "(" + ", ".join(f"{n}={rows[n]['e2e']:.2f}" for n in big) + ")"
    )
    print(f"load average {load0[0]:.2f} before, {load1[0]:.2f} after; {os.cpu_count()} cores; {time.perf_counter() - t0:.0f} s")
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    print_small({n: r for n, r in rows.items() if "small" in r}, trees)
    worst = order[0]
    vname, vtrace = max(((v, n) for n in rows for v in rows[n]["views"]), key=lambda vn: rows[vn[1]]["views"][vn[0]])
    print(f"worst single view: {vname} on {vtrace}")
    qname, qtrace = max(((v, n) for n in rows for v in rows[n]["queries"]), key=lambda vn: rows[vn[1]]["queries"][vn[0]])
    print(f"worst view queried in memory: {qname} on {qtrace}")
    print(
        f"RESULT worst_e2e_ratio={rows[worst]['e2e']:.2f} worst_trace={worst} "
        f"worst_view={vname}:{rows[vtrace]['views'][vname]:.2f} "
        f"median_e2e_ratio={statistics.median(r['e2e'] for r in rows.values()):.2f} traces={len(rows)} "
        f"worst_query={qname}:{rows[qtrace]['queries'][qname]:.2f}"
    )


def small_only(files, roots, a, trees, load0, t0):
    """--small-only: the traces under SMALL_EVENTS events, against the import floor alone."""
    rows = {}
    for i, p in enumerate(files, 1):
        if p.stat().st_size * (8 if p.name.endswith(".gz") else 1) > SMALL_EVENTS * 4000:
            continue  # far more bytes than a small trace's events take
        events = json_events(p)
        if events >= SMALL_EVENTS:
            continue
        name = short(p, roots)
        print(f"[{i}/{len(files)}] {name}", file=sys.stderr, flush=True)
        rows[name] = {"mb": p.stat().st_size / 1e6, "events": events, "small": measure_small(p, a.repeat, trees)}
    if not rows:
        sys.exit(f"bench/corpus.py: no trace under {SMALL_EVENTS} events")
    load1 = os.getloadavg()
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    print(f"load average {load0[0]:.2f} before, {load1[0]:.2f} after; {os.cpu_count()} cores; {time.perf_counter() - t0:.0f} s")
    print_small(rows, trees)


def print_small(rows, trees):
    """The small traces' table against the import floor, and their RESULT lines."""
    if not rows:
        return
    names = [str(t) for t in trees]
    ratios = {
        n: {
            t: (r["small"][t]["analyze"] / r["small"][t]["floor"], r["small"][t]["analyze -o"] / r["small"][t]["floor"])
            for t in names
        }
        for n, r in rows.items()
    }
    order = sorted(rows, key=lambda n: -max(ratios[n][names[0]]))
    w = max(len(n) for n in order)
    base = "  base analyze/floor  base analyze -o/floor" if len(names) > 1 else ""
    print(f"\nsmall traces (under {SMALL_EVENTS} events), each against the import floor ({IMPORT_FLOOR})")
    head = f"{'trace':<{w}} {'events':>6} {'floor s':>7} {'analyze s':>9} {'-o s':>6}"
    print(f"{head} {'analyze/floor':>13} {'analyze -o/floor':>16}{base}")
    for n in order:
        m = rows[n]["small"][names[0]]
        line = f"{n:<{w}} {rows[n]['events']:6d} {m['floor']:7.3f} {m['analyze']:9.3f} {m['analyze -o']:6.3f} "
        line += f"{ratios[n][names[0]][0]:13.2f} {ratios[n][names[0]][1]:16.2f}"
        if len(names) > 1:
            line += f"  {ratios[n][names[1]][0]:18.2f} {ratios[n][names[1]][1]:21.2f}"
        print(line)
    floor = min(r["small"][t]["floor"] for r in rows.values() for t in names)
    worst = [max(ratios[n][names[0]][i] for n in rows) for i in (0, 1)]
    print(
        f"RESULT small_worst_analyze={worst[0]:.2f} small_worst_analyze_o={worst[1]:.2f} "
        f"import_floor_s={floor:.3f} traces={len(rows)}"
    )
    if len(names) > 1:
        worst = [max(ratios[n][names[1]][i] for n in rows) for i in (0, 1)]
        print(f"RESULT base_small_worst_analyze={worst[0]:.2f} base_small_worst_analyze_o={worst[1]:.2f}")


if __name__ == "__main__":
    main()
