"""`tracecols compare A B` (also `tracecols diff`): what changed between two runs, and whether it
is beyond noise; `--fail-if RULE` turns it into a CI gate (exit 1 on a breach)."""

import json
import sys
from dataclasses import replace

# polars is imported in the functions that use it: the CLI's parser loads this module for
# every command, and `tracecols sql` should not pay for it.
from ..errors import Unsupported
from ..face import Face
from ..printable import escape_json, printable
from ..report.units import column_format, fmt_ns, fmt_number, fmt_pct, fmt_tflops
from ..store import parquet
from ..trace import open_any as open_trace
from . import flags
from .sources import expand
from .table import Col, render, text

KINDS = ("step", "phase", "kernel_class", "kernel", "op", "shape", "module", "callpath", "finding")
SHOWN = ("kernel", "kernel_class", "phase", "op", "shape", "module", "callpath")  # --by: a table of one of these
FILES = {
    "step": "diff_steps",
    "kernel_class": "diff_kernel_classes",
    "kernel": "diff_kernels",
    "op": "diff_ops",
    "shape": "diff_op_shapes",
    "module": "diff_modules",
    "phase": "diff_phases",
    "finding": "diff_findings",
    "callpath": "diff_callpaths",
}


def _opened(source, capture, keep_secrets, run=None) -> Face:
    t = open_trace(*expand([source], command="compare"), capture=capture, keep_secrets=keep_secrets, run=run)
    if "slices" not in t.tables or "kernels" not in t.tables:
        raise Unsupported(source, "compare needs traces (or a tracecols output directory or lake of them)")
    return t


def compute(a, b, kinds=KINDS, captures=(), by_device=False, keep_secrets=False, min_change_pct=None, runs=(None, None)):
    """Open the two sides (each a trace, a quoted glob of traces, a saved directory or a lake;
    `captures`: no capture folder, one for both, or A's and B's; `runs`: of a lake side, only
    that run's traces) and compare them."""
    if len(captures) > 2:
        raise Unsupported("--capture", "give it once (both sides) or twice (A's, then B's)")
    cap = list(captures) * (2 if len(captures) == 1 else 1) or [None, None]
    side_a = _opened(a, cap[0], keep_secrets, runs[0])
    return side_a.compare(_opened(b, cap[1], keep_secrets, runs[1]), kinds, by_device, min_change_pct)


def _signed(fmt):
    """A change: `+` before a growth, as the formatter writes a drop."""
    return lambda v: ("+" if v is not None and v > 0 else "") + fmt(v)


def _pct_of_peak(v):
    """A % of peak, or `>peak?` above 100: no device runs above its peak, so such a value says
    the FLOPs/bytes model or the data is wrong, and is not printed as a number."""
    return ">peak?" if v is not None and v > 100 else fmt_pct(v)


def _beyond(v):
    """The noise verdict of a row: `yes`, `no`, or `?` where a side has one sample only."""
    return "?" if v is None else ("yes" if v else "no")


def _noise_cols():
    return [
        ("shift_pct", Col("shift", _signed(fmt_pct), right=True)),
        ("q_value", Col("q", lambda v: "-" if v is None else f"{v:.3g}", right=True)),
        ("significant", Col("beyond noise", _beyond)),
    ]


