"""The sections along the time axis: each step's critical path, memory over time, and the idle
gaps and queue depth of the streams."""

from ..printable import printable
from . import charts, section_data
from .charts import PALETTE
from .page import Page
from .tables import table
from .units import fmt_ns, time_unit

MAX_GAPS = 600  # idle gaps drawn (the largest)
MAX_STREAMS = 6  # queue depth and memory series drawn (the busiest streams; the first devices)
MAX_PATHS = 40  # steps drawn in the critical path chart (the first)
TOP_SEGMENTS = 50  # longest critical path segments listed
TOP_ROWS = 50  # streams listed in the idle time table (the most idle)
# what bounds the critical path, in the order drawn
CP_BOUNDS = (
    "cpu_bound",
    "data_loading",
    "gpu_compute_bound",
    "gpu_communication_bound",
    "kernel_launch_overhead",
    "kernel_kernel_overhead",
)
CP_COLORS = dict(zip(CP_BOUNDS, (PALETTE[1], PALETTE[5], PALETTE[0], PALETTE[2], PALETTE[6], PALETTE[3])))


def _step_label(page: Page, w: tuple) -> str:
    """A step of the critical path, w = (trace_id, step, window_uid): `rank 1 · step 3`, `whole trace`."""
    trace = page.labels.get(w[0], f"trace {w[0]}")
    step = "whole trace" if w[2] is None else f"step {w[1]}" if w[1] is not None else f"window {w[2]}"
    return " · ".join(p for p in (trace, step) if p)


def critical_path(page: Page) -> None:
    """Each step's critical path split by what bounds it (critical_path_summary), and the
    longest segments on those paths (critical_path)."""
    if not page.has("critical_path_summary", "critical_path"):
        return
    rows = section_data.critical_path_steps(page.src)
    if not rows:
        return
    windows = list(dict.fromkeys((r["trace_id"], r["step"], r["window_uid"]) for r in rows))
    shown = windows[:MAX_PATHS]
    got = {(r["trace_id"], r["step"], r["window_uid"], r["bound_by"]): r for r in rows}
    kinds = [k for k in CP_BOUNDS if any(r["bound_by"] == k for r in rows)]
    colors = [CP_COLORS[k] for k in kinds]
    chart = charts.hbars(
        "chart-critical-path",
        "Critical path of each step by what bounds it",
        "Each bar is one step's longest chain of dependencies; its largest part is what to make faster first.",
        [_step_label(page, w) for w in shown],
        [[(got.get(w + (k,)) or {}).get("pct_of_path") for w in shown] for k in kinds],
        "% of the step's critical path",
        fmt=lambda v: f"{v:.1f}%",
        colors=colors,
        legend=list(zip(kinds, colors)),
        xmax=100,
        note=f"The first {MAX_PATHS} of {len(windows)} steps." if len(windows) > MAX_PATHS else None,
    )
    summary = table(
        "table-critical-path",
        ("step", "path", "step time") + tuple(kinds),
        [
            (
                _step_label(page, w),
                sum(got[w + (k,)]["path_ns"] for k in kinds if w + (k,) in got),
                next(got[w + (k,)]["step_ns"] for k in kinds if w + (k,) in got),
            )
            + tuple((got.get(w + (k,)) or {}).get("path_ns") for k in kinds)
            for w in windows
        ],
        ("name", "ns", "ns") + ("ns",) * len(kinds),
    )
    segs = section_data.critical_path_segments(page.src, TOP_SEGMENTS)
    longest = table(
        "table-critical-path-segments",
        ("step", "segment", "event", "bound by", "time"),
        [
            (_step_label(page, (r["trace_id"], r["step"], r["window_uid"])), r["kind"], r["name"], r["bound_by"], r["dur_ns"])
            for r in segs
        ],
        ("name", "name", "name", "name", "ns"),
    )
    page.add(
        "critical-path",
        "Critical path",
        chart,
        summary,
        f'<p class="note">The {len(segs)} longest segments on these paths:</p>',
        longest,
    )


def _memory_series(page: Page, rows: list[dict], div: float, mdiv: int) -> list[dict]:
    """Allocated and reserved of the first MAX_STREAMS devices, as points (time, memory)."""
    seen: dict[tuple, list[dict]] = {}
    for r in rows:
        seen.setdefault((r["trace_id"], r["device_kind"], r["device_id"]), []).append(r)
    series = []
    for i, ((tid, kind_, dev), rs) in enumerate(list(seen.items())[:MAX_STREAMS]):
        who = page.scope({"trace_id": tid, "device": None})
        name = f"{who} · {kind_} {dev}" if len(page.traces) > 1 else f"{kind_} {dev}"
        x = [r["bin_start_ns"] / div for r in rs]
        series.append(
            {
                "name": f"{name} allocated",
                "color": PALETTE[(2 * i) % len(PALETTE)],
                "points": [(xx, r["allocated_bytes"] / mdiv) for xx, r in zip(x, rs) if r["allocated_bytes"] is not None],
            }
        )
        if any(r["reserved_bytes"] is not None for r in rs):
            series.append(
                {
                    "name": f"{name} reserved",
                    "color": PALETTE[(2 * i + 1) % len(PALETTE)],
                    "points": [(xx, r["reserved_bytes"] / mdiv) for xx, r in zip(x, rs) if r["reserved_bytes"] is not None],
                }
            )
    return [s for s in series if s["points"]]


