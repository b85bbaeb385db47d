"""The cross-rank analyses, for `tracecols analyze` to run on a lake.

`tracecols analyze LAKE` runs the single-trace analyses over a Lake exactly as over a Trace
(every sql/ view is keyed by trace_id, i.e. per rank in a lake) and, in addition, these:

    from tracecols.fleet.analyses import CROSS_RANK, cross_rank
    for name, df in cross_rank(lake).items(): ...

Each name is a view in sql/ (its header says what it answers and its columns).
"""

CROSS_RANK = (
    ("rank_summary", "per rank: step times, GPU busy/idle, communication"),
    ("stragglers", "ranks whose step time or collective arrival is an outlier, and by how much"),
    ("collective_skew", "each collective call matched across ranks: start/end skew, last-arriving rank"),
    ("collectives", "NCCL/RCCL kernels: collective, bytes, dtype, group, algbw/busbw"),
    ("rank_kernel_diff", "per kernel, each rank's GPU time against the median rank"),
)


def is_lake(obj):
    """True for a tracecols.Lake (many ranks), False for a single Trace."""
    from .lake import Lake

    return isinstance(obj, Lake)


def cross_rank(lake, names=None):
    """{view name: polars DataFrame} for the cross-rank views that are defined on this lake."""
    out = {}
    for name, _ in CROSS_RANK:
        if (names is None or name in names) and name in lake.tables:
            out[name] = lake.sql(f"select * from {name}")
    return out
