"""The rows each section of the report draws, read from public tables and views by name
(`Face.frame`) and only filtered, sorted and cut here: every number is the view's. Sorts put
nulls last, as DuckDB's ORDER BY does, and order ties by the columns that tell rows apart."""

from collections.abc import Sequence
from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    from ..face import Face

Rows = list[dict]


def _sort(df: pl.DataFrame, by: Sequence[str | pl.Expr], descending: Sequence[bool] | bool = False) -> pl.DataFrame:
    return df.sort(list(by), descending=descending, nulls_last=True, maintain_order=True)


def traces(src: "Face") -> Rows:
    cols = ["trace_id", "path", "rank", "world_size", "n_events", "span_ns", "warnings"]
    return _sort(src.frame("traces").select(cols), ["trace_id"]).to_dicts()


def gpu_timeline(src: "Face") -> Rows:
    """One row per (trace, device) of gpu_timeline; the whole-trace rows are gpu_time_totals'."""
    return _sort(src.frame("gpu_timeline").filter(pl.col("device").is_not_null()), ["trace_id", "device"]).to_dicts()


def gpu_totals(src: "Face") -> dict:
    return src.frame("gpu_time_totals").row(0, named=True)


def top_ops(src: "Face", limit: int) -> Rows:
    """Ops by the GPU busy time they own, `(no op)` last: their shares add up to the busy time."""
    df = src.frame("top_op_names").filter(pl.col("gpu_ns") > 0)
    return _sort(df, [pl.col("name") == "(no op)", "gpu_ns", "name"], [False, True, False]).head(limit).to_dicts()


def top_kernels(src: "Face", limit: int) -> Rows:
    return _sort(src.frame("kernel_name_totals"), ["sum_ns", "name"], [True, False]).head(limit).to_dicts()


def kernel_classes(src: "Face") -> Rows:
    return _sort(src.frame("kernel_class_totals"), ["sum_ns", "kernel_class"], [True, False]).to_dicts()


def roofline_points(src: "Face", limit: int) -> Rows:
    """The innermost modelled op instances with a GPU time, the longest first."""
    df = src.frame("op_perf").filter(pl.col("innermost") & (pl.col("flops") > 0) & (pl.col("bytes") > 0) & (pl.col("gpu_ns") > 0))
    return _sort(df, ["gpu_ns", "trace_id", "uid"], [True, False, False]).head(limit).to_dicts()


def critical_path_steps(src: "Face") -> Rows:
    return src.frame("critical_path_summary").to_dicts()


def critical_path_segments(src: "Face", limit: int) -> Rows:
    df = src.frame("critical_path").filter(pl.col("dur_ns") > 0)
    return _sort(df, ["dur_ns", "trace_id", "window_uid", "seq"], [True, False, False, False]).head(limit).to_dicts()


def time_axis(src: "Face") -> tuple[dict[int, int], int, bool]:
    """({trace_id: origin ns}, axis length ns, whether the traces share one clock): device_time_axis."""
    rows = src.frame("device_time_axis").to_dicts()
    if not rows:
        return {}, 0, True
    return {r["trace_id"]: r["origin_ns"] for r in rows}, rows[0]["axis_ns"], rows[0]["shared_clock"]


def idle_gaps(src: "Face", limit: int) -> tuple[Rows, int]:
    """(the `limit` longest idle gaps, how many there are)."""
    df = src.frame("idle_gaps")
    by = ["gap_ns", "trace_id", "device", "stream", "gap_start_ns"]
    return _sort(df, by, [True, False, False, False, False]).head(limit).to_dicts(), df.height


def idle_time(src: "Face", limit: int) -> Rows:
    by = ["idle_ns", "trace_id", "device", "stream"]
    return _sort(src.frame("idle_time"), by, [True, False, False, False]).head(limit).to_dicts()


def busiest_streams(src: "Face", limit: int) -> Rows:
    df = src.frame("queue_depth_streams")
    return _sort(df, ["events", "trace_id", "device", "stream"], [True, False, False, False]).head(limit).to_dicts()


def queue_depth_bins(src: "Face", streams: Rows) -> dict[tuple, Rows]:
    """{(trace_id, device, stream): its bins of queue_depth_bins in time order} for `streams`."""
    keys = [(s["trace_id"], s["device"], s["stream"]) for s in streams]
    out: dict[tuple, Rows] = {k: [] for k in keys}
    df = src.frame("queue_depth_bins").filter(pl.col("trace_id").is_in([k[0] for k in keys]))
    for r in _sort(df, ["trace_id", "device", "stream", "bin"]).iter_rows(named=True):
        got = out.get((r["trace_id"], r["device"], r["stream"]))
        if got is not None:
            got.append(r)
    return out


def memory_bins(src: "Face") -> Rows:
    return _sort(src.frame("memory_timeline_bins"), ["trace_id", "device_id", "bin", "device_kind"]).to_dicts()


def rank_summary(src: "Face") -> Rows:
    return _sort(src.frame("rank_summary").filter(pl.col("rank").is_not_null()), ["rank", "trace_id"]).to_dicts()


def collective_skew(src: "Face", limit: int) -> Rows:
    df = src.frame("collective_skew").filter(pl.col("ranks") > 1)
    return _sort(df, ["start_skew_ns", "pg_key", "collective", "seq"], [True, False, False, False]).head(limit).to_dicts()


def stragglers(src: "Face") -> Rows:
    return _sort(src.frame("stragglers"), ["rank", "trace_id"]).to_dicts()


def graph_replays_unmatched(src: "Face") -> Rows:
    return _sort(src.frame("graph_replay_share").filter(pl.col("unmatched") > 0), ["trace_id"]).to_dicts()
