"""rocprofv3 (rocprofiler-sdk JSON) input: a hand-built file whose rows are worked out by hand,
and the corpus file against plain json readings of it."""

import gzip
import html
import json
import os
import shutil
import subprocess
import sys
from collections import defaultdict

import pytest
from conftest import CORPUS

import tracecols
from tracecols.errors import Empty
from tracecols.read.rocprof import NO_OP_TREE

ROCPROF = CORPUS / "TraceLens/tests/rocprof/908_results.json.gz"
EXE = shutil.which("tracecols") or os.path.join(os.path.dirname(sys.executable), "tracecols")
T0 = 63_857_982_592_001  # ns, more digits than a float64 of µs keeps exactly

# strings.buffer_records: the record's `kind` indexes this list, its `operation` the kind's operations
KINDS = [
    {"kind": "NONE", "operations": []},
    {"kind": "HIP_RUNTIME_API", "operations": ["hipApiName", "hipLaunchKernel", "hipMemcpyAsync"]},
    {"kind": "MEMORY_COPY", "operations": ["MEMORY_COPY_NONE", "MEMORY_COPY_HOST_TO_HOST", "MEMORY_COPY_HOST_TO_DEVICE"]},
    {"kind": "KERNEL_DISPATCH", "operations": ["KERNEL_DISPATCH_NONE", "KERNEL_DISPATCH_ENQUEUE", "KERNEL_DISPATCH_COMPLETE"]},
    {"kind": "MARKER_CORE_API", "operations": ["roctxMarkA", "roctxRangePushA"]},
]


def _corr(i, ext=0):
    return {"internal": i, "external": ext}


def hip(op, corr, start, end, tid=101):
    return {
        "size": 48,
        "kind": 1,
        "operation": op,
        "correlation_id": _corr(corr),
        "start_timestamp": start,
        "end_timestamp": end,
        "thread_id": tid,
    }


def dispatch(kernel_id, corr, start, end, agent=11, queue=3, ext=0):
    return {
        "size": 184,
        "kind": 3,
        "operation": 2,
        "thread_id": 101,
        "correlation_id": _corr(corr, ext),
        "start_timestamp": start,
        "end_timestamp": end,
        "dispatch_info": {
            "size": 72,
            "agent_id": {"handle": agent},
            "queue_id": {"handle": queue},
            "kernel_id": kernel_id,
            "dispatch_id": corr,
            "workgroup_size": {"x": 256, "y": 1, "z": 1},
            "grid_size": {"x": 1000, "y": 2, "z": 1},
        },
        "stream_id": {"handle": 0},
    }


def tool(records, tables_first=True):
    tables = {
        "metadata": {"pid": 4242, "init_time": T0 - 10, "fini_time": T0 + 10**9, "command": ["python", "train.py"]},
        "agents": [
            {"id": {"handle": 10}, "type": 1, "name": "AMD EPYC", "product_name": "AMD EPYC"},
            {
                "id": {"handle": 11},
                "type": 2,
                "name": "gfx942",
                "product_name": "AMD Instinct MI300X",
                "logical_node_type_id": 0,
                "cu_count": 304,
                "wave_front_size": 64,
                "workgroup_max_size": 1024,
                "mem_banks": [{"heap_type": 1, "size_in_bytes": 206141652992}],
            },
            {
                "id": {"handle": 12},
                "type": 2,
                "name": "gfx942",
                "product_name": "AMD Instinct MI300X",
                "logical_node_type_id": 1,
                "cu_count": 304,
            },
        ],
        "strings": {"buffer_records": KINDS, "callback_records": [], "marker_api": []},
        "kernel_symbols": [
            {"kernel_id": 0, "kernel_name": "", "formatted_kernel_name": "0"},
            {
                "kernel_id": 1,
                "kernel_name": "_Z4gemmv.kd",
                "formatted_kernel_name": "gemm_kernel()",
                "demangled_kernel_name": "gemm_kernel() [clone .kd]",
                "sgpr_count": 32,
            },
        ],
    }
    item = dict(tables, buffer_records=records) if tables_first else dict(buffer_records=records, **tables)
    return {"rocprofiler-sdk-tool": [item]}


