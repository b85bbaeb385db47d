"""Counted warnings about events the reader kept but that break a rule of the format.

Each check is one vectorised pass over the events table; what it finds goes to
`traces.warnings` (shown by `tracecols info`), one line per kind, with a count.
"""

from typing import Any

import polars as pl

from .frames import frame

# Phases of the Chrome trace event format (Kineto writes X, i, s, f, C, M; others may appear)
KNOWN_PH = (
    "B",
    "E",
    "X",
    "i",
    "I",
    "C",
    "b",
    "n",
    "e",
    "S",
    "T",
    "p",
    "F",
    "s",
    "t",
    "f",
    "P",
    "N",
    "O",
    "D",
    "M",
    "V",
    "v",
    "R",
    "c",
    "(",
    ")",
)
_LAUNCH_CATS = ("cuda_runtime", "cuda_driver", "mtia_runtime")


def event_warnings(ev):
    """The warning lines for one trace's events (a polars LazyFrame); [] when all is well.

    Each question is one streaming pass over the few columns it reads."""
    c = (
        ev.select(
            n=pl.len(),
            no_ph=pl.col("ph").is_null().sum(),
            no_ts=(pl.col("ts_ns").is_null() & (pl.col("ph").fill_null("") != "M")).sum(),
            no_dur=(pl.col("dur_ns").is_null() & (pl.col("ph") == "X")).sum(),
            neg=(pl.col("dur_ns") < 0).sum(),
            unknown=(pl.col("ph").is_not_null() & ~pl.col("ph").is_in(KNOWN_PH)).sum(),
        )
        .collect(engine="streaming")
        .row(0, named=True)
    )
    if c["n"] == 0:
        return []
    out = []
    if c["no_ph"]:
        out.append(f"{c['no_ph']} event(s) without 'ph': kept in events with ph null, in no derived table")
    if c["no_ts"]:
        out.append(
            f"{c['no_ts']} event(s) whose 'ts' is missing or not an int64 count of ns "
            "(the raw value stays in args): left out of the tree and the links"
        )
    if c["no_dur"]:
        out.append(
            f"{c['no_dur']} complete ('X') event(s) whose 'dur' is missing or not an int64 count of ns: taken as 0 in the tree"
        )
    if c["neg"]:
        out.append(f"{c['neg']} event(s) with a negative 'dur' (kept in events.dur_ns): taken as 0 in the tree")
    if c["unknown"]:
        names = (
            ev.filter(pl.col("ph").is_not_null() & ~pl.col("ph").is_in(KNOWN_PH))
            .select(pl.col("ph").unique().sort())
            .collect(engine="streaming")["ph"]
        )
        shown = ", ".join(repr(x) for x in names.head(5).to_list())
        out.append(f"{c['unknown']} event(s) with an unknown 'ph' ({shown}): kept in events only")
    dup = (
        ev.filter(pl.col("cat").is_in(_LAUNCH_CATS) & pl.col("correlation").is_not_null())
        .group_by(["pid", "pid_str", "correlation"])
        .len()
        .filter(pl.col("len") > 1)
        .select(n=pl.len(), extra=(pl.col("len") - 1).sum())
        .collect(engine="streaming")
        .row(0, named=True)
    )
    if dup["n"]:
        out.append(
            f"{dup['extra']} launch event(s) repeat a correlation id of an earlier launch in the same process "
            f"({dup['n']} id(s)): kernels link to the first"
        )
    return out


def kernel_warnings(kernels):
    """The warning lines for one trace's kernels table (Arrow), built after the events' checks."""
    if kernels.num_rows == 0:
        return []
    k = frame(kernels.select(["dur_ns", "dur_raw_ns", "clipped"]))
    out = []
    neg = k.filter(pl.col("dur_raw_ns") < 0)
    if neg.height:
        lowest: Any = neg["dur_raw_ns"].min()
        out.append(
            f"{neg.height} device event(s) with a negative 'dur' (most negative {_us(int(lowest))} µs): "
            "taken as 0 in kernels.dur_ns, so left out of every duration sum and busy time; "
            "raw value in kernels.dur_raw_ns"
        )
    k = k.filter(pl.col("clipped"))
    if k.height:
        worst = int((k["dur_raw_ns"] - k["dur_ns"]).max())
        out.append(
            f"{k.height} device event(s) overlap the next one on their stream (largest overlap {_us(worst)} µs): "
            "clipped to its start in kernels.dur_ns, raw value in kernels.dur_raw_ns"
        )
    return out


def _us(ns):
    """ns as exact decimal µs text: 40000 -> '40', 1500 -> '1.5', 1 -> '0.001', -3000 -> '-3'."""
    if ns < 0:
        return "-" + _us(-ns)
    whole, frac = divmod(ns, 1000)
    return f"{whole}.{frac:03d}".rstrip("0").rstrip(".") if frac else str(whole)
