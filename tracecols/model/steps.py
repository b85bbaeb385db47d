"""Profiler steps as the unit of a sample: which step each event belongs to.

A step is a host `ProfilerStep#N` annotation (cat user_annotation, or cpu_op on older torch).
An event belongs to the step whose host time range holds its start: for a device event, the
start of the call that launched it (a kernel launched in step N and run after the step's end
still belongs to N, as its cost does); without a launch call, its own start. The backward pass
runs on another thread than the ProfilerStep annotation, so the test is on time, not on the
tree. A trace without steps is one sample: every event belongs to step -1, the whole trace.
"""

import polars as pl

WHOLE_TRACE = -1
_STEP = r"^ProfilerStep#(\d+)$"


def windows(slices: pl.DataFrame) -> pl.DataFrame:
    """(trace_id, step, ts_ns, end_ns, dur_ns): one row per step, ordered by trace and start;
    a trace without steps gets one row, step -1, over the whole trace."""
    s = slices.filter(pl.col("cat").is_in(["user_annotation", "cpu_op"]) & pl.col("name").str.contains(_STEP))
    steps = s.select(
        "trace_id",
        pl.col("name").str.extract(_STEP, 1).cast(pl.Int64).alias("step"),
        "ts_ns",
        "end_ns",
        "dur_ns",
    )
    whole = (
        slices.group_by("trace_id")
        .agg(pl.col("ts_ns").min(), pl.col("end_ns").max())
        .join(steps.select("trace_id").unique(), on="trace_id", how="anti")
        .select(
            "trace_id",
            pl.lit(WHOLE_TRACE, pl.Int64).alias("step"),
            "ts_ns",
            "end_ns",
            (pl.col("end_ns") - pl.col("ts_ns")).alias("dur_ns"),
        )
    )
    return pl.concat([steps, whole.cast(steps.schema)]).sort("trace_id", "ts_ns")


def assign(frame: pl.DataFrame, steps: pl.DataFrame, ts: str) -> pl.DataFrame:
    """`frame` with a `step` column: the step whose [ts_ns, end_ns) holds column `ts` (null
    for an event outside every step: before the first, between two, after the last)."""
    w = steps.select("trace_id", "step", pl.col("ts_ns").alias("_w0"), pl.col("end_ns").alias("_w1")).sort("trace_id", "_w0")
    f = frame.with_row_index("_row").with_columns(pl.col(ts).alias("_t"))
    known = f.filter(pl.col("_t").is_not_null()).sort("trace_id", "_t")
    hit = known.join_asof(w, left_on="_t", right_on="_w0", by="trace_id", strategy="backward", check_sortedness=False)
    hit = hit.select("_row", pl.when(pl.col("_t") < pl.col("_w1")).then(pl.col("step")).alias("step"))
    out = f.join(hit, on="_row", how="left").sort("_row")
    whole = steps.filter(pl.col("step") == WHOLE_TRACE)["trace_id"].implode()
    # a trace without steps is one sample, whatever the times of its events
    out = out.with_columns(
        pl.when(pl.col("trace_id").is_in(whole)).then(pl.lit(WHOLE_TRACE, pl.Int64)).otherwise(pl.col("step")).alias("step")
    )
    return out.drop("_row", "_t")
