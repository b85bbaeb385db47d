"""The report's first sections: the traces read with the reader's warnings, and the GPU timeline."""

import os
import re

from . import charts, section_data
from .charts import PALETTE
from .labels import html_text as _e
from .page import Page
from .tables import kpis, table
from .units import fmt_ns, fmt_pct

MAX_WARNINGS = 100  # lines of traces.warnings shown


def _warning(line: str) -> str:
    """One line of traces.warnings as HTML, its leading count in bold with thousands separators."""
    m = re.match(r"(\d+)(.*)", line, re.S)
    return f"<b>{int(m[1]):,}</b>{_e(m[2])}" if m else _e(line)


def _warnings(page: Page) -> str:
    """Each line of `traces.warnings` (what the reader found wrong and worked around), or ''."""
    lines = [(t, w) for t in page.traces for w in (t["warnings"] or [])]
    if not lines:
        return ""
    items = "".join(
        f"<li>{_e(page.labels[t['trace_id']]) + ': ' if page.lake else ''}{_warning(w)}</li>" for t, w in lines[:MAX_WARNINGS]
    )
    more = (
        f'<p class="note">{len(lines) - MAX_WARNINGS} more lines: tracecols info shows them all.</p>'
        if len(lines) > MAX_WARNINGS
        else ""
    )
    n = len({t["trace_id"] for t, _ in lines})
    lead = f"Warnings ({n} of {len(page.traces)} traces): the reader" if page.lake else "The reader"
    return (
        f'<div class="warn" id="warnings"><b>{lead} kept events that break the trace format '
        f"and worked around them:</b><ul>{items}</ul>{more}</div>"
    )


def _common_folder(paths: list[str]) -> str:
    """The folder the files share ('' for URLs, which are shown whole, or none in common)."""
    common = ""
    if not any("://" in p for p in paths):
        try:
            common = os.path.commonpath(paths) if len(paths) > 1 else os.path.dirname(paths[0])
        except ValueError:  # absolute and relative paths mixed
            pass
    if common in paths:
        common = os.path.dirname(common)
    return common


def _trace_table(page: Page) -> list[str]:
    """In a lake, one row per trace: its label is how the charts name it."""
    common = _common_folder([str(t["path"]) for t in page.traces])
    rows = [
        (
            page.labels[t["trace_id"]],
            os.path.relpath(str(t["path"]), common) if common else t["path"],
            t["rank"],
            t["world_size"],
            t["n_events"],
            t["span_ns"],
            len(t["warnings"] or []),
        )
        for t in page.traces
    ]
    parts = [
        table(
            "table-traces",
            ("trace", "file", "rank", "world size", "events", "span", "warnings"),
            rows,
            ("name", "name", "n", "n", "n", "ns", "n"),
        )
    ]
    if common:
        parts.append(f'<p class="note">Files under {_e(common)}.</p>')
    return parts


def inputs(page: Page) -> None:
    """What was read: the reader's warnings for every trace, and in a lake one row per trace."""
    parts = [p for p in (_warnings(page),) if p]
    if page.lake and page.traces:
        parts += _trace_table(page)
    if parts:
        page.add("traces", f"Traces ({len(page.traces)})" if page.lake else "Warnings", *parts)


def timeline(page: Page) -> None:
    """Headline figures over all traces (gpu_time_totals) and one stacked bar per GPU (gpu_timeline)."""
    if not page.has("gpu_timeline"):
        return
    rows = section_data.gpu_timeline(page.src)
    if not rows:
        return
    tot = section_data.gpu_totals(page.src)
    figures = kpis(
        [
            ("GPU span", fmt_ns(tot["total_ns"])),
            ("busy", fmt_pct(tot["busy_pct"])),
            ("computing", fmt_pct(tot["computation_pct"])),
            ("exposed comm.", fmt_pct(tot["exposed_comm_pct"])),
            ("idle", fmt_pct(tot["idle_pct"])),
        ]
    )
    keys = [
        ("computation_pct", "computation"),
        ("exposed_comm_pct", "exposed communication"),
        ("exposed_memcpy_pct", "exposed memcpy"),
        ("idle_pct", "idle"),
    ]
    colors = [PALETTE[0], PALETTE[1], PALETTE[3], "#c9ced6"]
    chart = charts.hbars(
        "chart-gpu-timeline",
        "GPU timeline breakdown",
        "Each bar is one GPU's span from its first to its last event; the grey part is time the GPU did nothing.",
        [page.scope(r) for r in rows],
        [[r[k] for r in rows] for k, _ in keys],
        "% of the GPU's span (first to last device event)",
        fmt=lambda v: f"{v:.1f}%",
        colors=colors,
        legend=list(zip([n for _, n in keys], colors)),
        xmax=100,
    )
    tab = table(
        "table-gpu-timeline",
        ("scope", "span", "busy", "computation", "exposed comm.", "exposed memcpy", "idle"),
        [
            (
                page.scope(r),
                r["total_ns"],
                r["busy_pct"],
                r["computation_pct"],
                r["exposed_comm_pct"],
                r["exposed_memcpy_pct"],
                r["idle_pct"],
            )
            for r in rows
        ],
        ("name", "ns", "pct", "pct", "pct", "pct", "pct"),
    )
    page.add("timeline", "GPU timeline", figures, chart, tab)