def memory(page: Page) -> None:
    """Allocated and reserved memory over time per device, from the profiler's memory events
    (memory_timeline_bins)."""
    if not page.has("memory_timeline_bins"):
        return
    rows = section_data.memory_bins(page.src)
    if not rows:
        return
    div, unit = time_unit(rows[0]["span_ns"])
    top = max(max(r["allocated_bytes"] or 0, r["reserved_bytes"] or 0) for r in rows)
    mdiv, munit = next(((d, u) for d, u in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")) if top >= d), (1, "bytes"))
    series = _memory_series(page, rows, div, mdiv)
    if not series:
        return
    page.add(
        "memory",
        "Memory over time",
        charts.xy(
            "chart-memory",
            "Memory over time, per device",
            "Allocated is what live tensors hold; reserved is what the caching allocator took from the device (GPUs).",
            series,
            f"time since the first memory event ({unit})",
            f"memory ({munit})",
            kind="step",
            ymin=0,
            note=f"The highest value per {fmt_ns(rows[0]['bin_ns'])} bin, from the profiler's memory events "
            "(profile_memory=True); where a trace writes no totals, allocated is the running sum of its allocations.",
        ),
    )


class _Axis:
    """The time axis the idle gaps and the queue depth share (device_time_axis)."""

    def __init__(self, origin: dict[int, int], span: int, shared: bool) -> None:
        self.origin, self.span = origin, span
        self.div, self.unit = time_unit(span)
        self.xlim = (0, span / self.div)
        self.title = ("time since the first" if shared else "time since each trace's first") + " kernel launch or device event"
        self.apart = "" if shared else " The traces' device work does not overlap in time: each trace's times start at 0."


def _idle_gaps(page: Page, axis: _Axis) -> list[str]:
    rows, n_all = section_data.idle_gaps(page.src, MAX_GAPS)
    if not rows:
        return []
    gdiv, gunit = time_unit(max(r["gap_ns"] for r in rows))
    causes = ["host_wait", "kernel_wait", "other"]
    series = [
        {
            "name": c,
            "color": PALETTE[[2, 0, 6][i]],
            "points": [
                (
                    (r["gap_start_ns"] - axis.origin[r["trace_id"]]) / axis.div,
                    r["gap_ns"] / gdiv,
                    f"{page.scope(r)} stream {r['stream']}: {fmt_ns(r['gap_ns'])} before {printable(r['name'], 50)}",
                )
                for r in rows
                if r["cause"] == c
            ],
        }
        for i, c in enumerate(causes)
    ]
    parts = [
        charts.xy(
            "chart-idle-gaps",
            "Idle gaps over time",
            "Each dot is a stretch where a stream sat idle; red dots high up are long waits for the host to launch work.",
            series,
            f"{axis.title} ({axis.unit})",
            f"gap length ({gunit}, log scale)",
            logy=True,
            xlim=axis.xlim,
            note=(f"The largest {len(rows)} of {n_all} gaps." if n_all > len(rows) else f"All {n_all} gaps.") + axis.apart,
        )
    ]
    it = section_data.idle_time(page.src, TOP_ROWS) if page.has("idle_time") else []
    if it:
        parts.append(
            table(
                "table-idle-time",
                ("stream", "span", "idle", "host wait", "kernel wait", "other"),
                [
                    (
                        f"{page.scope(r)} stream {r['stream']}",
                        r["span_ns"],
                        r["idle_ns"],
                        r["host_wait_ns"],
                        r["kernel_wait_ns"],
                        r["other_ns"],
                    )
                    for r in it
                ],
                ("name", "ns", "ns", "ns", "ns", "ns"),
            )
        )
    return parts


def _queue_depth(page: Page, axis: _Axis) -> list[str]:
    """The busiest streams' queue depth (queue_depth_streams), the deepest per bin (queue_depth_bins)."""
    streams = [s for s in section_data.busiest_streams(page.src, MAX_STREAMS) if s["trace_id"] in axis.origin]
    if not streams:
        return []
    bins = section_data.queue_depth_bins(page.src, streams)
    binw = next((b[0]["bin_ns"] for b in bins.values() if b), None)
    if binw is None:
        return []
    series = [
        {
            "name": f"{page.scope(s)} stream {s['stream']}",
            "color": PALETTE[i % len(PALETTE)],
            "points": [
                (r["bin_start_ns"] / axis.div, r["max_queue_depth"]) for r in bins[s["trace_id"], s["device"], s["stream"]]
            ],
        }
        for i, s in enumerate(streams)
    ]
    return [
        charts.xy(
            "chart-queue-depth",
            "Queue depth over time",
            "A line that stays above zero means the host ran ahead of the GPU (GPU-bound); at zero the GPU waited for launches.",
            series,
            f"{axis.title} ({axis.unit})",
            "launched, not yet started (count)",
            kind="step",
            ymin=0,
            xlim=axis.xlim,
            note=f"Device events launched and not yet started: the maximum per {fmt_ns(binw)} bin; "
            f"the {len(streams)} busiest streams." + axis.apart,
        )
    ]


def over_time(page: Page) -> None:
    if not (page.has("queue_depth_bins") or page.has("idle_gaps")):
        return
    origin, span, shared = section_data.time_axis(page.src) if page.has("device_time_axis") else ({}, 0, True)
    if not origin:
        return
    axis = _Axis(origin, span, shared)
    parts = _idle_gaps(page, axis) if page.has("idle_gaps") else []
    if page.has("queue_depth_bins", "queue_depth_streams"):
        parts += _queue_depth(page, axis)
    if parts:
        page.add("time", "Idle gaps and queue depth over time", *parts)
