"""The lake-only section on ranks: step time per rank, collective skew and stragglers."""

from collections.abc import Sequence

from . import charts, section_data
from .charts import PALETTE
from .labels import html_text as _e
from .page import Page
from .tables import table
from .units import time_unit

TOP = 15  # collective calls drawn (the most skewed)
MAX_CALLS = 200  # collective calls listed


class _Rows:
    """Rows are per trace: named as everywhere else, with a column for the trace when that is
    not the rank (traces that share a rank, or have none)."""

    def __init__(self, page: Page, named: bool) -> None:
        self.page, self.named = page, named

    def who(self, r: dict) -> str:
        return self.page.labels.get(r["trace_id"], f"rank {r['rank']}")

    def cols(self, header: tuple[str, ...], kinds: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return (("trace",) + header, ("name",) + kinds) if self.named else (header, kinds)

    def row(self, r: dict, *cells: object) -> tuple:
        return (self.who(r),) + cells if self.named else cells


def _shared_ranks(page: Page) -> dict[int, list[str]]:
    """{rank: the traces that carry it} for ranks more than one trace carries."""
    by_rank: dict[int, list[str]] = {}
    for t in page.traces:
        if t["rank"] is not None:
            by_rank.setdefault(t["rank"], []).append(page.labels[t["trace_id"]])
    return {r: ts for r, ts in sorted(by_rank.items()) if len(ts) > 1}


def _ns_fmt(unit: str):
    return lambda v, u=unit: f"{v:,.3g} {u}"


def _rank_steps(page: Page, rows_of: _Rows) -> list[str]:
    rows = section_data.rank_summary(page.src)
    parts = []
    steps = [r for r in rows if r["step_mean_ns"] is not None]
    if steps:
        div, unit = time_unit(max(r["step_mean_ns"] for r in steps))
        parts.append(
            charts.hbars(
                "chart-rank-steps",
                "Step time per rank",
                "Ranks wait for each other at collectives, so a rank with a much longer bar slows the whole job.",
                [rows_of.who(r) for r in steps],
                [[r["step_mean_ns"] / div for r in steps]],
                f"mean ProfilerStep time ({unit})",
                fmt=_ns_fmt(unit),
            )
        )
    if rows:
        h, k = rows_of.cols(
            ("rank", "steps", "mean step", "max step", "GPU busy", "comm", "exposed comm", "collectives"),
            ("n", "n", "ns", "ns", "pct", "pct", "ns", "n"),
        )
        cells = ("rank", "steps", "step_mean_ns", "step_max_ns", "gpu_busy_pct", "comm_pct", "exposed_comm_ns", "collectives")
        parts.append(table("table-rank-summary", h, [rows_of.row(r, *(r[c] for c in cells)) for r in rows], k))
    return parts


def _collective_skew(page: Page) -> list[str]:
    rows = section_data.collective_skew(page.src, MAX_CALLS)
    if not rows:
        return []
    top = rows[:TOP]
    div, unit = time_unit(max(max(r["start_skew_ns"], r["end_skew_ns"] or 0) for r in top) or 1)
    chart = charts.hbars(
        "chart-collective-skew",
        f"Collective skew (the {len(top)} most skewed calls)",
        "A long bar means the ranks reached this collective far apart: the early ones waited for the last.",
        [f"{r['collective']} #{r['seq']} ({r['pg_key']}) last: rank {r['last_rank']}" for r in top],
        [[r["start_skew_ns"] / div for r in top]],
        f"last minus first kernel start across ranks ({unit})",
        fmt=_ns_fmt(unit),
    )
    cells = ("collective", "pg_key", "seq", "ranks", "msg_bytes", "start_skew_ns", "end_skew_ns", "first_rank", "last_rank")
    tab = table(
        "table-collective-skew",
        ("collective", "group", "seq", "ranks", "bytes", "start skew", "end skew", "first rank", "last rank"),
        [tuple(r[c] for c in cells) for r in rows],
        ("name", "name", "n", "n", "n", "ns", "ns", "n", "n"),
    )
    return [chart, tab]


def _lateness_chart(late: Sequence[dict], flagged: Sequence[dict], rows_of: _Rows) -> str:
    div, unit = time_unit(max(r["arrival_late_ns"] for r in late) or 1)
    flag = [bool(r["slow_step"] or r["late_arrival"]) for r in late]
    v = [r["arrival_late_ns"] / div for r in late]
    colors = [PALETTE[0], PALETTE[2]]
    return charts.hbars(
        "chart-stragglers",
        "Arrival lateness at collectives per rank",
        "The rank with the longest bar is the one the others most often wait for; red marks a flagged straggler.",
        [rows_of.who(r) for r in late],
        [[0 if f else x for x, f in zip(v, flag)], [x if f else 0 for x, f in zip(v, flag)]],
        f"mean kernel start after the earliest rank's ({unit})",
        fmt=_ns_fmt(unit),
        colors=colors,
        legend=list(zip(("rank", "straggler (slow step or late arrival)"), colors)),
        note=("Stragglers: " + ", ".join(rows_of.who(r) for r in flagged))
        if flagged
        else "No rank is an outlier (robust z > 3.5 against the median over ranks).",
    )


def _stragglers(page: Page, rows_of: _Rows) -> list[str]:
    rows = section_data.stragglers(page.src)
    parts = []
    late = [r for r in rows if r["arrival_late_ns"] is not None]
    if late:
        parts.append(_lateness_chart(late, [r for r in rows if r["slow_step"] or r["late_arrival"]], rows_of))
    if rows:
        h, k = rows_of.cols(
            ("rank", "mean step", "step excess", "arrival lateness", "times last", "slow step", "late arrival"),
            ("n", "ns", "pct", "ns", "n", "flag", "flag"),
        )
        cells = ("rank", "step_mean_ns", "step_excess_pct", "arrival_late_ns", "times_last", "slow_step", "late_arrival")
        parts.append(table("table-stragglers", h, [rows_of.row(r, *(r[c] for c in cells)) for r in rows], k))
    return parts


def fleet(page: Page) -> None:
    if not page.lake:
        return
    parts = []
    shared = _shared_ranks(page)
    if shared:  # collectives are matched across traces by rank number
        parts.append(
            '<p class="warn">Several traces carry the same rank, so their collectives cannot be told '
            "apart: collective skew and arrival lateness mix them. "
            + "; ".join(f"rank {r}: {_e(', '.join(ts))}" for r, ts in shared.items())
            + ".</p>"
        )
    rows_of = _Rows(page, bool(shared) or any(t["rank"] is None for t in page.traces))
    if page.has("rank_summary"):
        parts += _rank_steps(page, rows_of)
    if page.has("collective_skew"):
        parts += _collective_skew(page)
    if page.has("stragglers"):
        parts += _stragglers(page, rows_of)
    if len(parts) > (1 if shared else 0):
        page.add("fleet", "Ranks: step time, collective skew and stragglers", *parts)