def terminal(frame, kind, top):
    """The first `top` rows of a comparison as (columns, rows) of the CLI's table."""
    f = frame.head(top)
    ns, pct, num = (Col("", fmt_ns, right=True), Col("", fmt_pct, right=True), Col("", fmt_number, right=True))
    spec = [("status", Col("status", text))]
    gpu = [  # every keyed comparison: its events and their GPU time on each side
        ("count_a", replace(num, header="n A")),
        ("count_b", replace(num, header="n B")),
        ("gpu_ns_a", replace(ns, header="GPU A")),
        ("gpu_ns_b", replace(ns, header="GPU B")),
        ("delta_gpu_ns", replace(ns, header="Δ GPU", fmt=_signed(fmt_ns))),
    ]
    if kind == "kernel":
        if "device" in frame.columns:
            spec.append(("device", replace(num, header="dev")))
        else:
            spec += [("devices_a", Col("dev A", text, 12)), ("devices_b", Col("dev B", text, 12))]
        spec += [("name", Col("name", text, 60)), *gpu, ("delta_gpu_pct", replace(pct, header="Δ %", fmt=_signed(fmt_pct)))]
        if frame["flops_a"].is_not_null().any() or frame["flops_b"].is_not_null().any():
            spec += [
                ("tflops_per_s_a", Col("rate A", fmt_tflops, right=True)),
                ("tflops_per_s_b", Col("rate B", fmt_tflops, right=True)),
                ("flops_pct_of_peak_a", replace(pct, header="%peak A", fmt=_pct_of_peak)),
                ("flops_pct_of_peak_b", replace(pct, header="%peak B", fmt=_pct_of_peak)),
            ]
        if frame["bytes_a"].is_not_null().any() or frame["bytes_b"].is_not_null().any():
            spec += [
                ("tb_per_s_a", Col("bw A", column_format("tb_per_s"), right=True)),
                ("tb_per_s_b", Col("bw B", column_format("tb_per_s"), right=True)),
                ("bandwidth_pct_of_peak_a", replace(pct, header="%bw A", fmt=_pct_of_peak)),
                ("bandwidth_pct_of_peak_b", replace(pct, header="%bw B", fmt=_pct_of_peak)),
            ]
    elif kind == "kernel_class":
        spec += [
            ("kernel_class", Col("class", text, 30)),
            *gpu,
            ("delta_gpu_pct", replace(pct, header="Δ %", fmt=_signed(fmt_pct))),
        ]
    else:
        if kind == "shape":
            spec += [("name", Col("name", text, 40)), ("input_dims", Col("input shapes", text, 40))]
        else:
            key = {"op": "name", "module": "module", "phase": "phase", "callpath": "callpath"}[kind]
            spec.append((key, Col(key, text, 70, keep="end" if kind == "callpath" else "start")))
        spec += [
            *gpu,
            ("host_ns_a", replace(ns, header="host A")),
            ("host_ns_b", replace(ns, header="host B")),
            ("delta_host_ns", replace(ns, header="Δ host", fmt=_signed(fmt_ns))),
        ]
    spec += _noise_cols()
    return [c for _, c in spec], f.select([k for k, _ in spec]).rows()


def _steps_table(steps):
    ns = Col("", fmt_ns, right=True)
    spec = [
        ("metric", Col("per step", text)),
        ("steps_a", Col("steps A", fmt_number, right=True)),
        ("steps_b", Col("steps B", fmt_number, right=True)),
        ("per_step_ns_a", replace(ns, header="A")),
        ("per_step_ns_b", replace(ns, header="B")),
        ("spread_ns_a", replace(ns, header="± A")),
        ("spread_ns_b", replace(ns, header="± B")),
        ("shift_ns", replace(ns, header="shift", fmt=_signed(fmt_ns))),
        ("ci_low_ns", replace(ns, header="95% CI low", fmt=_signed(fmt_ns))),
        ("ci_high_ns", replace(ns, header="high", fmt=_signed(fmt_ns))),
    ] + _noise_cols()
    return render([c for _, c in spec], steps.select([k for k, _ in spec]).rows(), "steps")