def hand_built(tables_first=True):
    return tool(
        {
            "kernel_dispatch": [
                dispatch(1, 1, T0 + 5_000, T0 + 15_000, queue=3),
                dispatch(1, 2, T0 + 20_000, T0 + 21_500, agent=12, queue=4, ext=77),
            ],
            "hip_api": [hip(1, 1, T0, T0 + 2_000), hip(1, 2, T0 + 3_000, T0 + 4_000), hip(2, 3, T0 + 6_000, T0 + 7_000)],
            "memory_copy": [
                {
                    "size": 80,
                    "kind": 2,
                    "operation": 2,
                    "thread_id": 101,
                    "correlation_id": _corr(3),
                    "start_timestamp": T0 + 8_000,
                    "end_timestamp": T0 + 12_000,
                    "dst_agent_id": {"handle": 11},
                    "src_agent_id": {"handle": 10},
                    "bytes": 4_000_000,
                }
            ],
            "marker_api": [
                {
                    "size": 40,
                    "kind": 4,
                    "operation": 1,
                    "thread_id": 101,
                    "correlation_id": _corr(9),
                    "start_timestamp": T0 + 1,
                    "end_timestamp": T0 + 30_000,
                }
            ],
            "hsa_api": [],
        },
        tables_first,
    )


def _open(tmp_path, doc, name="r.json"):
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return tracecols.open(p)


@pytest.mark.parametrize("tables_first", [True, False])
def test_hand_built_file(tmp_path, tables_first):
    t = _open(tmp_path, hand_built(tables_first))
    k = {r["correlation"]: r for r in t.sql("select * from kernels").iter_rows(named=True)}
    gemm, gemm2, copy = k[1], k[2], k[3]
    # names from kernel_symbols; device = the GPU's index among the GPUs; stream = the hardware queue
    assert (gemm["cat"], gemm["name"], gemm["device"], gemm["stream"]) == ("kernel", "gemm_kernel()", 0, 3)
    assert (gemm["ts_ns"], gemm["dur_ns"]) == (T0 + 5_000, 10_000)  # exact ns
    assert (gemm2["device"], gemm2["stream"], gemm2["dur_ns"]) == (1, 4, 1_500)
    assert (copy["cat"], copy["name"], copy["device"]) == ("gpu_memcpy", "MEMORY_COPY_HOST_TO_DEVICE", 0)
    # each links to the HIP call of its correlation id, as a Kineto kernel to its launch
    launches = {r["uid"]: r for r in t.sql("select * from events where cat = 'cuda_runtime'").iter_rows(named=True)}
    assert {r["name"] for r in launches.values()} == {"hipLaunchKernel", "hipMemcpyAsync"}
    for c, name, ts in ((1, "hipLaunchKernel", T0), (2, "hipLaunchKernel", T0 + 3_000), (3, "hipMemcpyAsync", T0 + 6_000)):
        assert k[c]["link"] == "correlation" and k[c]["launch_name"] == name and k[c]["launch_ts_ns"] == ts
        assert (launches[k[c]["launch_uid"]]["pid"], launches[k[c]["launch_uid"]]["tid"]) == (4242, 101)
    ev = {r["uid"]: r for r in t.sql("select * from events").iter_rows(named=True)}
    d = ev[gemm["uid"]]
    # grid in workgroups (ceil(1000 / 256) = 4), block = workgroup size; external correlation -> External id
    assert (d["grid"], d["block"], d["external_id"]) == ([4, 2, 1], [256, 1, 1], None)
    assert ev[gemm2["uid"]]["external_id"] == 77
    # every field of the record but its two timestamps is in args, as written
    rec = hand_built()["rocprofiler-sdk-tool"][0]["buffer_records"]["kernel_dispatch"][0]
    assert json.loads(d["args"]) == {k: v for k, v in rec.items() if not k.endswith("_timestamp")}
    assert ev[copy["uid"]]["bytes_moved"] == 4_000_000
    marker = [r for r in ev.values() if r["cat"] == "marker_api"]
    assert [(r["name"], r["ts_ns"], r["dur_ns"]) for r in marker] == [("roctxRangePushA", T0 + 1, 29_999)]
    # list tables are "M" rows named after the table, metadata keeps the rest
    syms = [json.loads(r["args"]) for r in ev.values() if r["ph"] == "M" and r["name"] == "kernel_symbols"]
    assert [s["kernel_id"] for s in syms] == [0, 1] and syms[1]["sgpr_count"] == 32
    tr = t.table("traces").to_pylist()[0]
    meta = json.loads(tr["metadata"])
    assert tr["form"] == "rocprofv3" and meta["rocprofiler-sdk-tool"][0]["metadata"]["pid"] == 4242
    assert "kernel_symbols" not in meta["rocprofiler-sdk-tool"][0]
    assert tr["warnings"][0] == NO_OP_TREE
    devs = t.sql("select device, name, num_sms, total_global_mem_bytes from devices order by device").rows()
    assert devs == [(0, "AMD Instinct MI300X", 304, 206141652992), (1, "AMD Instinct MI300X", 304, None)]
    # what the links give: queue depth, and the copy's bandwidth (4e6 bytes over 4 µs = 1e12 bytes/s)
    assert t.sql("select count(*) from queue_depth").item() == 6
    bw = t.sql("select direction, ts_ns, bytes_per_s from memcpy_bandwidth order by ts_ns").rows()
    assert bw == [("HtoD", T0 + 8_000, pytest.approx(1e12)), ("HtoD", T0 + 12_000, 0.0)]
    assert t.sql("select count(*) from op_gpu_time").item() == 0


