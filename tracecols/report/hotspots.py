"""The sections on where the device time went: top ops and kernels, kernel classes, the
roofline of modelled ops and the icicle of host call stacks."""

import math

from ..printable import printable
from . import charts, flame, section_data
from .charts import PALETTE
from .labels import html_text as _e
from .labels import kernel_label
from .notes import graph_notes
from .page import Page
from .tables import table
from .units import fmt_ns, time_unit

TOP = 15  # rows of the top-N charts
TOP_ROWS = 50  # rows of the top-N tables
MAX_POINTS = 1500  # op instances drawn in the roofline (the longest)
ICICLE_LEVELS = 24  # levels drawn in the call-stack chart, below the frames every stack shares
ICICLE_DEPTH = 96  # frames of each stack read for it


def _top(rows: list[dict], what: str) -> str:
    """`Top 15 kernels`, `Top kernel`: the title of a top-N chart of these rows."""
    n = min(TOP, len(rows))
    return f"Top {n} {what}s" if n > 1 else f"Top {what}"


def _top_ops(page: Page) -> list[str]:
    """Ops by the GPU busy time their own kernels took, as shares of it (top_op_names)."""
    rows = section_data.top_ops(page.src, TOP_ROWS)
    if not rows:
        return []
    div, unit = time_unit(max(r["gpu_ns"] for r in rows))
    chart = charts.hbars(
        "chart-top-ops",
        _top(rows, "op") + " by GPU time",
        "The longest bars are the operators whose own kernels kept the GPU busiest: optimise these first.",
        [r["name"] for r in rows[:TOP]],
        [[r["gpu_ns"] / div for r in rows[:TOP]]],
        f"GPU busy time of the kernels each op launched directly ({unit})",
        fmt=lambda v, u=unit: f"{v:,.3g} {u}",
    )
    tab = table(
        "table-top-ops",
        ("op", "count", "GPU time", "share of busy", "CPU self"),
        [(r["name"], int(r["count"] or 0), r["gpu_ns"], r["share_pct"], r["cpu_self_ns"]) for r in rows],
        ("name", "n", "ns", "pct", "ns"),
    )
    return [chart, tab]


def _top_kernels(page: Page) -> list[str]:
    """Kernels by their summed duration over every launch (kernel_name_totals)."""
    rows = section_data.top_kernels(page.src, TOP_ROWS)
    if not rows:
        return []
    div, unit = time_unit(max(r["sum_ns"] for r in rows))
    shortened = any(kernel_label(printable(r["name"])) != printable(r["name"]) for r in rows[:TOP])
    chart = charts.hbars(
        "chart-top-kernels",
        _top(rows, "kernel") + " by GPU time",
        "Each bar is the summed duration of every launch of one kernel; a few long bars mean a few kernels dominate.",
        [r["name"] for r in rows[:TOP]],
        [[r["sum_ns"] / div for r in rows[:TOP]]],
        f"total kernel duration ({unit})",
        fmt=lambda v, u=unit: f"{v:,.3g} {u}",
        short=kernel_label,
        cut="end",
        note="Kernel names without namespaces and arguments; hover a bar or see the table for the full name."
        if shortened
        else None,
    )
    tab = table(
        "table-top-kernels",
        ("kernel", "count", "total", "mean", "min", "max", "share"),
        [(r["name"], int(r["count"]), r["sum_ns"], r["mean_ns"], r["min_ns"], r["max_ns"], r["share_pct"]) for r in rows],
        ("name", "n", "ns", "ns", "ns", "ns", "pct"),
    )
    return [chart, tab]


def top(page: Page) -> None:
    parts = [f'<p class="note">{_e(line)}</p>' for line in graph_notes(page.src)]
    if page.has("top_op_names"):
        parts += _top_ops(page)
    if page.has("kernel_name_totals"):
        parts += _top_kernels(page)
    if parts:
        page.add("top", "Top ops and kernels by GPU time", *parts)


def classes(page: Page) -> None:
    if not page.has("kernel_class_totals"):
        return
    rows = section_data.kernel_classes(page.src)
    if not rows:
        return
    names = [r["kernel_class"] or "(none)" for r in rows]
    page.add(
        "classes",
        "GPU time by kernel class",
        charts.hbars(
            "chart-kernel-class",
            "GPU time by kernel class",
            "Shows what kind of work the GPU time went to: GEMMs and attention are the math, the rest is overhead to shrink.",
            names,
            [[r["share_pct"] for r in rows]],
            "% of the summed duration of all device events",
            fmt=lambda v: f"{v:.1f}%",
            colors=PALETTE,
        ),
        table(
            "table-kernel-class",
            ("class", "events", "total", "share"),
            [(n, int(r["count"]), r["sum_ns"], r["share_pct"]) for n, r in zip(names, rows)],
            ("name", "n", "ns", "pct"),
        ),
    )


def _of_roof(pct: float | None) -> str:
    """The hover text's % of the roofline; above 100 no device can run, so it is named a
    model or data problem rather than printed as a measurement."""
    if pct is None:
        return ""
    if pct > 100:
        return " (above the device's peak: the FLOPs/bytes model or the data is wrong)"
    return f" ({pct:.0f}% of roof)"