def _findings_table(f):
    """The findings that appeared in B or disappeared from A, then those in both."""
    ns = Col("", fmt_ns, right=True)
    spec = [
        ("status", Col("finding", text)),
        ("rule", Col("rule", text)),
        ("kind", Col("kind", text)),
        *([("device", Col("dev", lambda v: "-" if v is None else str(v), right=True))] if "device" in f.columns else []),
        ("stake_ns_a", replace(ns, header="at stake A")),
        ("stake_ns_b", replace(ns, header="at stake B")),
        ("delta_stake_ns", replace(ns, header="Δ", fmt=_signed(fmt_ns))),
        ("summary_b", Col("B (or A): what", text, 80)),
    ]
    rows = f.with_columns(summary_b=f["summary_b"].fill_null(f["summary_a"])).select([k for k, _ in spec]).rows()
    return render([c for _, c in spec], rows, "findings (docs/analyses.md): appeared, disappeared, in both")


def _significant(res, top):
    """The rows beyond noise of the keyed comparisons (gate.beyond_noise): the first `top`, and how many."""
    from .. import gate

    both = gate.beyond_noise(res).drop("significant")
    return both.head(top), both.height


def _significant_table(rows):
    ns = Col("", fmt_ns, right=True)
    cols = [
        Col("kind", text),
        Col("key", text, 60),
        replace(ns, header="A / step"),
        replace(ns, header="B / step"),
        replace(ns, header="shift", fmt=_signed(fmt_ns)),
        Col("shift %", _signed(fmt_pct), right=True),
        replace(ns, header="95% CI low", fmt=_signed(fmt_ns)),
        replace(ns, header="high", fmt=_signed(fmt_ns)),
        Col("q", lambda v: f"{v:.3g}", right=True),
    ]
    return render(cols, rows.rows(), "changes beyond noise")


def _json(args, res, breaches, unchecked):
    out = {
        "a": args.a,
        "b": args.b,
        "test": "Mann-Whitney U over per-step samples, Benjamini-Hochberg q-values; shift: Hodges-Lehmann, 95% CI",
        "comparisons": {k: res[k].to_dicts() for k in res},
        "breaches": [b.__dict__ for b in breaches],
        "unchecked": unchecked,
    }
    return json.dumps(out, default=str, allow_nan=False, ensure_ascii=False)


def compare(args):
    from .. import gate

    rules = gate.rules(args.fail_if)
    kinds: tuple[str, ...]
    if args.output or args.format == "json" or args.html:
        kinds = KINDS
    else:
        kinds = tuple(dict.fromkeys(("step", "finding", "phase", "kernel_class", "op", "kernel", args.by)))
        kinds += tuple(r.kind for r in rules if r.kind not in kinds)
    res = compute(
        args.a, args.b, kinds, args.capture, args.by_device, args.keep_secrets, args.min_change, (args.run_a, args.run_b)
    )
    breaches, unchecked = gate.check(rules, res)
    out = sys.stdout
    if args.format == "json":
        out.write(escape_json(_json(args, res, breaches, unchecked)) + "\n")
    else:
        _write_terminal(args, res, out)
        for line in unchecked:
            out.write(f"not checked  {printable(line)}\n")
        for b in breaches:
            out.write(
                f"BREACH  {printable(b.rule)}: {b.kind} {printable(b.key)} changed {b.change:+.2f}"
                f"{'pp' if b.rule.endswith('pp') else '%'} (q {b.q_value:.3g})\n"
            )
        if rules and not breaches:
            out.write(f"gate: {len(rules)} rule(s), no breach\n")
    if args.html:
        from ..report import comparison

        path = comparison.save(res, str(args.a), str(args.b), args.html)
        if args.format != "json":
            out.write(f"wrote {printable(path)}\n")
    if args.output:
        tables = {FILES[k]: res[k].to_arrow() for k in KINDS if k in res}
        parquet.write_dir(args.output, tables, parquet.manifest(tables, layout="diff", a=str(args.a), b=str(args.b)))
        if args.format != "json":
            out.write(f"wrote {args.output}/ ({', '.join(f + '.parquet' for f in sorted(tables))})\n")
    return 1 if breaches else 0


