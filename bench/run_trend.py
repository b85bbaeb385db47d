#!/usr/bin/env python3
"""run_trend over lakes of many runs: its time follows the runs and steps, not the events.

usage: bench/run_trend.py [TRACE] [--runs 10,50] [--work DIR]

TRACE (default: the ResNet-50 training trace of kineto's tb_plugin samples, six
ProfilerStep#N) is ingested once with `ingest --run`, and so is a copy with 4x its events (every
event but the step annotations four times, the copies on processes of their own, with their
own correlation and flow ids: the same steps, four times the work in each). A lake of N runs
is then made of N copies of that ingested trace's files (RENUMBERED: with its own trace_id,
run label and run_seq, as N ingests of N identical files would write them; the other tables
linked), without the N ingests.
Each lake's run_trend query is timed (best of 3, a fresh tc.Lake each time; opening it is
timed apart), and the run ends with
  RESULT run_trend_s runs10=… runs50=… runs10_x4=… runs50_x4=…
"""

import argparse
import copy
import gzip
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

import tracecols
from tracecols.fleet.ingest import ingest_lake
from tracecols.store import lake as store

HERE = Path(__file__).resolve().parent
DEFAULT = HERE.parent.parent / "shared/traces/kineto/tb_plugin/samples/resnet50_num_workers_0"
DEFAULT = DEFAULT / "worker0.1623143089861.pt.trace.json.gz"
IDS = 10**8  # the copies' correlation, External id and flow ids are this far apart
# The tables a run's copy gets with its own trace_id (and run label): what run_trend reads. The
# others (events, slices, kernels, …) are the seed's files linked under the copy's name: they
# are in the lake, at full size, but their rows keep the seed's trace_id.
RENUMBERED = ("traces", "step_stats", "devices")


def load(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def four_times(doc):
    """The trace with every event but the ProfilerStep annotations (and metadata) four times."""
    out = copy.deepcopy(doc)
    extra = []
    for k in (1, 2, 3):
        for e in doc["traceEvents"]:
            if e.get("ph") == "M" or str(e.get("name", "")).startswith("ProfilerStep#"):
                continue
            c = copy.deepcopy(e)
            c["pid"] = c["pid"] + 1000 * k if isinstance(c.get("pid"), int) else f"{c.get('pid')}+{k}"
            args = c.get("args")
            if isinstance(args, dict):
                for key in ("correlation", "External id"):
                    if isinstance(args.get(key), int):
                        args[key] += IDS * k
            if c.get("ph") in ("s", "f", "t") and isinstance(c.get("id"), int):
                c["id"] += IDS * k
            extra.append(c)
    out["traceEvents"] = out["traceEvents"] + extra
    return out


def seed(trace_json, work):
    """A one-trace lake of `trace_json`, ingested under run label `seed`."""
    src = work / "src"
    src.mkdir()
    (src / "worker0.pt.trace.json").write_text(json.dumps(trace_json))
    lake = work / "seed"
    res = ingest_lake([str(src)], str(lake), jobs=1, run="seed")
    assert res.ok, res.failed
    return lake


def clone(seed_lake, out, runs):
    """A lake of `runs` runs, each a copy of the seed lake's one trace."""
    m = json.loads((seed_lake / store.MANIFEST).read_text())
    (rec,) = m["traces"]
    tables = {name: pq.read_table(seed_lake / rel) for name, rel in rec["files"].items() if name in RENUMBERED}
    m["traces"], m["runs"] = [], []
    for i in range(runs):
        label = f"run-{i:03d}"
        files = {}
        for name, rel0 in rec["files"].items():
            rel = f"{name}/{store.partition(rec['rank'])}/{store.file_name(i, rec['sha256'])}"
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            files[name] = rel
            if name not in RENUMBERED:  # the seed's file, under this trace's name
                os.link(seed_lake / rel0, out / rel)
                continue
            t = tables[name]
            t = t.set_column(t.schema.get_field_index("trace_id"), "trace_id", pa.array([i] * t.num_rows, pa.int32()))
            if name == "traces":
                t = t.set_column(t.schema.get_field_index("run"), "run", pa.array([label], pa.string()))
                t = t.set_column(t.schema.get_field_index("run_seq"), "run_seq", pa.array([i], pa.int32()))
            pq.write_table(t, out / rel, compression="zstd")
        m["traces"].append({**rec, "trace_id": i, "path": f"{rec['path']}#{label}", "run": label, "files": files})
        m["runs"].append(label)
    m["next_trace_id"] = runs
    m["inputs"] = [{"path": t["path"], "size": t["size"], "sha256": t["sha256"]} for t in m["traces"]]
    (out / store.MANIFEST).write_text(json.dumps(m, indent=1, sort_keys=True))
    return out


def timed(lake_path):
    """Best of 3 of (opening the lake, the run_trend query), each with a fresh tc.Lake."""
    best = (float("inf"), float("inf"))
    for _ in range(3):
        t0 = time.perf_counter()
        lake = tracecols.Lake(lake_path)
        t1 = time.perf_counter()
        rows = lake.sql("select * from run_trend").height
        t2 = time.perf_counter()
        best = min(best, (t2 - t1, t1 - t0))
    return best, rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace", nargs="?", default=str(DEFAULT))
    ap.add_argument("--runs", default="10,50")
    ap.add_argument("--work", help="folder for the lakes (default: a temporary one, removed)")
    a = ap.parse_args()
    work = Path(a.work or tempfile.mkdtemp(prefix="tracecols-run-trend-"))
    try:
        doc = load(a.trace)
        result = []
        for tag, trace_json in (("", doc), ("_x4", four_times(doc))):
            d = work / f"seed{tag}"
            d.mkdir(parents=True)
            t0 = time.perf_counter()
            s = seed(trace_json, d)
            events = tracecols.Lake(s).sql("select count(*) as n from events")["n"][0]
            print(f"seed{tag or '   '}  {events:>9,} events a run, ingested in {time.perf_counter() - t0:6.2f} s")
            for n in (int(x) for x in a.runs.split(",")):
                lake = clone(s, work / f"lake{n}{tag}", n)
                (secs, opening), rows = timed(lake)
                size = sum(f.stat().st_size for f in lake.rglob("*.parquet")) / 1e6
                print(
                    f"  {n:3d} runs ({n * events:>11,} events, {size:7.1f} MB)  "
                    f"open {opening:6.3f} s  run_trend {secs:6.3f} s  {rows} rows"
                )
                result.append(f"runs{n}{tag}={secs:.3f}")
        print("RESULT run_trend_s " + " ".join(result))
    finally:
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("POLARS_MAX_THREADS", "2")
    main()