def test_records_without_tables_and_empty_files(tmp_path):
    doc = hand_built()
    item = doc["rocprofiler-sdk-tool"][0]
    del item["kernel_symbols"], item["strings"]
    t = _open(tmp_path, doc)
    names = dict(t.sql("select correlation, name from kernels").rows())
    assert names[1] == "kernel_id 1" and names[3] == "memory_copy"  # no tables: the record's own ids
    with pytest.raises(Empty, match="rocprofv3"):
        _open(tmp_path, {"rocprofiler-sdk-tool": [{}]}, "e.json")
    with pytest.raises(Empty, match="rocprofv3"):
        _open(tmp_path, tool({"kernel_dispatch": [], "hip_api": []}), "e2.json")


def test_odd_values_are_kept_not_fatal(tmp_path):
    odd = [
        dict(dispatch(1, 5, "soon", T0 + 10), dispatch_info=[1, 2]),  # a time as text, info a list
        dict(dispatch(1, 6, T0, T0 + 10, agent=[11]), correlation_id="six"),  # an id that is a list
        dict(dispatch(1, 7, T0, T0 + 10), dispatch_info={"kernel_id": {"x": 1}, "agent_id": {"handle": 99}}),
        42,
    ]  # not an object at all
    t = _open(tmp_path, tool({"kernel_dispatch": odd}))
    rows = t.sql("select uid, ph, cat, name, ts_ns, correlation, args from events where ph <> 'M' order by uid").rows()
    assert len(rows) == 4
    assert rows[0][4] is None and json.loads(rows[0][6])["start_timestamp"] == "soon"  # kept, in args
    assert rows[1][5] is None and json.loads(rows[1][6])["correlation_id"] == "six"
    assert rows[2][3] == "kernel_id {'x': 1}" and rows[2][4] == T0
    assert json.loads(rows[3][6]) == {"record": 42}
    assert any("'ts' is missing" in w for w in t.table("traces").column("warnings").to_pylist()[0])


