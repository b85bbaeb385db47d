"""`tracecols diff A B [--by kernel|op|callpath] [--by-device] [-o DIR]`: what changed between two traces."""

import sys
from dataclasses import replace

# polars is imported in the functions that use it: the CLI's parser loads this module for
# every command, and `tracecols sql` should not pay for it.
from ..errors import Unsupported
from ..printable import printable
from ..report.units import column_format, fmt_ns, fmt_number, fmt_pct, fmt_tflops
from ..store import parquet
from ..trace import open_any as open_trace
from . import flags
from .table import Col, render, text

KINDS = ("kernel", "op", "callpath")
FILES = {"kernel": "diff_kernels", "op": "diff_ops", "callpath": "diff_callpaths"}


def _opened(source, capture, keep_secrets):
    t = open_trace(source, capture=capture, keep_secrets=keep_secrets)
    if "slices" not in t.tables or "kernels" not in t.tables:
        raise Unsupported(source, "diff needs a trace (or a tracecols output directory of one)")
    return t


def compute(a, b, kinds=KINDS, captures=(), by_device=False, keep_secrets=False):
    """Open the two traces (`captures`: no capture folder, one for both, or A's and B's) and
    compare them (kernels by name, or by device and name with `by_device`)."""
    if len(captures) > 2:
        raise Unsupported("--capture", "give it once (both traces) or twice (A's, then B's)")
    cap = list(captures) * (2 if len(captures) == 1 else 1) or [None, None]
    return _opened(a, cap[0], keep_secrets).compare(_opened(b, cap[1], keep_secrets), kinds, by_device)


def _signed(fmt):
    """A change: `+` before a growth, as the formatter writes a drop."""
    return lambda v: ("+" if v is not None and v > 0 else "") + fmt(v)


def _pct_of_peak(v):
    """A % of peak, or `>peak?` above 100: no device runs above its peak, so such a value says
    the FLOPs/bytes model or the data is wrong, and is not printed as a number."""
    return ">peak?" if v is not None and v > 100 else fmt_pct(v)


def terminal(frame, kind, top):
    """The first `top` rows of a comparison as (columns, rows) of the CLI's table."""
    f = frame.head(top)
    ns, pct, num = (Col("", fmt_ns, right=True), Col("", fmt_pct, right=True), Col("", fmt_number, right=True))
    spec = [("status", Col("status", text))]
    if kind == "kernel":
        if "device" in frame.columns:
            spec.append(("device", replace(num, header="dev")))
        else:
            spec += [("devices_a", Col("dev A", text, 12)), ("devices_b", Col("dev B", text, 12))]
        spec += [
            ("name", Col("name", text, 60)),
            ("count_a", replace(num, header="n A")),
            ("count_b", replace(num, header="n B")),
            ("gpu_ns_a", replace(ns, header="GPU A")),
            ("gpu_ns_b", replace(ns, header="GPU B")),
            ("delta_gpu_ns", replace(ns, header="Δ GPU", fmt=_signed(fmt_ns))),
            ("delta_gpu_pct", replace(pct, header="Δ %", fmt=_signed(fmt_pct))),
        ]
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
    else:
        key = "name" if kind == "op" else "callpath"
        spec += [
            (key, Col(key, text, 70, keep="end" if kind == "callpath" else "start")),
            ("count_a", replace(num, header="n A")),
            ("count_b", replace(num, header="n B")),
            ("gpu_ns_a", replace(ns, header="GPU A")),
            ("gpu_ns_b", replace(ns, header="GPU B")),
            ("delta_gpu_ns", replace(ns, header="Δ GPU", fmt=_signed(fmt_ns))),
            ("host_ns_a", replace(ns, header="host A")),
            ("host_ns_b", replace(ns, header="host B")),
            ("delta_host_ns", replace(ns, header="Δ host", fmt=_signed(fmt_ns))),
        ]
    return [c for _, c in spec], f.select([k for k, _ in spec]).rows()


def diff(args):
    kinds = KINDS if args.output else (args.by,)
    res = compute(args.a, args.b, kinds, args.capture, args.by_device, args.keep_secrets)
    frame = res[args.by]
    n_a = (frame["status"] == "only in A").sum()
    n_b = (frame["status"] == "only in B").sum()
    out = sys.stdout
    out.write(f"A  {printable(args.a)}\nB  {printable(args.b)}\n")
    how = {
        "kernel": " by device and name" if args.by_device else " by name, all devices together",
        "op": " by name",
        "callpath": "",
    }[args.by]
    out.write(
        f"{args.by}s{how}: {frame.height} keys, {n_a} only in A, {n_b} only in B, {frame.height - n_a - n_b} in both; "
        f"GPU time A {fmt_ns(frame['gpu_ns_a'].sum())}, B {fmt_ns(frame['gpu_ns_b'].sum())}"
        f" (sorted by |Δ GPU time|, top {min(args.top, frame.height)})\n"
    )
    cols, rows = terminal(frame, args.by, args.top)
    out.write(render(cols, rows))
    if args.output:
        tables = {FILES[k]: res[k].to_arrow() for k in KINDS}
        parquet.write_dir(args.output, tables, parquet.manifest(tables, layout="diff", a=str(args.a), b=str(args.b)))
        out.write(f"wrote {args.output}/ ({', '.join(f + '.parquet' for f in sorted(tables))})\n")
    return 0


def register(sub):
    s = sub.add_parser("diff", help="compare two traces: kernels, ops or call paths, by change in GPU time")
    s.add_argument("a", help="trace A (file, URL or tracecols output directory)")
    s.add_argument("b", help="trace B")
    s.add_argument("--by", choices=KINDS, default="kernel", help="what to compare on screen (default kernel)")
    s.add_argument(
        "--by-device", action="store_true", help="match kernels by device and name (default: by name, summed over devices)"
    )
    s.add_argument("-o", "--output", help="write all three comparisons as Parquet into this directory")
    s.add_argument("--top", type=int, default=30, help="rows shown on screen (default 30)")
    s.add_argument(
        "--capture",
        metavar="DIR",
        action="append",
        default=[],
        help="graph capture traces: once for both traces, or twice (A's, then B's)",
    )
    flags.keep_secrets(s)
    s.set_defaults(func=diff)
