"""The HTML report: one self-contained file (inline CSS, SVG and a few lines of JS; no requests)."""

import datetime
import math
import os
import re
from decimal import Decimal

from ..printable import printable
from ..version import __version__
from . import charts, flame
from .charts import PALETTE
from .labels import html_text as _e
from .labels import kernel_label, trace_labels
from .units import fmt_ns, time_unit
from .units import fmt_pct as _pct

TOP = 15  # rows of the top-N charts
ICICLE_LEVELS = 24  # levels drawn in the call-stack chart, below the frames every stack shares
ICICLE_DEPTH = 96  # frames of each stack read for it
MEMORY_BINS = 400  # time bins of the memory chart
MAX_GAPS = 600  # idle gaps drawn (the largest)
QUEUE_BINS = 400  # time bins of the queue depth series
MAX_STREAMS = 6  # queue depth series drawn (the busiest streams)
MAX_WARNINGS = 100  # lines of traces.warnings shown
MAX_PATHS = 40  # steps drawn in the critical path chart (the first)
TOP_SEGMENTS = 50  # longest critical path segments listed
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

CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"

CSS = """
body{font:14px/1.4 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#222;background:#f6f7f9}
header{background:#1f2d3d;color:#fff;padding:16px 28px}header h1{margin:0 0 4px;font-size:22px}
header p{margin:0;color:#c8d3df;font-size:13px}main{padding:8px 28px 40px;max-width:1300px}
section{background:#fff;border:1px solid #dde2e8;border-radius:6px;margin:16px 0;padding:12px 18px}
h2{font-size:18px;margin:4px 0 8px}.kpis{display:flex;flex-wrap:wrap;gap:10px;margin:8px 0}
.kpi{border:1px solid #dde2e8;border-radius:5px;padding:6px 12px;min-width:120px}
.kpi b{display:block;font-size:18px}.kpi span{color:#667;font-size:12px}
figure.chart{margin:10px 0 16px}figcaption b{display:block;font-size:15px}
.reading{display:block;color:#556;font-size:13px;margin:2px 0 4px}.note{color:#778;font-size:12px;margin:2px 0}
.legend{font-size:12px;margin:2px 0 4px}.legend span{margin-right:14px;white-space:nowrap}
.legend i{display:inline-block;width:11px;height:11px;margin-right:4px;vertical-align:-1px;border-radius:2px}
svg{max-width:100%;height:auto;font-size:11px}svg .grid{stroke:#e6e9ee}svg .axis{stroke:#667}
svg .plot{fill:#fcfcfd}svg .tick{fill:#556}svg .lab{fill:#222}svg .val{fill:#556;font-size:10px}
svg .axt{fill:#334;font-size:12px}svg polyline{fill:none;stroke-width:1.6}svg .ref{stroke-width:2}
svg circle.mark{fill-opacity:.75}
table{border-collapse:collapse;font-size:12.5px;margin:6px 0 12px}th,td{padding:3px 9px;border-bottom:1px solid #eceff3}
th{background:#f0f3f6;cursor:pointer;user-select:none;text-align:left;white-space:nowrap}
th[data-dir=asc]::after{content:" ▲"}th[data-dir=desc]::after{content:" ▼"}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}td.name{max-width:min(560px,45vw);white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.tw{overflow-x:auto;max-width:100%}
.warn{background:#fff7e0;border:1px solid #ecd28b;border-radius:5px;padding:8px 14px;margin:6px 0}.warn ul{margin:4px 0 0;padding-left:20px}.flag{color:#c0392b;font-weight:600}.empty{color:#889}
#tc-check{display:none}
"""

# First thing in <head>: record script errors and requests the CSP blocked, wherever they happen.
HEAD_JS = r"""
var tcErrors=[];
function tcErr(m){tcErrors.push(m);try{if(window.tcCheck)tcCheck();}catch(e){}}
window.onerror=function(m,s,l){tcErr(String(m)+' @'+l);};
document.addEventListener('securitypolicyviolation',function(e){tcErr('blocked '+e.blockedURI+' ('+e.violatedDirective+')');});
"""

# At the end of <body>: makes tables sortable and writes what the
# browser drew into #tc-check (read by the tests through --dump-dom).
JS = r"""
function tcKey(td){var v=td.getAttribute('data-v');if(v!==null&&v!==''&&!isNaN(+v))return +v;return td.textContent.toLowerCase();}
function tcSort(th){var t=th.closest('table'),b=t.tBodies[0],i=Array.prototype.indexOf.call(th.parentNode.children,th);
var d=th.getAttribute('data-dir')==='desc'?'asc':'desc';Array.prototype.forEach.call(th.parentNode.children,function(h){h.removeAttribute('data-dir');});
th.setAttribute('data-dir',d);var rows=Array.prototype.slice.call(b.rows);
rows.sort(function(x,y){var a=tcKey(x.cells[i]),c=tcKey(y.cells[i]);var r=(typeof a==='number'&&typeof c==='number')?a-c:String(a).localeCompare(String(c));return d==='asc'?r:-r;});
rows.forEach(function(r){b.appendChild(r);});}
document.querySelectorAll('table.sortable th').forEach(function(th){th.addEventListener('click',function(){tcSort(th);});});
function tcCheck(){var out={charts:[],tables:[],errors:tcErrors};
document.querySelectorAll('figure.chart').forEach(function(f){var n=0,area=0;
f.querySelectorAll('svg .mark').forEach(function(m){var bb=m.getBBox();area+=bb.width*bb.height+bb.width+bb.height;
n+=(m.tagName==='polyline')?m.points.numberOfItems:1;});out.charts.push({id:f.id,marks:n,drawn:area>0});});
document.querySelectorAll('table.sortable').forEach(function(t){out.tables.push({id:t.id,rows:t.tBodies[0].rows.length});});
document.getElementById('tc-check').textContent=JSON.stringify(out);}
window.addEventListener('load',function(){try{tcCheck();}catch(e){}});
try{tcCheck();}catch(e){tcErrors.push('check: '+e);document.getElementById('tc-check').textContent=JSON.stringify({charts:[],errors:tcErrors});}
"""