def _write_terminal(args, res, out):
    frame = res[args.by]
    n_a = (frame["status"] == "only in A").sum()
    n_b = (frame["status"] == "only in B").sum()
    out.write(f"A  {printable(args.a)}\nB  {printable(args.b)}\n")
    steps = res["step"]
    n_sa, n_sb = steps["steps_a"][0], steps["steps_b"][0]
    out.write(
        f"samples: {n_sa} step(s) of A, {n_sb} of B (ProfilerStep#N; a trace without steps is one sample). Beyond noise: "
        f"Mann-Whitney q < 0.05 and a shift of {args.min_change if args.min_change is not None else 2:g} % or more of A\n\n"
    )
    out.write(_steps_table(steps) + "\n")
    if "finding" in res:
        out.write(_findings_table(res["finding"]) + "\n")
    sig, n_sig = _significant(res, args.top)
    if n_sig:
        out.write(_significant_table(sig))
        if n_sig > sig.height:
            out.write(f"({n_sig - sig.height} more beyond noise)\n")
        out.write("\n")
    elif n_sa > 1 and n_sb > 1:
        out.write("no kernel class, op or kernel changed beyond noise\n\n")
    how = {
        "kernel": " by device and name" if args.by_device else " by name, all devices together",
        "kernel_class": "",
        "op": " by name",
        "shape": " (ops by name and input shapes)",
        "module": " (ops by the module they ran in)",
        "phase": " (ops by step phase: forward, backward, optimizer)",
        "callpath": "",
    }[args.by]
    out.write(
        f"{args.by}s{how}: {frame.height} keys, {n_a} only in A, {n_b} only in B, {frame.height - n_a - n_b} in both; "
        f"GPU time A {fmt_ns(frame['gpu_ns_a'].sum())}, B {fmt_ns(frame['gpu_ns_b'].sum())}"
        f" (sorted by |Δ GPU time|, top {min(args.top, frame.height)})\n"
    )
    cols, rows = terminal(frame, args.by, args.top)
    out.write(render(cols, rows))


def register(sub):
    s = sub.add_parser(
        "compare",
        aliases=["diff"],
        help="compare two runs: steps, kernel classes, ops, kernels, call paths; what changed beyond noise; a CI gate",
    )
    s.add_argument("a", help="side A: a trace (file or URL), a quoted glob of traces, a tracecols output directory or a lake")
    s.add_argument("b", help="side B, likewise")
    s.add_argument("--run-a", metavar="LABEL", help="side A is a lake: only its traces of this run (ingest --run)")
    s.add_argument("--run-b", metavar="LABEL", help="side B is a lake: only its traces of this run")
    s.add_argument("--by", choices=SHOWN, default="kernel", help="the comparison shown in full (default kernel)")
    s.add_argument(
        "--by-device", action="store_true", help="match kernels by device and name (default: by name, summed over devices)"
    )
    s.add_argument(
        "--fail-if",
        metavar="RULE",
        action="append",
        default=[],
        help="exit 1 when a change beyond noise breaks RULE, e.g. step_time:+3%%, op:aten::mm:+5%%, "
        "kernel_class:gemm:+5%%, idle:+2pp (repeatable; docs/diff.md)",
    )
    s.add_argument(
        "--min-change",
        type=float,
        metavar="PCT",
        help="the smallest shift, in %% of A's time per step, that counts as beyond noise (default 2)",
    )
    s.add_argument("--format", choices=("table", "json"), default="table", help="table (default) or json")
    s.add_argument("-o", "--output", help="write every comparison as Parquet into this directory")
    s.add_argument("--html", metavar="OUT.html", help="write the comparison as an HTML page (self-contained)")
    s.add_argument("--top", type=int, default=30, help="rows shown on screen (default 30)")
    s.add_argument(
        "--capture",
        metavar="DIR",
        action="append",
        default=[],
        help="graph capture traces: once for both sides, or twice (A's, then B's)",
    )
    flags.keep_secrets(s)
    s.set_defaults(func=compare)
