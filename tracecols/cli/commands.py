"""The subcommands. Each takes the parsed arguments and prints or writes its result."""

import json
import os
import sys

from ..errors import QueryError, SourceIOError
from ..face import check_read_only
from ..printable import escape, escape_json, printable
from ..report.units import fmt_bytes, fmt_ns
from ..trace import open as open_one
from ..trace import open_any as open_trace
from ..trace import reader
from . import flags
from .sources import expand
from .table import Col, frame_text, render, text


def info(args):
    import polars as pl

    t = open_trace(*expand(args.source), keep_secrets=args.keep_secrets)
    out = sys.stdout
    assumed = t.assumed_devices()
    categories = t.frame("event_categories")
    devices = t.frame("devices")
    for tr in t.frame("traces").sort("trace_id").iter_rows(named=True):
        meta = json.loads(tr["metadata"]) if tr["metadata"] else {}
        out.write(f"file         {printable(tr['path'])}\n")
        out.write(
            f"size         {fmt_bytes(tr['size_bytes'], '?')}{' (gzip)' if tr['gzip'] else ''}   sha256 {tr['sha256'][:16]}…\n"
        )
        out.write(f"events       {tr['n_events']:,}\n")
        out.write(f"time span    {fmt_ns(tr['span_ns'], '?')}   (first event at {tr['start_ns']} ns)\n")
        rank = "unknown" if tr["rank"] is None else f"{tr['rank']} (from {tr['rank_source']})"
        ws = "unknown" if tr["world_size"] is None else tr["world_size"]
        out.write(f"rank         {rank}   world size {ws}   backend {printable(tr['backend'] or '-', 80)}\n")
        out.write(f"schema       {printable(tr['schema_version'] or '-', 80)}\n")
        if not os.path.isdir(tr["path"]):
            out.write(f"reader       {reader()}\n")
        devs = devices.filter(pl.col("trace_id") == tr["trace_id"]).sort("device", nulls_last=True)
        if devs.height:
            names = devs.group_by("name", maintain_order=True).len()
            desc = ", ".join(f"{r['len']}x {r['name'] or '(no name)'}" for r in names.iter_rows(named=True))
            out.write(f"devices      {printable(desc)}\n")
        else:
            out.write("devices      none listed\n")
        for _, dev, name in (d for d in assumed if d[0] == tr["trace_id"]):
            out.write(
                f"assumed      device {dev} (ran work, not in deviceProperties) taken as {printable(name, 80)}: "
                "the only device type listed\n"
            )
        out.write(f"metadata     {printable(', '.join(sorted(meta)) or '-')}\n")
        hidden, in_events = t.redactions(tr["trace_id"])
        if hidden or in_events:
            out.write(
                f"secrets      {hidden + in_events} value(s) redacted ({hidden} in metadata, {in_events} in "
                f"events: tokens, passwords, keys); --keep-secrets keeps them\n"
            )
        if tr["warnings"]:
            for w in tr["warnings"]:
                out.write(f"warning      {printable(w)}\n")
        cats = categories.filter(pl.col("trace_id") == tr["trace_id"]).select("cat", "ph", "events", "total_dur_ns")
        cols = [
            Col("category", text, 60),
            Col("ph", text, 2),
            Col("events", lambda v: f"{v:,}", right=True),
            Col("total duration", lambda v: "" if v is None else fmt_ns(v), right=True),
        ]
        out.write("\n" + render(cols, cats.rows(), "events by category"))
        out.write("\n")


def sql(args):
    # the query is the last word: SOURCE takes every word before it
    sources, query = (args.source, None) if args.describe else (args.source[:-1], args.source[-1])
    if not sources:
        raise QueryError(query or "tracecols sql", "no query given (tracecols sql SOURCE… QUERY, or SOURCE… --describe VIEW)")
    if args.describe:
        return describe(open_trace(*expand(sources), keep_secrets=args.keep_secrets, capture=args.capture), args)
    args.query = query
    check_read_only(args.query, " ".join(sources))  # nothing may write to the inputs (or anywhere but -o)
    t = open_trace(*expand(sources), keep_secrets=args.keep_secrets, capture=args.capture)
    fmt = args.format
    if fmt == "parquet" and not args.output:
        raise SourceIOError("-o", "--format parquet needs -o FILE")
    if fmt == "table" and not args.output:  # the first rows only, as Arrow: the quick path needs no polars
        head = t.head(args.query, max(args.max_rows, 0) + 1)
        if head is not None:
            more = head.num_rows > args.max_rows
            sys.stdout.write(frame_text(head.slice(0, max(args.max_rows, 0)), more=more))
        return 0
    # a column CSV, JSON or a text table cannot hold comes as DuckDB's text of each value
    df = t.sql(args.query, text_for_files=fmt != "parquet")
    if df.width:  # a query without a statement (comments only) prints nothing
        emit(df, args.output, fmt)
    return 0


def describe(t, args):
    """`sql --describe VIEW`: what the view answers, then its columns (Face.describe)."""
    df = t.describe(args.describe)
    if args.output or args.format != "table":
        emit(df, args.output, args.format)
        return 0
    cols = [Col("column", text), Col("type", text), Col("unit", text), Col("meaning", text, width=160)]
    sys.stdout.write(render(cols, df.iter_rows(), f"{args.describe}: {t.answers(args.describe)}", empty=None))
    return 0