def table(tid, header, rows, kinds):
    """A sortable table. kinds per column: 'name' (text), 'n' (number shown as is),
    ('ns',) a duration in ns, 'pct'; each row cell is a raw value."""
    h = "".join(f"<th>{_e(c)}</th>" for c in header)
    body = []
    for r in rows:
        cells = []
        for v, k in zip(r, kinds):
            if k == "ns":
                cells.append(f'<td class="n" data-v="{"" if v is None else float(v)}">{_e(fmt_ns(v))}</td>')
            elif k == "pct":
                cells.append(f'<td class="n" data-v="{"" if v is None else float(v)}">{_e(_pct(v))}</td>')
            elif k == "n":
                if isinstance(v, float):
                    txt = f"{v:,.3g}"
                else:
                    txt = "-" if v is None else f"{v:,}" if isinstance(v, int) else str(v)
                cells.append(f'<td class="n" data-v="{"" if v is None else v}">{_e(txt)}</td>')
            elif k == "flag":
                cells.append(f'<td class="{"flag" if v else ""}">{"yes" if v else "no"}</td>')
            else:
                cells.append(f'<td class="name" title="{_e(v)}">{_e(v)}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    if not rows:
        return '<p class="empty">(no rows)</p>'
    # a table wider than the window scrolls inside its section instead of running off the page
    return (
        f'<div class="tw"><table class="sortable" id="{_e(tid)}"><thead><tr>{h}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def _of_roof(pct):
    """The hover text's % of the roofline; above 100 no device can run, so it is named a
    model or data problem rather than printed as a measurement."""
    if pct is None:
        return ""
    if pct > 100:
        return " (above the device's peak: the FLOPs/bytes model or the data is wrong)"
    return f" ({pct:.0f}% of roof)"


def _warning(line):
    """One line of traces.warnings as HTML, its leading count in bold with thousands separators."""
    m = re.match(r"(\d+)(.*)", line, re.S)
    return f"<b>{int(m[1]):,}</b>{_e(m[2])}" if m else _e(line)


def _top(rows, what):
    """`Top 15 kernels`, `Top kernel`: the title of a top-N chart of these rows."""
    n = min(TOP, len(rows))
    return f"Top {n} {what}s" if n > 1 else f"Top {what}"


def _rows(src, q):
    """Rows as dicts; DuckDB's sums of BIGINT (HUGEINT, read as Decimal) become floats."""
    return [{k: (float(v) if isinstance(v, Decimal) else v) for k, v in r.items()} for r in src.sql(q).iter_rows(named=True)]


class _Report:
    def __init__(self, src, is_lake):
        self.src, self.lake, self.names = src, is_lake, set(src.tables)
        self.sections = []
        self.traces = (
            _rows(
                src,
                """SELECT trace_id, path, rank, world_size, n_events, span_ns, warnings
            FROM traces ORDER BY trace_id""",
            )
            if "traces" in self.names
            else []
        )
        self.labels = trace_labels([(t["trace_id"], t["path"], t["rank"]) for t in self.traces], is_lake)

    def has(self, *names):
        return all(n in self.names for n in names)

    def scope(self, r):
        """Which trace and GPU a row is about: `rank 3 · GPU 0`, `train_a · GPU 0`, `GPU 0`."""
        trace = self.labels.get(r["trace_id"], f"trace {r['trace_id']}")
        parts = [trace] if trace else []
        if r.get("device") is not None:
            parts.append(f"GPU {r['device']}")
        return " · ".join(parts) or f"trace {r['trace_id']}"

    def add(self, sid, title, *parts):
        self.sections.append(f'<section id="{sid}"><h2>{_e(title)}</h2>{"".join(parts)}</section>')

    # --- sections -------------------------------------------------------------------------
    def inputs(self):
        """What was read: in a lake one row per trace (its label is how the charts name it); for
        every trace, each line of `traces.warnings` (what the reader found wrong and worked around)."""
        parts = []
        lines = [(t, w) for t in self.traces for w in (t["warnings"] or [])]
        if lines:
            items = "".join(
                f"<li>{_e(self.labels[t['trace_id']]) + ': ' if self.lake else ''}{_warning(w)}</li>"
                for t, w in lines[:MAX_WARNINGS]
            )
            more = (
                f'<p class="note">{len(lines) - MAX_WARNINGS} more lines: tracecols info shows them all.</p>'
                if len(lines) > MAX_WARNINGS
                else ""
            )
            n = len({t["trace_id"] for t, _ in lines})
            lead = f"Warnings ({n} of {len(self.traces)} traces): the reader" if self.lake else "The reader"
            parts.append(
                f'<div class="warn" id="warnings"><b>{lead} kept events that break the trace format '
                f"and worked around them:</b><ul>{items}</ul>{more}</div>"
            )
        if self.lake and self.traces:
            paths = [str(t["path"]) for t in self.traces]
            common = ""
            if not any("://" in p for p in paths):  # URLs are shown whole
                try:
                    common = os.path.commonpath(paths) if len(paths) > 1 else os.path.dirname(paths[0])
                except ValueError:  # absolute and relative paths mixed
                    pass
            if common in paths:
                common = os.path.dirname(common)
            parts.append(
                table(
                    "table-traces",
                    ("trace", "file", "rank", "world size", "events", "span", "warnings"),
                    [
                        (
                            self.labels[t["trace_id"]],
                            os.path.relpath(str(t["path"]), common) if common else t["path"],
                            t["rank"],
                            t["world_size"],
                            t["n_events"],
                            t["span_ns"],
                            len(t["warnings"] or []),
                        )
                        for t in self.traces
                    ],
                    ("name", "name", "n", "n", "n", "ns", "n"),
                )
            )
            if common:
                parts.append(f'<p class="note">Files under {_e(common)}.</p>')
        if parts:
            self.add("traces", f"Traces ({len(self.traces)})" if self.lake else "Warnings", *parts)

    def timeline(self):
        if not self.has("gpu_timeline"):
            return
        rows = _rows(self.src, "SELECT * FROM gpu_timeline WHERE device IS NOT NULL ORDER BY trace_id, device")
        if not rows:
            return
        tot = _rows(
            self.src,
            """SELECT sum(total_ns) total, sum(busy_ns) busy, sum(computation_ns) comp,
            sum(exposed_comm_ns) comm, sum(idle_ns) idle FROM gpu_timeline WHERE device IS NULL""",
        )[0]
        kp = [
            ("GPU span", fmt_ns(tot["total"])),
            ("busy", _pct(100 * tot["busy"] / tot["total"] if tot["total"] else None)),
            ("computing", _pct(100 * tot["comp"] / tot["total"] if tot["total"] else None)),
            ("exposed comm.", _pct(100 * tot["comm"] / tot["total"] if tot["total"] else None)),
            ("idle", _pct(100 * tot["idle"] / tot["total"] if tot["total"] else None)),
        ]
        kpis = (
            '<div class="kpis">' + "".join(f'<div class="kpi"><b>{_e(v)}</b><span>{_e(k)}</span></div>' for k, v in kp) + "</div>"
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
            [self.scope(r) for r in rows],
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
                    self.scope(r),
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
        self.add("timeline", "GPU timeline", kpis, chart, tab)

    def top(self):
        from .notes import graph_notes

        parts = [f'<p class="note">{_e(line)}</p>' for line in graph_notes(self.src)]
        if self.has("top_ops"):
            # shares of the GPU busy time, `(no op)` last: they add up to it
            rows = _rows(
                self.src,
                """SELECT name, sum(count) AS count, sum(gpu_ns) AS gpu,
                sum(cpu_self_ns) AS cpu_self,
                100.0 * sum(gpu_ns) / nullif((SELECT sum(busy_ns) FROM gpu_timeline WHERE device IS NULL), 0) AS share
                FROM top_ops GROUP BY name HAVING sum(gpu_ns) > 0
                ORDER BY name = '(no op)', gpu DESC, name LIMIT 50""",
            )
            if rows:
                div, unit = time_unit(max(r["gpu"] for r in rows))
                parts.append(
                    charts.hbars(
                        "chart-top-ops",
                        _top(rows, "op") + " by GPU time",
                        "The longest bars are the operators whose own kernels kept the GPU busiest: optimise these first.",
                        [r["name"] for r in rows[:TOP]],
                        [[r["gpu"] / div for r in rows[:TOP]]],
                        f"GPU busy time of the kernels each op launched directly ({unit})",
                        fmt=lambda v, u=unit: f"{v:,.3g} {u}",
                    )
                )
                parts.append(
                    table(
                        "table-top-ops",
                        ("op", "count", "GPU time", "share of busy", "CPU self"),
                        [(r["name"], int(r["count"] or 0), r["gpu"], r["share"], r["cpu_self"]) for r in rows],
                        ("name", "n", "ns", "pct", "ns"),
                    )
                )
        if self.has("kernel_stats"):
            rows = _rows(
                self.src,
                """SELECT name, sum(count) AS count, sum(sum_ns) AS total,
                sum(sum_ns) / sum(count) AS mean, min(min_ns) AS min, max(max_ns) AS max,
                100.0 * sum(sum_ns) / nullif(sum(sum(sum_ns)) OVER (), 0) AS share
                FROM kernel_stats GROUP BY name ORDER BY total DESC, name LIMIT 50""",
            )
            if rows:
                div, unit = time_unit(max(r["total"] for r in rows))
                parts.append(
                    charts.hbars(
                        "chart-top-kernels",
                        _top(rows, "kernel") + " by GPU time",
                        "Each bar is the summed duration of every launch of one kernel; a few long bars mean a few kernels dominate.",
                        [r["name"] for r in rows[:TOP]],
                        [[r["total"] / div for r in rows[:TOP]]],
                        f"total kernel duration ({unit})",
                        fmt=lambda v, u=unit: f"{v:,.3g} {u}",
                        short=kernel_label,
                        cut="end",
                        note="Kernel names without namespaces and arguments; hover a bar or see the table for the full name."
                        if any(kernel_label(printable(r["name"])) != printable(r["name"]) for r in rows[:TOP])
                        else None,
                    )
                )
                parts.append(
                    table(
                        "table-top-kernels",
                        ("kernel", "count", "total", "mean", "min", "max", "share"),
                        [(r["name"], int(r["count"]), r["total"], r["mean"], r["min"], r["max"], r["share"]) for r in rows],
                        ("name", "n", "ns", "ns", "ns", "ns", "pct"),
                    )
                )
        if parts:
            self.add("top", "Top ops and kernels by GPU time", *parts)

    def classes(self):
        if not self.has("kernel_class_stats"):
            return
        rows = _rows(
            self.src,
            """SELECT coalesce(kernel_class, '(none)') AS cls, sum(count) AS count,
            sum(sum_ns) AS total, 100.0 * sum(sum_ns) / nullif(sum(sum(sum_ns)) OVER (), 0) AS share
            FROM kernel_class_stats GROUP BY 1 ORDER BY total DESC""",
        )
        if not rows:
            return
        self.add(
            "classes",
            "GPU time by kernel class",
            charts.hbars(
                "chart-kernel-class",
                "GPU time by kernel class",
                "Shows what kind of work the GPU time went to: GEMMs and attention are the math, the rest is overhead to shrink.",
                [r["cls"] for r in rows],
                [[r["share"] for r in rows]],
                "% of the summed duration of all device events",
                fmt=lambda v: f"{v:.1f}%",
                colors=PALETTE,
            ),
            table(
                "table-kernel-class",
                ("class", "events", "total", "share"),
                [(r["cls"], int(r["count"]), r["total"], r["share"]) for r in rows],
                ("name", "n", "ns", "pct"),
            ),
        )

    def roofline(self):
        if not self.has("op_perf"):
            return
        rows = _rows(
            self.src,
            """SELECT name, category, precision, device_model, arithmetic_intensity AS ai,
            achieved_tflops_per_s AS tf, peak_tflops_per_s AS pf, peak_tb_per_s AS pb, roofline_pct, gpu_ns, shapes
            FROM op_perf WHERE innermost AND flops > 0 AND bytes > 0 AND gpu_ns > 0
            ORDER BY gpu_ns DESC LIMIT 1500""",
        )
        peaks = {(r["device_model"], r["precision"]): (r["pf"], r["pb"]) for r in rows if r["pf"] and r["pb"]}
        if not rows or not peaks:
            return
        cats = sorted({r["category"] for r in rows})
        series = [
            {
                "name": c,
                "color": PALETTE[i % len(PALETTE)],
                "points": [
                    (
                        r["ai"],
                        r["tf"],
                        f"{printable(r['name'])} {printable(r['shapes'] or '', 200)}: {r['ai']:.3g} FLOP/B, "
                        f"{r['tf']:.3g} TFLOP/s" + _of_roof(r["roofline_pct"]),
                    )
                    for r in rows
                    if r["category"] == c
                ],
            }
            for i, c in enumerate(cats)
        ]
        ais = [r["ai"] for r in rows]
        ridges = [pf / pb for pf, pb in peaks.values()]
        # the roofs span whole decades, the same as the log axis, so they reach both edges
        lo = 10.0 ** math.floor(math.log10(min(ais + ridges) / 2))
        hi = 10.0 ** math.ceil(math.log10(max(ais + ridges) * 2))
        lines = []
        for k, ((model, prec), (pf, pb)) in enumerate(sorted(peaks.items(), key=lambda kv: str(kv[0]))):
            ridge = pf / pb
            pts = [(lo, lo * pb), (ridge, pf), (hi, pf)]
            lines.append(
                {
                    "name": f"roof {model} {prec}: {pf:g} TFLOP/s, {pb:g} TB/s",
                    "dash": k > 0,
                    "color": ("#222", "#888", "#555")[k % 3],
                    "points": pts,
                }
            )
        self.add(
            "roofline",
            "Roofline of ops",
            charts.xy(
                "chart-roofline",
                "Roofline: achieved TFLOP/s of ops against the device's roofs",
                "A point far below the roof line above it left performance on the table; left of the ridge the op is memory-bound, right of it compute-bound.",
                series,
                "arithmetic intensity (FLOP per byte moved, log scale)",
                "achieved TFLOP/s (log scale)",
                logx=True,
                logy=True,
                lines=lines,
                height=380,
                note=f"{len(rows)} innermost modelled op instances with a GPU time (the longest 1500 at most).",
            ),
        )

    def critical_path(self):
        """Each step's critical path split by what bounds it (critical_path_summary), and the
        longest segments on those paths (critical_path)."""
        if not self.has("critical_path_summary", "critical_path"):
            return
        rows = _rows(
            self.src,
            """SELECT trace_id, step, window_uid, bound_by, path_ns, pct_of_path, step_ns
            FROM critical_path_summary""",
        )
        if not rows:
            return
        windows = list(dict.fromkeys((r["trace_id"], r["step"], r["window_uid"]) for r in rows))
        shown = windows[:MAX_PATHS]
        got = {(r["trace_id"], r["step"], r["window_uid"], r["bound_by"]): r for r in rows}
        kinds = [k for k in CP_BOUNDS if any(r["bound_by"] == k for r in rows)]
        colors = [CP_COLORS[k] for k in kinds]

        def label(w):
            trace = self.labels.get(w[0], f"trace {w[0]}")
            step = "whole trace" if w[2] is None else f"step {w[1]}" if w[1] is not None else f"window {w[2]}"
            return " · ".join(p for p in (trace, step) if p)

        chart = charts.hbars(
            "chart-critical-path",
            "Critical path of each step by what bounds it",
            "Each bar is one step's longest chain of dependencies; its largest part is what to make faster first.",
            [label(w) for w in shown],
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
                    label(w),
                    sum(got[w + (k,)]["path_ns"] for k in kinds if w + (k,) in got),
                    next(got[w + (k,)]["step_ns"] for k in kinds if w + (k,) in got),
                )
                + tuple((got.get(w + (k,)) or {}).get("path_ns") for k in kinds)
                for w in windows
            ],
            ("name", "ns", "ns") + ("ns",) * len(kinds),
        )
        segs = _rows(
            self.src,
            f"""SELECT trace_id, step, window_uid, kind, name, bound_by, dur_ns
            FROM critical_path WHERE dur_ns > 0 ORDER BY dur_ns DESC, trace_id, window_uid, seq LIMIT {TOP_SEGMENTS}""",
        )
        longest = table(
            "table-critical-path-segments",
            ("step", "segment", "event", "bound by", "time"),
            [
                (label((r["trace_id"], r["step"], r["window_uid"])), r["kind"], r["name"], r["bound_by"], r["dur_ns"])
                for r in segs
            ],
            ("name", "name", "name", "name", "ns"),
        )
        self.add(
            "critical-path",
            "Critical path",
            chart,
            summary,
            f'<p class="note">The {len(segs)} longest segments on these paths:</p>',
            longest,
        )

    def clocks(self):
        """({trace_id: origin ns}, span ns, whether the traces share one clock). Traces whose device work
        overlaps in time share one origin (the ranks of a job: their times line up as the profiler
        wrote them); traces that do not (unrelated runs, clocks apart) each start at 0."""
        spans = _rows(
            self.src,
            """SELECT trace_id, min(least(ts_ns, coalesce(launch_ts_ns, ts_ns))) AS t0,
            max(coalesce(end_ns, ts_ns)) AS t1 FROM kernels WHERE ts_ns IS NOT NULL GROUP BY trace_id""",
        )
        if not spans:
            return {}, 0, True
        if max(r["t0"] for r in spans) <= min(r["t1"] for r in spans):
            t0 = min(r["t0"] for r in spans)
            return {r["trace_id"]: t0 for r in spans}, max(max(r["t1"] for r in spans) - t0, 1), True
        return {r["trace_id"]: r["t0"] for r in spans}, max(max(r["t1"] - r["t0"] for r in spans), 1), False

    def over_time(self):
        parts = []
        if not (self.has("queue_depth") or self.has("idle_gaps")):
            return
        origin, span, shared = self.clocks()
        if not origin:
            return
        div, unit = time_unit(span)
        xlim = (0, span / div)
        axis = ("time since the first" if shared else "time since each trace's first") + " kernel launch or device event"
        apart = "" if shared else " The traces' device work does not overlap in time: each trace's times start at 0."
        if self.has("idle_gaps"):
            n_all = _rows(self.src, "SELECT count(*) AS n FROM idle_gaps")[0]["n"]
            rows = _rows(
                self.src,
                f"""SELECT rank, trace_id, device, stream, name, gap_start_ns, gap_ns, cause
                FROM idle_gaps ORDER BY gap_ns DESC LIMIT {MAX_GAPS}""",
            )
            if rows:
                gdiv, gunit = time_unit(max(r["gap_ns"] for r in rows))
                causes = ["host_wait", "kernel_wait", "other"]
                series = [
                    {
                        "name": c,
                        "color": PALETTE[[2, 0, 6][i]],
                        "points": [
                            (
                                (r["gap_start_ns"] - origin[r["trace_id"]]) / div,
                                r["gap_ns"] / gdiv,
                                f"{self.scope(r)} stream {r['stream']}: {fmt_ns(r['gap_ns'])} before {printable(r['name'], 50)}",
                            )
                            for r in rows
                            if r["cause"] == c
                        ],
                    }
                    for i, c in enumerate(causes)
                ]
                parts.append(
                    charts.xy(
                        "chart-idle-gaps",
                        "Idle gaps over time",
                        "Each dot is a stretch where a stream sat idle; red dots high up are long waits for the host to launch work.",
                        series,
                        f"{axis} ({unit})",
                        f"gap length ({gunit}, log scale)",
                        logy=True,
                        xlim=xlim,
                        note=(f"The largest {len(rows)} of {n_all} gaps." if n_all > len(rows) else f"All {n_all} gaps.") + apart,
                    )
                )
                it = (
                    _rows(
                        self.src,
                        """SELECT rank, trace_id, device, stream, span_ns, idle_ns,
                    host_wait_ns, kernel_wait_ns, other_ns FROM idle_time ORDER BY idle_ns DESC LIMIT 50""",
                    )
                    if self.has("idle_time")
                    else []
                )
                if it:
                    parts.append(
                        table(
                            "table-idle-time",
                            ("stream", "span", "idle", "host wait", "kernel wait", "other"),
                            [
                                (
                                    f"{self.scope(r)} stream {r['stream']}",
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
        if self.has("queue_depth"):
            streams = _rows(
                self.src,
                f"""SELECT trace_id, any_value(rank) AS rank, device, stream, count(*) AS n
                FROM queue_depth GROUP BY ALL ORDER BY n DESC, trace_id, device, stream LIMIT {MAX_STREAMS}""",
            )
            streams = [s for s in streams if s["trace_id"] in origin]
            if streams:
                binw = max(span // QUEUE_BINS, 1)
                keys = ", ".join(f"({s['trace_id']}, {s['device']}, {s['stream']})" for s in streams)
                t0s = ", ".join(f"({t}, {origin[t]})" for t in sorted({s["trace_id"] for s in streams}))
                pts = _rows(
                    self.src,
                    f"""SELECT qd.trace_id, device, stream, (ts_ns - o.t0) // {binw} AS b,
                    max(queue_depth) AS q FROM queue_depth qd JOIN (VALUES {t0s}) o(trace_id, t0)
                    ON qd.trace_id = o.trace_id
                    WHERE (qd.trace_id, device, stream) IN ({keys}) AND ts_ns IS NOT NULL
                    GROUP BY ALL ORDER BY b""",
                )
                series = []
                for i, s in enumerate(streams):
                    p = [
                        ((r["b"] * binw) / div, r["q"])
                        for r in pts
                        if (r["trace_id"], r["device"], r["stream"]) == (s["trace_id"], s["device"], s["stream"])
                    ]
                    series.append(
                        {"name": f"{self.scope(s)} stream {s['stream']}", "color": PALETTE[i % len(PALETTE)], "points": p}
                    )
                parts.append(
                    charts.xy(
                        "chart-queue-depth",
                        "Queue depth over time",
                        "A line that stays above zero means the host ran ahead of the GPU (GPU-bound); at zero the GPU waited for launches.",
                        series,
                        f"{axis} ({unit})",
                        "launched, not yet started (count)",
                        kind="step",
                        ymin=0,
                        xlim=xlim,
                        note=f"Device events launched and not yet started: the maximum per {fmt_ns(binw)} bin; "
                        f"the {len(streams)} busiest streams." + apart,
                    )
                )
        if parts:
            self.add("time", "Idle gaps and queue depth over time", *parts)

    def stacks(self):
        """An icicle of the host call stacks: by the device time they launched when the trace has
        any, else by their own CPU time."""
        if not self.has("stacks"):
            return
        dev = _rows(self.src, "SELECT coalesce(sum(self_device_ns), 0) AS d FROM stacks")[0]["d"]
        metric = "self_device_ns" if dev > 0 else "self_cpu_ns"
        drawn, total, trunk, least = flame.rects(flame.frame_paths(self.src, metric, ICICLE_DEPTH), levels=ICICLE_LEVELS)
        if not drawn:
            return
        colours = {k: PALETTE[i] for i, k in enumerate(flame.KINDS)}
        rects = [
            (lvl, start, width, name, f"{printable(name)}: {fmt_ns(v)} ({100 * width:.1f}%)", colours[flame.kind(name)])
            for lvl, start, width, name, v in drawn
        ]
        what = "device time launched" if dev > 0 else "CPU self time"
        levels = max(r[0] for r in rects) + 1
        legend = [
            ("ATen op", colours["op"]),
            ("Python frame", colours["python"]),
            ("runtime call", colours["runtime"]),
            ("other", colours["other"]),
        ]
        self.add(
            "stacks",
            "Call stacks",
            charts.icicle(
                "chart-stacks",
                f"Host call stacks by {what}",
                "Each bar is a frame, as wide as its share of the time; the frames it called hang below it.",
                rects,
                levels,
                legend,
                note=f"{fmt_ns(total)} of {what}. "
                + (
                    f"The {len(trunk)} outermost frames, the same in every stack ({printable(trunk[0], 40)} … "
                    f"{printable(trunk[-1], 40)}), are left out. "
                    if trunk
                    else ""
                )
                + f"Frames under {100 * least:.2g}% of the time, and below the {ICICLE_LEVELS} levels drawn, are not "
                "drawn (`tracecols stacks` writes every stack). Hover a bar for its name and time.",
            ),
        )

    def memory(self):
        """Allocated and reserved memory over time per device, from the profiler's memory events."""
        if not self.has("memory_timeline"):
            return
        rows = _rows(
            self.src,
            f"""WITH m AS (SELECT trace_id, device_kind, device_id, ts_ns,
                coalesce(allocated_bytes, net_bytes) AS alloc, reserved_bytes AS res FROM memory_timeline
                WHERE ts_ns IS NOT NULL),
            r AS (SELECT min(ts_ns) AS t0, greatest(max(ts_ns) - min(ts_ns), 1) AS span FROM m)
            SELECT trace_id, device_kind, device_id, least((ts_ns - t0) * {MEMORY_BINS} // span, {MEMORY_BINS - 1}) AS b,
                   any_value(span) AS span, max(alloc) AS alloc, max(res) AS res
            FROM m, r GROUP BY ALL ORDER BY trace_id, device_id, b""",
        )
        if not rows:
            return
        span = rows[0]["span"]
        div, unit = time_unit(span)
        top = max(max(r["alloc"] or 0, r["res"] or 0) for r in rows)
        mdiv, munit = next(((d, u) for d, u in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")) if top >= d), (1, "bytes"))
        seen: dict[tuple, list[dict]]
        series, seen = [], {}
        for r in rows:
            key = (r["trace_id"], r["device_kind"], r["device_id"])
            seen.setdefault(key, []).append(r)
        for i, ((tid, kind_, dev), rs) in enumerate(list(seen.items())[:MAX_STREAMS]):
            who = self.scope({"trace_id": tid, "device": None})
            name = f"{who} · {kind_} {dev}" if len(self.traces) > 1 else f"{kind_} {dev}"
            x = [(r["b"] * span / MEMORY_BINS) / div for r in rs]
            series.append(
                {
                    "name": f"{name} allocated",
                    "color": PALETTE[(2 * i) % len(PALETTE)],
                    "points": [(xx, r["alloc"] / mdiv) for xx, r in zip(x, rs) if r["alloc"] is not None],
                }
            )
            if any(r["res"] is not None for r in rs):
                series.append(
                    {
                        "name": f"{name} reserved",
                        "color": PALETTE[(2 * i + 1) % len(PALETTE)],
                        "points": [(xx, r["res"] / mdiv) for xx, r in zip(x, rs) if r["res"] is not None],
                    }
                )
        series = [s for s in series if s["points"]]
        if not series:
            return
        self.add(
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
                note=f"The highest value per {fmt_ns(span / MEMORY_BINS)} bin, from the profiler's memory events "
                "(profile_memory=True); where a trace writes no totals, allocated is the running sum of its allocations.",
            ),
        )

    def fleet(self):
        if not self.lake:
            return
        parts = []
        by_rank: dict[int, list[str]] = {}
        for t in self.traces:
            if t["rank"] is not None:
                by_rank.setdefault(t["rank"], []).append(self.labels[t["trace_id"]])
        shared = {r: ts for r, ts in sorted(by_rank.items()) if len(ts) > 1}
        if shared:  # collectives are matched across traces by rank number
            parts.append(
                '<p class="warn">Several traces carry the same rank, so their collectives cannot be told '
                "apart: collective skew and arrival lateness mix them. "
                + "; ".join(f"rank {r}: {_e(', '.join(ts))}" for r, ts in shared.items())
                + ".</p>"
            )
        # rows are per trace: named as everywhere else, with a column for the trace when that is not the rank
        named = bool(shared) or any(t["rank"] is None for t in self.traces)

        def who(r):
            return self.labels.get(r["trace_id"], f"rank {r['rank']}")

        def cols(header, kinds):
            return (("trace",) + header, ("name",) + kinds) if named else (header, kinds)

        def row(r, *cells):
            return (who(r),) + cells if named else cells

        if self.has("rank_summary"):
            rows = _rows(self.src, "SELECT * FROM rank_summary WHERE rank IS NOT NULL ORDER BY rank, trace_id")
            steps = [r for r in rows if r["step_mean_ns"] is not None]
            if steps:
                div, unit = time_unit(max(r["step_mean_ns"] for r in steps))
                parts.append(
                    charts.hbars(
                        "chart-rank-steps",
                        "Step time per rank",
                        "Ranks wait for each other at collectives, so a rank with a much longer bar slows the whole job.",
                        [who(r) for r in steps],
                        [[r["step_mean_ns"] / div for r in steps]],
                        f"mean ProfilerStep time ({unit})",
                        fmt=lambda v, u=unit: f"{v:,.3g} {u}",
                    )
                )
            if rows:
                h, k = cols(
                    ("rank", "steps", "mean step", "max step", "GPU busy", "comm", "exposed comm", "collectives"),
                    ("n", "n", "ns", "ns", "pct", "pct", "ns", "n"),
                )
                parts.append(
                    table(
                        "table-rank-summary",
                        h,
                        [
                            row(
                                r,
                                r["rank"],
                                r["steps"],
                                r["step_mean_ns"],
                                r["step_max_ns"],
                                r["gpu_busy_pct"],
                                r["comm_pct"],
                                r["exposed_comm_ns"],
                                r["collectives"],
                            )
                            for r in rows
                        ],
                        k,
                    )
                )
        if self.has("collective_skew"):
            rows = _rows(
                self.src,
                """SELECT * FROM collective_skew WHERE ranks > 1
                ORDER BY start_skew_ns DESC, pg_key, collective, seq LIMIT 200""",
            )
            if rows:
                top = rows[:TOP]
                div, unit = time_unit(max(max(r["start_skew_ns"], r["end_skew_ns"] or 0) for r in top) or 1)
                parts.append(
                    charts.hbars(
                        "chart-collective-skew",
                        f"Collective skew (the {len(top)} most skewed calls)",
                        "A long bar means the ranks reached this collective far apart: the early ones waited for the last.",
                        [f"{r['collective']} #{r['seq']} ({r['pg_key']}) last: rank {r['last_rank']}" for r in top],
                        [[r["start_skew_ns"] / div for r in top]],
                        f"last minus first kernel start across ranks ({unit})",
                        fmt=lambda v, u=unit: f"{v:,.3g} {u}",
                    )
                )
                parts.append(
                    table(
                        "table-collective-skew",
                        ("collective", "group", "seq", "ranks", "bytes", "start skew", "end skew", "first rank", "last rank"),
                        [
                            (
                                r["collective"],
                                r["pg_key"],
                                r["seq"],
                                r["ranks"],
                                r["msg_bytes"],
                                r["start_skew_ns"],
                                r["end_skew_ns"],
                                r["first_rank"],
                                r["last_rank"],
                            )
                            for r in rows
                        ],
                        ("name", "name", "n", "n", "n", "ns", "ns", "n", "n"),
                    )
                )
        if self.has("stragglers"):
            rows = _rows(self.src, "SELECT * FROM stragglers ORDER BY rank, trace_id")
            late = [r for r in rows if r["arrival_late_ns"] is not None]
            if late:
                div, unit = time_unit(max(r["arrival_late_ns"] for r in late) or 1)
                flagged = [r for r in rows if r["slow_step"] or r["late_arrival"]]
                flag = [bool(r["slow_step"] or r["late_arrival"]) for r in late]
                v = [r["arrival_late_ns"] / div for r in late]
                colors = [PALETTE[0], PALETTE[2]]
                parts.append(
                    charts.hbars(
                        "chart-stragglers",
                        "Arrival lateness at collectives per rank",
                        "The rank with the longest bar is the one the others most often wait for; red marks a flagged straggler.",
                        [who(r) for r in late],
                        [[0 if f else x for x, f in zip(v, flag)], [x if f else 0 for x, f in zip(v, flag)]],
                        f"mean kernel start after the earliest rank's ({unit})",
                        fmt=lambda v, u=unit: f"{v:,.3g} {u}",
                        colors=colors,
                        legend=list(zip(("rank", "straggler (slow step or late arrival)"), colors)),
                        note=("Stragglers: " + ", ".join(who(r) for r in flagged))
                        if flagged
                        else "No rank is an outlier (robust z > 3.5 against the median over ranks).",
                    )
                )
            if rows:
                h, k = cols(
                    ("rank", "mean step", "step excess", "arrival lateness", "times last", "slow step", "late arrival"),
                    ("n", "ns", "pct", "ns", "n", "flag", "flag"),
                )
                parts.append(
                    table(
                        "table-stragglers",
                        h,
                        [
                            row(
                                r,
                                r["rank"],
                                r["step_mean_ns"],
                                r["step_excess_pct"],
                                r["arrival_late_ns"],
                                r["times_last"],
                                r["slow_step"],
                                r["late_arrival"],
                            )
                            for r in rows
                        ],
                        k,
                    )
                )
        if len(parts) > (1 if shared else 0):
            self.add("fleet", "Ranks: step time, collective skew and stragglers", *parts)


def render(src, title=None):
    """The report for an opened trace (tracecols.open) or a tc.Lake, as one HTML string."""
    from ..lake import Lake

    is_lake = isinstance(src, Lake)
    rep = _Report(src, is_lake)
    for step in (
        rep.inputs,
        rep.timeline,
        rep.top,
        rep.classes,
        rep.roofline,
        rep.critical_path,
        rep.stacks,
        rep.memory,
        rep.over_time,
        rep.fleet,
    ):
        step()
    origin = getattr(src, "origin", "")
    title = title or f"tracecols report: {os.path.basename(str(origin).rstrip('/')) or origin}"
    n = len(src.traces) if is_lake else 1
    sub = (
        f"{'lake of ' + str(n) + ' traces' if is_lake else 'trace'} {origin} · tracecols {__version__} · "
        f"{datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}"
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><script>{HEAD_JS}</script><style>{CSS}</style></head><body>"
        f"<header><h1>{_e(title)}</h1><p>{_e(sub)}</p></header><main>"
        + "".join(rep.sections)
        + f'</main><div id="tc-check"></div><script>{JS}</script></body></html>'
    )


def write(source, out_path, title=None, capture=None):
    """Open SOURCE (trace file or lake directory; `capture`: its graph capture traces),
    render the report and write it; returns the path."""
    from ..trace import open_any as open_trace

    return save(open_trace(source, capture=capture), out_path, title)


def save(src, out_path, title=None):
    """Render the report of an open Trace or Lake and write it atomically; returns the path."""
    from ..store.atomic import atomic_output

    out_path = os.path.abspath(str(out_path))
    with atomic_output(out_path) as f:
        f.write(render(src, title=title).encode("utf-8"))
    return out_path
