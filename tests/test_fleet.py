"""Cross-rank analyses on real multi-rank jobs, checked against a plain reference written here.

The reference reads each trace with the `json` module and walks it in plain Python: the NCCL
kernel, its launch (same correlation), the `nccl:<collective>` annotation around the launch
(latest-starting enclosing one on the launch's thread), the ProfilerStep annotations. Then
matching, skew, medians and MADs are computed with loops and `statistics`.
"""

import json
import shutil
import statistics
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from conftest import CORPUS

import tracecols
from tracecols.fleet.ingest import ingest_lake

pytestmark = pytest.mark.corpus

DLRM = CORPUS / "param/et_replay/tests/inputs/dlrm_kineto.tar.gz.extracted/dlrm_kineto"
HTA_SAMPLED = CORPUS / "HolisticTraceAnalysis/tests/data/trace_filter"
ELEM = {"float": 4, "long int": 8, "long": 8, "int": 4, "unsigned char": 1, "signed char": 1}
FACTOR = {
    "allreduce": lambda n: 2 * (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
    "allgather": lambda n: (n - 1) / n,
    "reducescatter": lambda n: (n - 1) / n,
}


def _ns(v):
    return int(Decimal(str(v)) * 1000)


def reference(path):
    """rank, world size, steps [(ts, dur)], collectives [(name, bytes, ts, dur)] of one trace."""
    doc = json.loads(
        Path(path).read_text() if not str(path).endswith(".gz") else __import__("gzip").decompress(Path(path).read_bytes()),
        parse_float=Decimal,
    )
    ev = doc["traceEvents"]
    info = doc["distributedInfo"]
    steps = [
        (_ns(e["ts"]), _ns(e["dur"]))
        for e in ev
        if e.get("ph") == "X" and e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")
    ]
    launches = {}
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {}):
            launches[e["args"]["correlation"]] = e
    anns = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "user_annotation" and e["name"].startswith("nccl:")]
    colls = []
    for k in ev:
        if k.get("ph") != "X" or k.get("cat") != "kernel" or not k["name"].startswith("nccl"):
            continue
        la = launches[k["args"]["correlation"]]
        lt, le = _ns(la["ts"]), _ns(la["ts"]) + _ns(la["dur"])
        around = [
            a
            for a in anns
            if a["pid"] == la["pid"] and a["tid"] == la["tid"] and _ns(a["ts"]) <= lt and _ns(a["ts"]) + _ns(a["dur"]) >= le
        ]
        a = max(around, key=lambda a: _ns(a["ts"]))
        name = a["name"].split(":", 1)[1].replace("_", "")
        n = 1
        for d in a["args"]["Input Dims"][0]:
            n *= d
        nbytes = n * ELEM[a["args"]["Input type"][0]]
        if name == "allgatherbase":
            name, nbytes = "allgather", nbytes * info["world_size"]
        colls.append((name, nbytes, _ns(k["ts"]), _ns(k["dur"])))
    colls.sort(key=lambda c: c[2])
    return info["rank"], info["world_size"], steps, colls


def reference_job(paths):
    """Per-instance skew and per-rank straggler measures, with plain loops."""
    per_rank = {}
    for p in paths:
        rank, world, steps, colls = reference(p)
        per_rank[rank] = (world, steps, colls)
    instances = {}
    for rank, (_, _, colls) in per_rank.items():
        count = {}
        for name, nbytes, ts, dur in colls:
            seq = count.get(name, 0)
            count[name] = seq + 1
            instances.setdefault((name, seq), []).append((rank, ts, ts + dur, nbytes))
    skew = {}
    for key, rows in instances.items():
        starts = [r[1] for r in rows]
        ends = [r[2] for r in rows]
        last = max(rows, key=lambda r: (r[1], -r[0]))[0]
        skew[key] = {
            "ranks": len(rows),
            "start_skew_ns": max(starts) - min(starts),
            "end_skew_ns": max(ends) - min(ends),
            "last_rank": last,
            "first_rank": min(rows, key=lambda r: (r[1], r[0]))[0],
        }
    late = {r: [] for r in per_rank}
    last_count = {r: 0 for r in per_rank}
    for key, rows in instances.items():
        if len(rows) < 2:
            continue
        first = min(r[1] for r in rows)
        for r in rows:
            late[r[0]].append(r[1] - first)
        last_count[skew[key]["last_rank"]] += 1
    step_mean = {r: statistics.mean(d for _, d in v[1]) for r, v in per_rank.items() if v[1]}
    arrival = {r: statistics.mean(v) for r, v in late.items() if v}

    def flags(values):
        med = statistics.median(values.values())
        mad = statistics.median(abs(x - med) for x in values.values())
        out = {}
        for r, x in values.items():
            if len(values) < 3:
                out[r] = False
            elif mad == 0:
                out[r] = x > med
            else:
                out[r] = (x - med) / (1.4826 * mad) > 3.5
        return med, out

    step_med, slow = flags(step_mean)
    arr_med, lat_flags = flags(arrival)
    return (
        per_rank,
        instances,
        skew,
        {
            "step_mean": step_mean,
            "step_median": step_med,
            "slow": slow,
            "arrival": arrival,
            "arrival_median": arr_med,
            "late": lat_flags,
            "times_last": last_count,
        },
    )


