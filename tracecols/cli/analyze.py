"""`tracecols analyze SOURCE [-o DIR]`: run every analysis, save them as Parquet, print a summary."""

import json
import os
import sys
import time
from typing import Any

from ..errors import Unsupported
from ..face import finding_thresholds
from ..printable import MESSAGE, printable
from ..report.notes import graph_notes, headline_lines
from ..report.units import fmt_ns as _ns
from ..report.units import fmt_pct as _pct
from ..store import parquet
from ..store.atomic import scratch_dir
from ..trace import Trace, small_for_summary
from ..trace import open_any as open_trace
from ..trace import write as write_trace
from . import flags
from .sources import expand
from .table import Col, text, write


def _table(out, title, header, rows, widths):
    """A summary table: the first column and those of negative width on the left, the others right."""
    cols = [Col(h, text, abs(w), right=i > 0 and w > 0) for i, (h, w) in enumerate(zip(header, widths))]
    write(out, title, cols, rows)


# What summary() reads: without -o, the ingest writes only these (and what they read).
SUMMARY_VIEWS = [
    "findings",
    "headline",
    "gpu_timeline",
    "kernel_stats",
    "top_ops",
    "graph_replay_share",
    "idle_gaps",
    "optimizable_ops",
]


_OP_COLUMNS = ["trace_id", "name", "parent_module", "count", "gpu_ns", "share_pct", "cpu_self_ns"]


def top_ops(trace, top):
    """The first `top` ops of each trace, then one `(other ops)` row for the rest and the
    `(no op)` row: shares that add up to the GPU busy time. The `(other ops)` row is the rest_
    columns of the view's op ranked `top` (the ops below it), or of the first op with its own
    values added when no op is shown."""
    import polars as pl

    f = trace.frame("top_ops")
    n = max(int(top), 0)
    ops = f.filter(pl.col("op_rank").is_not_null())
    if n:
        cut = ops.filter(pl.col("op_rank") == n, pl.col("rest_count") > 0)
        other = cut.select(
            "trace_id",
            count="rest_count",
            gpu_ns="rest_gpu_ns",
            share_pct="rest_share_pct",
            cpu_self_ns="rest_cpu_self_ns",
        )
    else:
        other = ops.filter(pl.col("op_rank") == 1).select(
            "trace_id",
            count=pl.col("count") + pl.col("rest_count"),
            gpu_ns=pl.col("gpu_ns") + pl.col("rest_gpu_ns"),
            share_pct=pl.col("share_pct") + pl.col("rest_share_pct"),
            cpu_self_ns=pl.col("cpu_self_ns") + pl.col("rest_cpu_self_ns"),
        )
    other = other.with_columns(
        name=pl.lit("(other ops)"), parent_module=pl.lit(None, pl.String), order=pl.lit(1), op_rank=pl.lit(None, pl.Int64)
    )
    parts = [
        ops.filter(pl.col("op_rank") <= n).with_columns(order=pl.lit(0)),
        other,
        f.filter(pl.col("op_rank").is_null()).with_columns(order=pl.lit(2)),  # (no op)
    ]
    rows = pl.concat([p.select(*_OP_COLUMNS, "order", "op_rank") for p in parts], how="vertical_relaxed")
    return rows.sort("trace_id", "order", "op_rank", nulls_last=True).select(_OP_COLUMNS)


def _gpu_timeline(trace, top):
    """A trace's per-device rows only when it has several devices (else they repeat the trace's)."""
    import polars as pl

    f = trace.frame("gpu_timeline")
    several = pl.col("device").count().over("trace_id") > 1
    return f.filter(pl.col("device").is_null() | several).sort("trace_id", "device", nulls_last=[True, False])


def _first(view, by, descending):
    """The first `top` rows of `view` sorted by the columns `by` (nulls last, as SQL sorts them)."""

    def rows(trace, top):
        f = trace.frame(view)
        return f.sort(by, descending=descending, nulls_last=True).head(max(int(top), 0))

    return rows


# section -> (the view it shows, its rows given the trace and the rows per table); a section
# whose view is missing is left out
_SECTIONS = {
    "headline": ("headline", lambda trace, top: trace.frame("headline")),
    "gpu_timeline": ("gpu_timeline", _gpu_timeline),
    "top_kernels": ("kernel_stats", _first("kernel_stats", ["sum_ns", "name"], [True, False])),
    "top_ops": ("top_ops", top_ops),
    "idle_gaps": ("idle_gaps", _first("idle_gaps", ["gap_ns", "trace_id", "uid"], [True, False, False])),
    # the best-scoring overall: a lake or a multi-GPU trace ranks each device separately
    "optimizable_ops": (
        "optimizable_ops",
        _first("optimizable_ops", ["score", "trace_id", "device", "uid"], [True, False, False, False]),
    ),
}


