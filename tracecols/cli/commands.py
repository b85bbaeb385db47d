"""The subcommands. Each takes the parsed arguments and prints or writes its result."""

import json
import os
import sys

from ..engine.connection import check_read_only
from ..errors import SourceIOError
from ..model.secrets import REDACTED, sql_redacted_count
from ..report.units import fmt_ns
from ..trace import open as open_trace
from ..trace import reader
from .sources import expand


def _human_bytes(n):
    if n is None:
        return "?"
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def info(args):
    t = open_trace(*expand(args.source), keep_secrets=args.keep_secrets)
    out = sys.stdout
    assumed = t.assumed_devices()
    for tr in t.sql("select * from traces order by trace_id").iter_rows(named=True):
        meta = json.loads(tr["metadata"]) if tr["metadata"] else {}
        out.write(f"file         {tr['path']}\n")
        out.write(
            f"size         {_human_bytes(tr['size_bytes'])}{' (gzip)' if tr['gzip'] else ''}   sha256 {tr['sha256'][:16]}…\n"
        )
        out.write(f"events       {tr['n_events']:,}\n")
        out.write(f"time span    {fmt_ns(tr['span_ns'], '?')}   (first event at {tr['start_ns']} ns)\n")
        rank = "unknown" if tr["rank"] is None else f"{tr['rank']} (from {tr['rank_source']})"
        ws = "unknown" if tr["world_size"] is None else tr["world_size"]
        out.write(f"rank         {rank}   world size {ws}   backend {tr['backend'] or '-'}\n")
        out.write(f"schema       {tr['schema_version'] or '-'}\n")
        if not os.path.isdir(tr["path"]):
            out.write(f"reader       {reader()}\n")
        devs = t.sql(
            f"select device, name, num_sms, total_global_mem_bytes from devices where trace_id = {tr['trace_id']} order by device"
        )
        if devs.height:
            names = devs.group_by("name", maintain_order=True).len()
            desc = ", ".join(f"{r['len']}x {r['name'] or '(no name)'}" for r in names.iter_rows(named=True))
            out.write(f"devices      {desc}\n")
        else:
            out.write("devices      none listed\n")
        for _, dev, name in (d for d in assumed if d[0] == tr["trace_id"]):
            out.write(
                f"assumed      device {dev} (ran work, not in deviceProperties) taken as {name}: the only device type listed\n"
            )
        out.write(f"metadata     {', '.join(sorted(meta)) or '-'}\n")
        hidden = (tr["metadata"] or "").count(REDACTED)  # distributedInfo is inside metadata
        marks = sql_redacted_count(t.arrow("select * from events limit 0").schema)
        in_events = t.sql(f"select coalesce(sum({marks}), 0)::BIGINT from events where trace_id = {tr['trace_id']}").item()
        if hidden or in_events:
            out.write(
                f"secrets      {hidden + in_events} value(s) redacted ({hidden} in metadata, {in_events} in "
                f"events: tokens, passwords, keys); --keep-secrets keeps them\n"
            )
        if tr["warnings"]:
            for w in tr["warnings"]:
                out.write(f"warning      {w}\n")
        # a negative dur (counted in the warnings above) adds nothing, as in every other sum
        cats = t.sql(f"""select coalesce(cat, '(none)') as cat, ph, count(*) as events,
                                sum(greatest(dur_ns, 0))::BIGINT as total_dur_ns
                         from events where trace_id = {tr["trace_id"]}
                         group by all order by events desc""")
        out.write("\nevents by category\n")
        width = max([len(c) for c in cats["cat"]] + [8])
        out.write(f"  {'category':<{width}}  ph  {'events':>10}  {'total duration':>16}\n")
        for r in cats.iter_rows(named=True):
            dur = fmt_ns(r["total_dur_ns"]) if r["total_dur_ns"] is not None else ""
            out.write(f"  {r['cat']:<{width}}  {r['ph'] or '-':<2}  {r['events']:>10,}  {dur:>16}\n")
        out.write("\n")


def sql(args):
    check_read_only(args.query, " ".join(args.source))  # nothing may write to the inputs (or anywhere but -o)
    t = open_trace(*expand(args.source), keep_secrets=args.keep_secrets, capture=args.capture)
    fmt = args.format
    if fmt == "parquet" and not args.output:
        raise SourceIOError("-o", "--format parquet needs -o FILE")
    if fmt == "table" and not args.output:  # DuckDB draws it: the quick path needs no polars
        t.show(args.query, args.max_rows)
        return 0
    # a column CSV, JSON or a text table cannot hold comes as DuckDB's text of each value
    df = t._engine.polars(args.query, text_for_files=fmt != "parquet")
    if df is not None:
        emit(df, args.output, fmt)
    return 0


def emit(df, output, fmt):
    """A result frame to `output` (atomically) or to stdout, as table, csv, json or parquet
    (parquet only to a file)."""
    if output:
        _write_atomic(df, output, fmt)
    elif fmt == "parquet":
        raise SourceIOError("-o", "--format parquet needs -o FILE")
    elif fmt == "csv":
        sys.stdout.write(_flat(df).write_csv())
    elif fmt == "json":
        sys.stdout.write(df.write_ndjson())
    else:
        sys.stdout.write(_table_text(df))


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


def _write_atomic(df, path, fmt):

    from ..store.atomic import atomic_output
    from ..store.parquet import write_table

    with atomic_output(path) as f:
        if fmt == "parquet":
            write_table(f, df.to_arrow())
        elif fmt == "csv":
            _flat(df).write_csv(f)
        elif fmt == "json":
            df.write_ndjson(f)
        else:
            f.write(_table_text(df).encode("utf-8"))


def _table_text(df):
    import polars as pl

    with pl.Config(tbl_rows=-1, tbl_cols=-1, fmt_str_lengths=1000, tbl_width_chars=10000):
        return str(df) + "\n"


def tree(args):
    from ..errors import QueryError

    t = open_trace(*expand([args.source], one=True, command="tree"), capture=args.capture, keep_secrets=args.keep_secrets)
    uid = args.uid
    if uid is None:
        name = args.name.replace("'", "''")
        hits = t.sql(f"select uid from slices where trace_id = {int(args.trace_id)} and name = '{name}' order by ts_ns, uid")
        if hits.height == 0:
            raise QueryError(args.source, f"no host event named {args.name!r}")
        uid = hits["uid"][0]
        if hits.height > 1:
            print(
                f"tracecols: {hits.height} events named {args.name}; showing the first (uid {uid}), pick another with --uid",
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
