"""The `traces` and `devices` tables: one row per trace file, one per deviceProperties entry."""

import os
import re

import polars as pl
import pyarrow as pa

from ..read import jsontext

_RANK_IN_NAME = re.compile(r"(?:rank[-_]?|worker)(\d+)", re.IGNORECASE)

TRACES_SCHEMA = pa.schema(
    [
        ("trace_id", pa.int32()),
        ("path", pa.string()),
        ("rank", pa.int32()),
        ("rank_source", pa.string()),
        ("world_size", pa.int32()),
        ("backend", pa.string()),
        ("schema_version", pa.string()),
        ("base_time_ns", pa.int64()),
        ("start_ns", pa.int64()),
        ("end_ns", pa.int64()),
        ("span_ns", pa.int64()),
        ("n_events", pa.int64()),
        ("devices", pa.int32()),
        ("size_bytes", pa.int64()),
        ("sha256", pa.string()),
        ("gzip", pa.bool_()),
        ("form", pa.string()),
        ("distributed_info", pa.string()),
        ("metadata", pa.string()),
        ("warnings", pa.list_(pa.string())),
        ("run", pa.string()),
        ("run_seq", pa.int32()),
    ]
)

DEVICES_SCHEMA = pa.schema(
    [
        ("trace_id", pa.int32()),
        ("device", pa.int64()),
        ("name", pa.string()),
        ("num_sms", pa.int64()),
        ("total_global_mem_bytes", pa.int64()),
        ("compute_major", pa.int64()),
        ("compute_minor", pa.int64()),
        ("warp_size", pa.int64()),
        ("max_threads_per_block", pa.int64()),
        ("properties", pa.string()),
    ]
)


def detect_rank(path, metadata):
    """(rank, source): from distributedInfo, else from the file name, else (None, None)."""
    info = metadata.get("distributedInfo")
    if isinstance(info, dict) and type(info.get("rank")) is int:
        return info["rank"], "distributedInfo"
    m = _RANK_IN_NAME.search(os.path.basename(str(path)))
    if m:
        return int(m.group(1)), "file name"
    return None, None


def _int(v):
    return v if type(v) is int and -(1 << 31) <= v < (1 << 31) else None


# An outlying event lies wholly more than OUTLIER_GAP_SPANS times the bulk's length, and more
# than OUTLIER_MIN_GAP_NS, before or after the bulk of its trace's events. The bulk runs from
# the k-th earliest start to the k-th latest end, k = n // 1000 + 2 (so at most n // 1000 + 1
# events at either end can be outlying); traces of fewer than OUTLIER_MIN_EVENTS timed events
# have no bulk to speak of. On the test corpus the farthest event lies 1.2 bulk lengths away
# (tests/test_outliers.py): the margin is about 80x.
OUTLIER_GAP_SPANS = 100
OUTLIER_MIN_GAP_NS = 1_000_000_000
OUTLIER_MIN_EVENTS = 10