def summary_data(trace, top=10, thresholds=None):
    """The summary as data: {section: [row dicts]} in the order it prints, plus `notes` (lines).
    `findings` leads: what to fix first (`thresholds`: {rule: value} for the rules' own)."""
    names = trace.tables
    out = {}
    if "findings" in names:
        out["findings"] = trace.findings(thresholds).head(max(int(top), 0)).to_dicts()
    for section, (view, rows) in _SECTIONS.items():
        if view in names:
            out[section] = rows(trace, top).to_dicts()
    out["notes"] = graph_notes(trace)
    return out


def _findings(out, findings):
    """The summary's "What to fix first" table (the `findings` view's first rows)."""
    if not findings:
        return
    rows = [
        (
            r["severity"],
            f"{r['rule']} · {r['kind']}" if r["kind"] else r["rule"],
            "-" if r["stake_ns"] is None else _ns(r["stake_ns"]),
            _pct(r["stake_pct"]),
            r["summary"],
            r["remedy"],
        )
        for r in findings
    ]
    _table(
        out,
        "What to fix first (time at stake, % of the GPU span; findings of different rules can count the same time)",
        ("severity", "finding", "at stake", "%", "what", "remedy"),
        rows,
        (8, -28, 11, 6, -70, -70),
    )


def summary(trace, top=10, out=None, thresholds=None):
    """The terminal summary: headline and warnings, what to fix first, GPU timeline, top kernels,
    top ops, worst idle gaps, optimizable ops."""
    out = out or sys.stdout
    d = summary_data(trace, top, thresholds)
    rows: list[tuple[Any, ...]]  # each table's rows, one after the other
    for line in headline_lines(d.get("headline", [])):
        out.write(printable(line) + "\n")
    _findings(out, d.get("findings"))
    if "gpu_timeline" in d:
        rows = [
            (
                f"trace {r['trace_id']}" + ("" if r["device"] is None else f" dev {r['device']}"),
                _ns(r["total_ns"]),
                _pct(r["busy_pct"]),
                _pct(r["computation_pct"]),
                _pct(r["exposed_comm_pct"]),
                _pct(r["exposed_memcpy_pct"]),
                _pct(r["idle_pct"]),
            )
            for r in d["gpu_timeline"]
        ]
        _table(
            out,
            "GPU timeline (% of the span from first to last device event)",
            ("scope", "span", "busy", "compute", "exp.comm", "exp.memcpy", "idle"),
            rows,
            (18, 12, 7, 8, 8, 10, 7),
        )
    if "top_kernels" in d:
        rows = [
            (r["name"], r["device"], r["stream"], r["count"], _ns(r["sum_ns"]), _ns(r["mean_ns"]), _pct(r["time_pct"]))
            for r in d["top_kernels"]
        ]
        _table(
            out,
            "Top kernels by total time",
            ("kernel", "dev", "stream", "count", "total", "mean", "share"),
            rows,
            (60, 4, 6, 7, 12, 12, 6),
        )
    for line in d["notes"]:
        out.write(f"\n{printable(line)}\n")
    if "top_ops" in d:
        rows = [
            (
                r["name"],
                r["parent_module"] or "-",
                r["count"] if r["count"] is not None else "",
                _ns(r["gpu_ns"]),
                _pct(r["share_pct"]),
                _ns(r["cpu_self_ns"]) if r["count"] is not None else "",
            )
            for r in d["top_ops"]
        ]
        _table(
            out,
            "Top ops by GPU time (kernels they launched directly; shares of GPU busy time)",
            ("op", "module", "count", "GPU time", "share", "CPU self"),
            rows,
            (44, -24, 7, 12, 6, 12),
        )
    if "idle_gaps" in d:
        rows = [(r["name"], r["device"], r["stream"], _ns(r["gap_ns"]), r["cause"], r["uid"]) for r in d["idle_gaps"]]
        _table(
            out,
            "Worst idle gaps (before the kernel named)",
            ("next kernel", "dev", "stream", "gap", "cause", "uid"),
            rows,
            (50, 4, 6, 12, -11, 10),
        )
    if "optimizable_ops" in d:
        rows = [
            (
                r["name"],
                r["trace_id"],
                r["device"],
                f"{r['score']:.2f}",
                _pct(r["idle_pct"]),
                _ns(r["self_ns"]),
                r["source"] or "-",
            )
            for r in d["optimizable_ops"]
        ]
        _table(
            out,
            "Optimizable ops (device queue draining; idle fraction and self time, z-scored per device)",
            ("op", "trace", "dev", "score", "idle", "self", "source"),
            rows,
            (36, 5, 4, 6, 6, 11, -50),
        )