def test_truncated_file_is_one_error_line(tmp_path):
    text = json.dumps(hand_built()).encode()
    p = tmp_path / "cut.json"
    p.write_bytes(text[: len(text) // 2])
    r = subprocess.run([EXE, "info", str(p)], capture_output=True, text=True)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "truncated" in r.stderr and str(p) in r.stderr and "Traceback" not in r.stderr


def test_lake_of_a_folder_with_a_rocprofv3_file(tmp_path):
    """Found by discovery, read by the streaming ingest (Parquet, not the in-memory path), the
    same rows as tracecols.open gives."""
    from tracecols.fleet.ingest import ingest_lake

    src = tmp_path / "job"
    src.mkdir()
    (src / "4242_results.json").write_text(json.dumps(hand_built()))
    res = ingest_lake([str(src)], str(tmp_path / "lake"), jobs=1)
    assert res.ok and len(res.added) == 1
    lake, direct = tracecols.Lake(str(tmp_path / "lake")), tracecols.open(str(src / "4242_results.json"))
    q = "select correlation, name, device, stream, ts_ns, dur_ns, launch_name from kernels order by correlation"
    assert lake.sql(q).rows() == direct.sql(q).rows() and len(direct.sql(q)) == 3
    assert lake.sql("select warnings from traces").item().to_list()[0] == NO_OP_TREE


def test_augment_says_it_takes_chrome_traces(tmp_path):
    p = tmp_path / "r.json"
    p.write_text(json.dumps(hand_built()))
    r = subprocess.run([EXE, "augment", str(p), str(tmp_path / "o.json")], capture_output=True, text=True)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "rocprofv3" in r.stderr
    assert not (tmp_path / "o.json").exists()


# --- the corpus file, against plain json readings of it -------------------------------------------------


@pytest.fixture(scope="module")
def corpus():
    with gzip.open(ROCPROF) as f:
        item = json.load(f)["rocprofiler-sdk-tool"][0]
    gpus = {a["id"]["handle"]: a["logical_node_type_id"] for a in item["agents"] if a["type"] == 2}
    names = {s["kernel_id"]: s["formatted_kernel_name"] for s in item["kernel_symbols"]}
    recs = item["buffer_records"]["kernel_dispatch"]
    rows = [
        {
            "i": i,
            "device": gpus[r["dispatch_info"]["agent_id"]["handle"]],
            "queue": r["dispatch_info"]["queue_id"]["handle"],
            "name": names[r["dispatch_info"]["kernel_id"]],
            "start": r["start_timestamp"],
            "end": r["end_timestamp"],
        }
        for i, r in enumerate(recs)
    ]
    return item, rows, tracecols.open(ROCPROF)


@pytest.mark.corpus
def test_corpus_kernels_match_the_file(corpus):
    _, rows, t = corpus
    got = t.sql("""select count(*), sum(dur_raw_ns)::BIGINT, min(ts_ns), max(ts_ns), max(ts_ns + dur_raw_ns)
                   from kernels where cat = 'kernel'""").row(0)
    assert got == (
        len(rows),
        sum(r["end"] - r["start"] for r in rows),
        min(r["start"] for r in rows),
        max(r["start"] for r in rows),
        max(r["end"] for r in rows),
    )
    assert len(rows) == 43_915
    first = min(rows, key=lambda r: (r["start"], r["i"]))
    last = max(rows, key=lambda r: (r["start"], r["i"]))
    for r in (first, last):
        k = t.sql(
            f"select name, ts_ns, dur_raw_ns, device, stream from kernels where ts_ns = {r['start']} order by uid limit 1"
        ).row(0)
        assert k == (r["name"], r["start"], r["end"] - r["start"], r["device"], r["queue"])
    assert t.table("traces").column("warnings").to_pylist()[0][0] == NO_OP_TREE


def _clipped(rows):
    """Each dispatch's duration cut at the start of the next one on its queue (kernels.dur_ns's rule)."""
    by_queue = defaultdict(list)
    for r in rows:
        by_queue[(r["device"], r["queue"])].append(r)
    out = []
    for rs in by_queue.values():
        rs.sort(key=lambda r: (r["start"], r["i"]))
        for a, b in zip(rs, rs[1:] + [None]):
            end = a["end"] if b is None else min(a["end"], b["start"])
            out.append(dict(a, dur=max(end - a["start"], 0)))
    return out


@pytest.mark.corpus
def test_corpus_kernel_stats_against_a_groupby(corpus):
    import pandas as pd

    _, rows, t = corpus
    df = pd.DataFrame(_clipped(rows))
    ref = (
        df.groupby(["device", "queue", "name"])["dur"]
        .agg(["count", "sum", "min", "max"])
        .reset_index()
        .sort_values(["device", "queue", "name"])
        .itertuples(index=False, name=None)
    )
    got = t.sql("""select device, stream, name, count, sum_ns, min_ns, max_ns from kernel_stats
                   order by device, stream, name""").rows()
    assert got == [tuple(int(x) if not isinstance(x, str) else x for x in r) for r in ref]


@pytest.mark.corpus
def test_corpus_timeline_idle_and_report(corpus, tmp_path):
    _, rows, t = corpus

    def union(spans):
        total, end = 0, None
        for s, e in sorted(spans):
            if end is None or s > end:
                total, end = total + e - s, e
            elif e > end:
                total, end = total + e - end, e
        return total

    clipped = _clipped(rows)
    tl = t.sql("select busy_ns, total_ns from gpu_timeline where device = 0").row(0)
    assert tl == (
        union((r["start"], r["start"] + r["dur"]) for r in clipped),
        max(r["start"] + r["dur"] for r in clipped) - min(r["start"] for r in clipped),
    )
    for queue, busy, idle, span in t.sql("select stream, busy_ns, idle_ns, span_ns from idle_time").rows():
        mine = [(r["start"], r["start"] + r["dur"]) for r in clipped if r["queue"] == queue]
        assert busy == union(mine) and idle == span - busy
    out = tmp_path / "r.html"
    r = subprocess.run([EXE, "report", str(ROCPROF), "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    page = out.read_text()
    by_name = defaultdict(int)
    for r in clipped:
        by_name[r["name"]] += r["dur"]
    assert NO_OP_TREE in page and html.escape(max(by_name, key=by_name.get), quote=False) in page