@pytest.fixture(scope="module")
def dlrm_lake(tmp_path_factory):
    out = tmp_path_factory.mktemp("dlrm") / "lake"
    res = ingest_lake([str(DLRM)], str(out), jobs=2)
    assert res.ok and len(res.added) == 8
    return tracecols.Lake(out)


@pytest.fixture(scope="module")
def dlrm_ref():
    return reference_job(sorted(DLRM.glob("*.pt.trace.json")))


def test_ranks_detected(dlrm_lake):
    t = dlrm_lake.sql("select rank, world_size, rank_source, backend, path from traces order by rank")
    assert t["rank"].to_list() == list(range(8))
    assert set(t["world_size"]) == {8} and set(t["rank_source"]) == {"distributedInfo"}
    for r, p in zip(t["rank"], t["path"]):
        assert Path(p).name.startswith(f"worker{r}_")
    assert dlrm_lake.ranks == list(range(8))
    # hive layout: each rank's files in its own rank=R directory
    for tr in dlrm_lake.traces:
        assert all(f"/rank={tr['rank']}/" in rel for rel in tr["files"].values())


def test_collectives_match_reference(dlrm_lake, dlrm_ref):
    per_rank, _, _, _ = dlrm_ref
    got = dlrm_lake.sql(
        "select rank, collective, msg_bytes, ts_ns, dur_ns, group_size, bus_factor, "
        "algbw_gb_per_s, busbw_gb_per_s, collective_source from collectives order by rank, ts_ns"
    )
    for rank, (world, _, colls) in per_rank.items():
        rows = got.filter(got["rank"] == rank).to_dicts()
        assert [(r["collective"], r["msg_bytes"], r["ts_ns"], r["dur_ns"]) for r in rows] == colls
        for r in rows:
            assert r["group_size"] == world == 8 and r["collective_source"] == "annotation"
            assert r["bus_factor"] == pytest.approx(FACTOR[r["collective"]](8))
            algbw = r["msg_bytes"] / r["dur_ns"]  # bytes per ns == GB/s
            assert r["algbw_gb_per_s"] == pytest.approx(algbw)
            assert r["busbw_gb_per_s"] == pytest.approx(algbw * FACTOR[r["collective"]](8))
    assert {c[0] for v in per_rank.values() for c in v[2]} == {"alltoall", "allreduce"}


def test_collectives_matched_across_ranks_and_skew(dlrm_lake, dlrm_ref):
    _, instances, skew, _ = dlrm_ref
    got = dlrm_lake.sql("select * from collective_skew")
    assert got.height == len(skew) == 8  # 5 alltoall + 3 allreduce calls, each on all 8 ranks
    for r in got.to_dicts():
        ref = skew[(r["collective"], r["seq"])]
        assert r["ranks"] == 8 and r["complete"] and r["group_size"] == 8
        for k in ("start_skew_ns", "end_skew_ns", "last_rank", "first_rank"):
            assert r[k] == ref[k], (r["collective"], r["seq"], k)
        assert r["start_skew_ns"] > 0
    # the matched kernels agree on the message size on every rank
    sizes = dlrm_lake.sql("select collective, seq, count(distinct msg_bytes) as n from collectives group by all")
    assert set(sizes["n"]) == {1}


def test_stragglers_match_reference(dlrm_lake, dlrm_ref):
    _, _, _, ref = dlrm_ref
    got = {r["rank"]: r for r in dlrm_lake.sql("select * from stragglers").to_dicts()}
    assert sorted(got) == list(range(8))
    for rank, r in got.items():
        assert r["step_mean_ns"] == pytest.approx(ref["step_mean"][rank])
        assert r["step_median_ns"] == pytest.approx(ref["step_median"])
        assert r["arrival_late_ns"] == pytest.approx(ref["arrival"][rank])
        assert r["arrival_excess_ns"] == pytest.approx(ref["arrival"][rank] - ref["arrival_median"])
        assert r["times_last"] == ref["times_last"][rank]
        assert r["slow_step"] == ref["slow"][rank] and r["late_arrival"] == ref["late"][rank]
    # rank 7 is the last to arrive at most collectives of this job
    assert max(got.values(), key=lambda r: r["times_last"])["rank"] == 7


def test_rank_summary_steps_and_gpu(dlrm_lake, dlrm_ref):
    per_rank, _, _, _ = dlrm_ref
    s = {r["rank"]: r for r in dlrm_lake.sql("select * from rank_summary").to_dicts()}
    for rank, (_, steps, colls) in per_rank.items():
        r = s[rank]
        assert r["steps"] == len(steps) == 1
        assert r["step_max_ns"] == max(d for _, d in steps)
        assert r["collectives"] == len(colls) and r["comm_bytes"] == sum(c[1] for c in colls)
        assert r["gpu_busy_ns"] + r["gpu_idle_ns"] == r["gpu_total_ns"] > 0
        # the collectives of one rank do not overlap each other (one NCCL stream), so comm = their sum
        assert r["comm_ns"] == sum(c[3] for c in colls)