def summary_json(trace, top=10, out=None, thresholds=None):
    """The summary as one JSON document: times in ns, shares in % (0-100), as in the views."""
    out = out or sys.stdout
    json.dump(summary_data(trace, top, thresholds), out, indent=1, default=str)
    out.write("\n")


def register(sub):
    s = sub.add_parser("analyze", help="run every analysis, write each as Parquet (-o), print a summary")
    s.add_argument(
        "source", nargs="+", help="trace files (path, URL, quoted glob, - for standard input) or a tracecols output directory"
    )
    s.add_argument("-o", "--output", help="directory for the analyses' Parquet files")
    s.add_argument("--top", type=int, default=10, help="rows per summary table (default 10)")
    s.add_argument(
        "--format",
        choices=["text", "json"],
        default="text",
        help="the summary as terminal tables (default) or as one JSON document, for scripts and CI",
    )
    flags.capture(s)
    flags.rule_thresholds(s)
    flags.keep_secrets(s)
    s.set_defaults(func=analyze)


def analyze(args):
    known = finding_thresholds() if args.rule_threshold else []  # read from the sql/ files: only when asked
    for rule, _ in args.rule_threshold:
        if rule not in known:
            raise Unsupported("--rule-threshold", f"no finding rule with a threshold named {rule!r}; rules: {', '.join(known)}")
    args.source = expand(args.source)
    if not any(os.path.isdir(str(s)) for s in args.source):
        return _analyze_trace(args)
    t = open_trace(*args.source, capture=args.capture, keep_secrets=args.keep_secrets)
    _note_unknown_devices(t, args)
    if args.output:
        t0 = time.perf_counter()
        if isinstance(t, Trace):  # a saved trace: what -o of its trace file writes (Trace.save)
            out, what = t.save(args.output), f"{len(t.tables)} tables and analyses"
        else:  # a lake holds its base tables already: its analyses only
            tables, _ = t.analyses()
            out, what = parquet.write_dir(args.output, tables, _analyses_manifest(t, tables)), f"{len(tables)} analyses"
        _say(args, f"wrote {what} to {out} ({time.perf_counter() - t0:.2f} s)")
    _print_summary(t, args)
    return 0


def _analyses_manifest(t, tables):
    return parquet.manifest(tables, t.inputs, kind="analyses", secrets_redacted=t.secrets_redacted)


def _analyze_trace(args):
    """With -o, trace files go through the streaming ingest (memory bounded whatever their size)
    into it, every analysis written. Without, small ones are opened as `tracecols.open` opens
    them and only the analyses the summary shows are computed, each once; bigger ones are
    streamed into a temporary directory where only those are written (in the same bounded
    memory, below what they would take in memory)."""
    if not args.output and small_for_summary(*args.source):
        t = open_trace(*args.source, capture=args.capture or None, keep_secrets=args.keep_secrets)
        _note_unknown_devices(t, args)
        t.compute(SUMMARY_VIEWS)
        _print_summary(t, args)
        t.close()
        return 0
    with scratch_dir() as tmp:
        out = args.output or os.path.join(tmp, "out")
        t0 = time.perf_counter()
        write_trace(
            *args.source,
            out=out,
            views=True if args.output else SUMMARY_VIEWS,
            capture=args.capture or None,
            keep_secrets=args.keep_secrets,
        )
        t = open_trace(out, keep_secrets=args.keep_secrets, fresh=True)
        _note_unknown_devices(t, args)
        if args.output:
            written = len(parquet.read_manifest(out)["tables"])
            _say(args, f"wrote {written} tables and analyses to {out} ({time.perf_counter() - t0:.2f} s)")
        _print_summary(t, args)
        t.close()  # before the temporary directory goes
    return 0


def _print_summary(t, args):
    (summary_json if args.format == "json" else summary)(t, top=args.top, thresholds=dict(args.rule_threshold) or None)


def _say(args, line):
    if not args.quiet:
        print(f"tracecols: {printable(line, MESSAGE)}", file=sys.stderr)


def _note_unknown_devices(t, args):
    for trace_id, dev, name in t.assumed_devices():
        _say(
            args,
            f"note: device {dev} of trace {trace_id} is not in its deviceProperties; taken as {name}, "
            f"the only device type listed (op_perf.device_model_source says so)",
        )
    for name in t.unknown_devices():
        _say(args, f"note: device {name!r} is not in the device peak table; op_perf's % of peak columns are null for it")