def _roofline_series(rows: list[dict]) -> list[dict]:
    """One series of points per op category, each with its hover text."""
    cats = sorted({r["category"] for r in rows})
    return [
        {
            "name": c,
            "color": PALETTE[i % len(PALETTE)],
            "points": [
                (
                    r["arithmetic_intensity"],
                    r["achieved_tflops_per_s"],
                    f"{printable(r['name'])} {printable(r['shapes'] or '', 200)}: {r['arithmetic_intensity']:.3g} FLOP/B, "
                    f"{r['achieved_tflops_per_s']:.3g} TFLOP/s" + _of_roof(r["roofline_pct"]),
                )
                for r in rows
                if r["category"] == c
            ],
        }
        for i, c in enumerate(cats)
    ]


def _roofs(peaks: dict[tuple, tuple[float, float]], ais: list[float]) -> list[dict]:
    """One roof per (device model, precision): min(peak FLOP/s, intensity × peak bandwidth)."""
    ridges = [pf / pb for pf, pb in peaks.values()]
    # the roofs span whole decades, the same as the log axis, so they reach both edges
    lo = 10.0 ** math.floor(math.log10(min(ais + ridges) / 2))
    hi = 10.0 ** math.ceil(math.log10(max(ais + ridges) * 2))
    lines = []
    for k, ((model, prec), (pf, pb)) in enumerate(sorted(peaks.items(), key=lambda kv: str(kv[0]))):
        lines.append(
            {
                "name": f"roof {model} {prec}: {pf:g} TFLOP/s, {pb:g} TB/s",
                "dash": k > 0,
                "color": ("#222", "#888", "#555")[k % 3],
                "points": [(lo, lo * pb), (pf / pb, pf), (hi, pf)],
            }
        )
    return lines


def roofline(page: Page) -> None:
    if not page.has("op_perf"):
        return
    rows = section_data.roofline_points(page.src, MAX_POINTS)
    peaks = {
        (r["device_model"], r["precision"]): (r["peak_tflops_per_s"], r["peak_tb_per_s"])
        for r in rows
        if r["peak_tflops_per_s"] and r["peak_tb_per_s"]
    }
    if not rows or not peaks:
        return
    page.add(
        "roofline",
        "Roofline of ops",
        charts.xy(
            "chart-roofline",
            "Roofline: achieved TFLOP/s of ops against the device's roofs",
            "A point far below the roof line above it left performance on the table; "
            "left of the ridge the op is memory-bound, right of it compute-bound.",
            _roofline_series(rows),
            "arithmetic intensity (FLOP per byte moved, log scale)",
            "achieved TFLOP/s (log scale)",
            logx=True,
            logy=True,
            lines=_roofs(peaks, [r["arithmetic_intensity"] for r in rows]),
            height=380,
            note=f"{len(rows)} innermost modelled op instances with a GPU time (the longest {MAX_POINTS} at most).",
        ),
    )


def stacks(page: Page) -> None:
    """An icicle of the host call stacks: by the device time they launched when the trace has
    any, else by their own CPU time."""
    if not page.has("stacks"):
        return
    paths = flame.frame_paths(page.src, "self_device_ns", ICICLE_DEPTH)
    on_device = bool(paths)  # the paths that launched device time; none: the trace has none
    if not on_device:
        paths = flame.frame_paths(page.src, "self_cpu_ns", ICICLE_DEPTH)
    drawn, total, trunk, least = flame.rects(paths, levels=ICICLE_LEVELS)
    if not drawn:
        return
    colours = {k: PALETTE[i] for i, k in enumerate(flame.KINDS)}
    rects = [
        (lvl, start, width, name, f"{printable(name)}: {fmt_ns(v)} ({100 * width:.1f}%)", colours[flame.kind(name)])
        for lvl, start, width, name, v in drawn
    ]
    what = "device time launched" if on_device else "CPU self time"
    legend = [
        ("ATen op", colours["op"]),
        ("Python frame", colours["python"]),
        ("runtime call", colours["runtime"]),
        ("other", colours["other"]),
    ]
    shared = (
        f"The {len(trunk)} outermost frames, the same in every stack ({printable(trunk[0], 40)} … "
        f"{printable(trunk[-1], 40)}), are left out. "
        if trunk
        else ""
    )
    page.add(
        "stacks",
        "Call stacks",
        charts.icicle(
            "chart-stacks",
            f"Host call stacks by {what}",
            "Each bar is a frame, as wide as its share of the time; the frames it called hang below it.",
            rects,
            max(r[0] for r in rects) + 1,
            legend,
            note=f"{fmt_ns(total)} of {what}. "
            + shared
            + f"Frames under {100 * least:.2g}% of the time, and below the {ICICLE_LEVELS} levels drawn, are not "
            "drawn (`tracecols stacks` writes every stack). Hover a bar for its name and time.",
        ),
    )
