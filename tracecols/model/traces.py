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


def time_span(ev):
    """(first ts_ns, last end_ns or ts_ns) of one trace's events (a polars LazyFrame), leaving
    out metadata events (they sit at ts 0) and events without ph; (None, None) if none is timed."""
    r = (
        ev.filter(pl.col("ph") != "M")
        .select(start=pl.col("ts_ns").min(), end=pl.max_horizontal(pl.col("end_ns").max(), pl.col("ts_ns").max()))
        .collect(engine="streaming")
        .row(0)
    )
    return r[0], r[1]


def traces_table(trace_id, info, span, rank, rank_source, warnings=()):
    """The one-row `traces` table of a trace; `span` is its time_span()."""
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