def _plain_number(v):
    if isinstance(v, Decimal):
        return int(v) if v == v.to_integral_value() else float(v)
    raise TypeError(type(v))


def test_injected_straggler_is_found(tmp_path):
    """Rank 5 delayed by 3 ms at every collective and its step 2.5x as long: flagged, nobody else."""
    src = tmp_path / "job"
    src.mkdir()
    for p in sorted(DLRM.glob("*.pt.trace.json")):
        doc = json.loads(p.read_text(), parse_float=Decimal)
        if doc["distributedInfo"]["rank"] == 5:
            for e in doc["traceEvents"]:
                if e.get("cat") == "kernel" and e["name"].startswith("nccl"):
                    e["ts"] = e["ts"] + 3000
                if e.get("name", "").startswith("ProfilerStep#"):
                    e["dur"] = e["dur"] * 5 // 2
        (src / p.name).write_text(json.dumps(doc, default=_plain_number))
    lake = tmp_path / "lake"
    assert ingest_lake([str(src)], str(lake), jobs=2).ok
    got = {r["rank"]: r for r in tracecols.Lake(lake).sql("select * from stragglers").to_dicts()}
    _, _, _, ref = reference_job(sorted(src.glob("*.json")))
    assert [r for r, v in got.items() if v["straggler"]] == [5]
    assert got[5]["late_arrival"] and got[5]["slow_step"]
    assert got[5]["times_last"] == ref["times_last"][5] >= 7  # of 8 calls
    assert got[5]["step_excess_ns"] == pytest.approx(ref["step_mean"][5] - ref["step_median"])
    assert got[5]["arrival_excess_ns"] == pytest.approx(ref["arrival"][5] - ref["arrival_median"])
    assert all(got[r]["slow_step"] == ref["slow"][r] and got[r]["late_arrival"] == ref["late"][r] for r in got)


def test_hta_sampled_ranks(tmp_path):
    lake = tmp_path / "lake"
    res = ingest_lake([str(HTA_SAMPLED)], str(lake), jobs=1)
    assert res.ok and len(res.added) == 2
    L = tracecols.Lake(lake)
    t = L.sql("select rank, world_size from traces order by rank")
    assert t.rows() == [(0, 128), (1, 128)]
    per_rank, _, skew, ref = reference_job(sorted(HTA_SAMPLED.glob("*.json.gz")))
    got = L.sql("select * from collective_skew").to_dicts()
    assert len(got) == len(skew) == 10
    for r in got:
        s = skew[(r["collective"], r["seq"])]
        assert r["ranks"] == 2 and r["group_size"] == 128 and not r["complete"]  # 2 of 128 ranks sampled
        assert (r["start_skew_ns"], r["end_skew_ns"], r["last_rank"]) == (s["start_skew_ns"], s["end_skew_ns"], s["last_rank"])
    colls = L.sql("select rank, collective, msg_bytes, ts_ns, dur_ns from collectives order by rank, ts_ns")
    for rank, (_, _, c) in per_rank.items():
        assert [tuple(x[1:]) for x in colls.rows() if x[0] == rank] == c
    strag = L.sql("select rank, straggler, arrival_late_ns from stragglers order by rank").rows()
    assert [(r, s) for r, s, _ in strag] == [(0, False), (1, False)]  # two ranks: no outlier possible
    assert [a for _, _, a in strag] == pytest.approx([ref["arrival"][0], ref["arrival"][1]])


def test_rank_kernel_diff(dlrm_lake):
    d = dlrm_lake.sql("select * from rank_kernel_diff")
    names = dlrm_lake.sql("select count(distinct name) as n from kernels")["n"][0]
    assert d.height == names * 8  # every kernel name × every rank, absent ones as 0
    k = dlrm_lake.sql("select name, rank, count(*) as calls, sum(dur_ns) as total from kernels group by all")
    ref = {(n, r): (c, t) for n, r, c, t in k.rows()}
    for row in d.sample(200, seed=1).to_dicts():
        calls, total = ref.get((row["name"], row["rank"]), (0, 0))
        assert (row["calls"], row["total_ns"]) == (calls, total)
        col = sorted(ref.get((row["name"], r), (0, 0))[1] for r in range(8))
        assert row["median_total_ns"] == pytest.approx(statistics.median(col))


def test_cli_sql_on_lake(dlrm_lake):
    exe = shutil.which("tracecols") or str(Path(sys.executable).parent / "tracecols")
    r = subprocess.run(
        [
            exe,
            "sql",
            dlrm_lake.origin,
            "select last_rank, count(*) as n from collective_skew group by 1 order by 2 desc limit 1",
            "--format",
            "csv",
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["last_rank,n", "7,5"]