def time_span(ev):
    """(first ts_ns, last end_ns or ts_ns, warning lines) of one trace's events (a polars
    LazyFrame), leaving out metadata events (they sit at ts 0), events without ph, and
    outlying events (see OUTLIER_GAP_SPANS), which the warning counts; (None, None, []) if
    none is timed."""
    timed = ev.filter((pl.col("ph") != "M") & pl.col("ts_ns").is_not_null()).select(
        "ts_ns", end=pl.max_horizontal(pl.col("end_ns"), pl.col("ts_ns"))
    )
    whole = timed.select(n=pl.len(), start=pl.col("ts_ns").min(), end=pl.col("end").max())
    n, start, end = whole.collect(engine="streaming").row(0)
    if n < OUTLIER_MIN_EVENTS or end - start <= OUTLIER_MIN_GAP_NS:
        return start, end, []
    k = n // 1000 + 2
    lo, hi = (
        timed.select(lo=pl.col("ts_ns").bottom_k(k).max(), hi=pl.col("end").top_k(k).min()).collect(engine="streaming").row(0)
    )
    gap = max(OUTLIER_GAP_SPANS * max(hi - lo, 0), OUTLIER_MIN_GAP_NS)
    far = (pl.col("end") < lo - gap) | (pl.col("ts_ns") > hi + gap)
    r = (
        timed.select(
            n=far.sum(),
            start=pl.col("ts_ns").filter(~far).min(),
            end=pl.col("end").filter(~far).max(),
            before=(lo - pl.col("end")).filter(far).max(),
            after=(pl.col("ts_ns") - hi).filter(far).max(),
        )
        .collect(engine="streaming")
        .row(0, named=True)
    )
    if not r["n"]:
        return start, end, []
    farthest = max(x for x in (r["before"], r["after"]) if x is not None)
    side = "before" if r["before"] == farthest else "after"
    return (
        r["start"],
        r["end"],
        [
            f"{r['n']} event(s) lie far outside the rest of the trace (the farthest {_seconds(farthest)} s {side} it; "
            f"the others span {_seconds(r['end'] - r['start'])} s): a broken timestamp? Left out of traces.span_ns, "
            "gpu_timeline and the headline, which cover the others"
        ],
    )


def _seconds(ns):
    s = ns / 1e9
    return f"{s:,.0f}" if s >= 100 else f"{s:.3g}"


def traces_table(trace_id, info, span, rank, rank_source, warnings=()):
    """The one-row `traces` table of a trace; `span` is (start, end) of its time_span()."""
    meta = info["metadata"]
    dist = meta.get("distributedInfo") if isinstance(meta.get("distributedInfo"), dict) else {}
    base = meta.get("baseTimeNanoseconds")
    start, end = span
    devs = meta.get("deviceProperties")
    row = {
        "trace_id": trace_id,
        "path": info["path"],
        "rank": rank,
        "rank_source": rank_source,
        "world_size": _int(dist.get("world_size")),
        "backend": dist.get("backend") if isinstance(dist.get("backend"), str) else None,
        "schema_version": None if meta.get("schemaVersion") is None else str(meta.get("schemaVersion")),
        "base_time_ns": _i64(base),
        "start_ns": start,
        "end_ns": end,
        "span_ns": None if start is None else end - start,
        "n_events": info["n_events"],
        "devices": len(devs) if isinstance(devs, list) else None,
        "size_bytes": info["size"],
        "sha256": info["sha256"],
        "gzip": info["gzip"],
        "form": info["form"],
        "distributed_info": jsontext.dumps(dist) if dist else None,
        "metadata": jsontext.dumps(meta),
        "warnings": list(warnings),
        "run": None,  # set by a lake's ingest (--run): fleet/work.py
        "run_seq": None,
    }
    return pa.Table.from_pylist([row], schema=TRACES_SCHEMA)


def devices_table(trace_id, metadata):
    rows = []
    devs = metadata.get("deviceProperties")
    for d in devs if isinstance(devs, list) else []:
        if not isinstance(d, dict):
            continue
        rows.append(
            {
                "trace_id": trace_id,
                "device": d.get("id") if type(d.get("id")) is int else None,
                "name": d.get("name") if isinstance(d.get("name"), str) else None,
                "num_sms": _i64(d.get("numSms")),
                "total_global_mem_bytes": _i64(d.get("totalGlobalMem")),
                "compute_major": _i64(d.get("computeMajor")),
                "compute_minor": _i64(d.get("computeMinor")),
                "warp_size": _i64(d.get("warpSize")),
                "max_threads_per_block": _i64(d.get("maxThreadsPerBlock")),
                "properties": jsontext.dumps(d),
            }
        )
    return pa.Table.from_pylist(rows, schema=DEVICES_SCHEMA)


def _i64(v):
    return v if type(v) is int and -(1 << 63) <= v < (1 << 63) else None
