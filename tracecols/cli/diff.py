"""`tracecols diff A B [--by kernel|op|callpath] [--by-device] [-o DIR]`: what changed between two traces."""

import sys

# polars is imported in the functions that use it: the CLI's parser loads this module for
# every command, and `tracecols sql` should not pay for it.
from ..errors import Unsupported
from ..store import parquet
from ..trace import open as open_trace
from . import flags

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


def _ms(col):
    import polars as pl

    return (pl.col(col) / 1e6).round(3)


def _pct_of_peak(col):
    """A % of peak to one decimal, or `>peak?` above 100: no device runs above its peak, so such
    a value says the FLOPs/bytes model or the data is wrong, and is not printed as a number."""
    import polars as pl

    c = pl.col(col)
    return pl.when(c > 100).then(pl.lit(">peak?")).otherwise(c.round(1).cast(pl.String)).alias(col)


def _short(col, width, left=False):
    import polars as pl

    c = pl.col(col).fill_null("")
    cut = (pl.lit("…") + c.str.slice(-(width - 1))) if left else (c.str.slice(0, width - 1) + pl.lit("…"))
    return pl.when(c.str.len_chars() > width).then(cut).otherwise(c).alias(col)


def terminal(frame, kind, top):
    import polars as pl

    f = frame.head(top)
    if kind == "kernel":
        where = (
            [pl.col("device")]
            if "device" in frame.columns
            else [pl.col("devices_a").alias("dev A"), pl.col("devices_b").alias("dev B")]
        )
        cols = [
            pl.col("status"),
            *where,
            _short("name", 60),
            pl.col("count_a").alias("n A"),
            pl.col("count_b").alias("n B"),
            _ms("gpu_ns_a").alias("GPU ms A"),
            _ms("gpu_ns_b").alias("GPU ms B"),
            _ms("delta_gpu_ns").alias("Δ ms"),
            pl.col("delta_gpu_pct").round(1).alias("Δ %"),
        ]
        if frame["flops_a"].is_not_null().any() or frame["flops_b"].is_not_null().any():
            cols += [
                pl.col("tflops_per_s_a").round(2).alias("TFLOP/s A"),
                pl.col("tflops_per_s_b").round(2).alias("TFLOP/s B"),
                _pct_of_peak("flops_pct_of_peak_a").alias("%peak A"),
                _pct_of_peak("flops_pct_of_peak_b").alias("%peak B"),
            ]
        if frame["bytes_a"].is_not_null().any() or frame["bytes_b"].is_not_null().any():
            cols += [
                pl.col("tb_per_s_a").round(3).alias("TB/s A"),
                pl.col("tb_per_s_b").round(3).alias("TB/s B"),
                _pct_of_peak("bandwidth_pct_of_peak_a").alias("%bw A"),
                _pct_of_peak("bandwidth_pct_of_peak_b").alias("%bw B"),
            ]
    else:
        key = "name" if kind == "op" else "callpath"
        cols = [
            pl.col("status"),
            _short(key, 70, left=kind == "callpath"),
            pl.col("count_a").alias("n A"),
            pl.col("count_b").alias("n B"),
            _ms("gpu_ns_a").alias("GPU ms A"),
            _ms("gpu_ns_b").alias("GPU ms B"),
            _ms("delta_gpu_ns").alias("Δ GPU ms"),
            _ms("host_ns_a").alias("host ms A"),
            _ms("host_ns_b").alias("host ms B"),
            _ms("delta_host_ns").alias("Δ host ms"),
        ]
    return f.select(cols)


def diff(args):
    kinds = KINDS if args.output else (args.by,)
    res = compute(args.a, args.b, kinds, args.capture, args.by_device, args.keep_secrets)
    frame = res[args.by]
    n_a = (frame["status"] == "only in A").sum()
    n_b = (frame["status"] == "only in B").sum()
    import polars as pl

    out = sys.stdout
    out.write(f"A  {args.a}\nB  {args.b}\n")
    how = {
        "kernel": " by device and name" if args.by_device else " by name, all devices together",
        "op": " by name",
        "callpath": "",
    }[args.by]
    out.write(
        f"{args.by}s{how}: {frame.height} keys, {n_a} only in A, {n_b} only in B, {frame.height - n_a - n_b} in both; "
        f"GPU time A {frame['gpu_ns_a'].sum() / 1e6:.3f} ms, B {frame['gpu_ns_b'].sum() / 1e6:.3f} ms"
        f" (sorted by |Δ GPU time|, top {min(args.top, frame.height)})\n"
    )
    with pl.Config(
        tbl_rows=-1,
        tbl_cols=-1,
        tbl_width_chars=250,
        fmt_str_lengths=80,
        tbl_hide_dataframe_shape=True,
        tbl_hide_column_data_types=True,
        float_precision=3,
    ):
        out.write(str(terminal(frame, args.by, args.top)) + "\n")
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