def emit(df, output, fmt):
    """A result frame to `output` (atomically) or to stdout, as table, csv, json or parquet
    (parquet only to a file)."""
    if output:
        _write_atomic(df, output, fmt)
    elif fmt == "parquet":
        raise SourceIOError("-o", "--format parquet needs -o FILE")
    elif fmt == "csv":
        flat = _flat(df)
        sys.stdout.write((_escaped(flat) if sys.stdout.isatty() else flat).write_csv())
    elif fmt == "json":
        sys.stdout.write(escape_json(df.write_ndjson()))
    else:
        sys.stdout.write(frame_text(df))


def _flat(df):
    """CSV has no lists or structs: such columns are written as their JSON text."""
    import polars as pl

    nested = [c for c, t in df.schema.items() if t.is_nested()]
    if not nested:
        return df
    return df.with_columns(
        pl.Series(c, [None if v is None else json.dumps(v, default=str) for v in df[c].to_list()], dtype=pl.String)
        for c in nested
    )


def _escaped(df):
    """CSV for a terminal: every text cell escaped (printable.py), so that the terminal shows
    the bytes of a name instead of obeying them. Into a pipe or a file CSV stays the data."""
    import polars as pl

    text_cols = [c for c, t in df.schema.items() if t == pl.String]
    return df.with_columns(
        pl.Series(c, [None if v is None else escape(v) for v in df[c].to_list()], dtype=pl.String) for c in text_cols
    )


def _write_atomic(df, path, fmt):

    from ..store.atomic import atomic_output
    from ..store.parquet import write_table

    with atomic_output(path) as f:
        if fmt == "parquet":
            write_table(f, df.to_arrow())
        elif fmt == "csv":
            _flat(df).write_csv(f)
        elif fmt == "json":
            f.write(escape_json(df.write_ndjson()).encode("utf-8"))
        else:
            f.write(frame_text(df).encode("utf-8"))


def tree(args):
    from ..errors import QueryError

    # one trace's tree: a lake is refused in one line (open_one)
    t = open_one(*expand([args.source], one=True, command="tree"), capture=args.capture, keep_secrets=args.keep_secrets)
    uid = args.uid
    if uid is None:
        import polars as pl

        named = (pl.col("trace_id") == args.trace_id) & (pl.col("name") == args.name)
        hits = t.frame("slices").filter(named).sort("ts_ns", "uid", nulls_last=True)
        if hits.height == 0:
            raise QueryError(args.source, f"no host event named {args.name!r}")
        uid = hits["uid"][0]
        if hits.height > 1:
            print(
                f"tracecols: {hits.height} events named {printable(args.name)}; showing the first (uid {uid}), "
                "pick another with --uid",
                file=sys.stderr,
            )
    if args.fields is None:
        fields = ("Input Dims", "Input type") if args.parents else ()
    else:
        fields = tuple(f.strip() for f in args.fields.split(",") if f.strip())
    if args.parents:
        t.tree.print_parents(uid, fields=fields, trace_id=args.trace_id)
    else:
        t.tree.print_subtree(uid, fields=fields, trace_id=args.trace_id)
    return 0


def register(sub):
    s = sub.add_parser("info", help="one screen about a trace: size, events by category, span, devices, rank")
    s.add_argument(
        "source",
        nargs="+",
        help="trace files (.json/.json.gz, path, URL, quoted glob, - for standard input) or a tracecols output directory",
    )
    flags.keep_secrets(s)
    s.set_defaults(func=info)

    s = sub.add_parser("sql", help="run DuckDB SQL over a trace's tables")
    s.add_argument(
        "source", nargs="+", help="trace files (path, URL, quoted glob, - for standard input) or a tracecols output directory"
    )
    s.add_argument(
        "query",
        nargs="?",
        help='SQL, e.g. "select cat, count(*) from events group by 1" (the last word before or after the options)',
    )
    s.add_argument(
        "--describe", metavar="VIEW", help="instead of a query: the columns of VIEW with their types, units and meaning"
    )
    s.add_argument("--format", choices=["table", "csv", "json", "parquet"], default="table")
    s.add_argument("-o", "--output", help="write the result to this file instead of stdout")
    s.add_argument("--max-rows", type=int, default=50, help="rows shown by --format table (default 50)")
    flags.capture(s)
    flags.keep_secrets(s)
    s.set_defaults(func=sql)

    s = sub.add_parser("tree", help="print the host call tree under an op (kernels under their launch calls)")
    s.add_argument("source", help="one trace file (- for standard input) or tracecols output directory")
    g = s.add_mutually_exclusive_group(required=True)
    g.add_argument("--uid", type=int, help="the event's uid (its position in traceEvents)")
    g.add_argument("--name", help="an op name, e.g. aten::convolution (its first instance is shown)")
    s.add_argument("--parents", action="store_true", help="print the chain of parents instead of the subtree")
    s.add_argument("--fields", default=None, help='comma-separated args to show per op, e.g. "Input Dims,Input type"')
    s.add_argument("--trace-id", type=int, default=0, help="which trace, when several were opened (default 0)")
    flags.capture(s)
    flags.keep_secrets(s)
    s.set_defaults(func=tree)
