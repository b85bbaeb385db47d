"""`tracecols stacks TRACE -o out.folded`: the host call stacks as folded lines, the input of
flame graph tools (flamegraph.pl, speedscope, inferno): `frame;frame;frame value`, the value
in whole microseconds. The lines are the `stacks` view's tree (sql/ops/stacks.sql) as
report/flame.py folds it."""

import sys

from ..errors import QueryError
from ..report.flame import METRICS, folded
from . import flags


def register(sub):
    s = sub.add_parser(
        "stacks", help="write the call stacks in the folded format of flame graphs (flamegraph.pl, speedscope), values in µs"
    )
    s.add_argument("source", help="one trace file (- for standard input) or tracecols output directory")
    s.add_argument("-o", "--output", required=True, help="the folded-stacks file to write (gzip-compressed when it ends in .gz)")
    s.add_argument(
        "--metric",
        choices=sorted(METRICS),
        default="self_cpu",
        help="self_cpu: host time of the slices at each stack (default); self_device: duration "
        "of the device events their runtime calls launched",
    )
    s.add_argument(
        "--trace-id", type=int, default=None, help="which trace, when the source holds several (default: its only one)"
    )
    flags.capture(s)
    flags.keep_secrets(s)
    s.set_defaults(func=stacks)


def _trace_id(trace, args):
    ids = sorted(set(trace.frame("traces")["trace_id"].to_list()))
    if args.trace_id is not None:
        if args.trace_id not in ids:
            raise QueryError(args.source, f"has no trace {args.trace_id} (its traces: {', '.join(map(str, ids)) or 'none'})")
        return args.trace_id
    if len(ids) != 1:
        raise QueryError(args.source, f"holds {len(ids)} traces; choose one with --trace-id ({', '.join(map(str, ids))})")
    return ids[0]


def stacks(args):
    from ..store.atomic import atomic_output
    from ..trace import open_any as open_trace
    from .sources import expand

    t = open_trace(*expand([args.source], one=True, command="stacks"), capture=args.capture, keep_secrets=args.keep_secrets)
    lines = folded(t, _trace_id(t, args), args.metric)
    with atomic_output(args.output) as f:
        f.write("".join(f"{stack} {us}\n" for stack, us in lines).encode())
    if not args.quiet:
        if lines:
            total = sum(us for _, us in lines)
            print(f"tracecols: wrote {args.output} ({len(lines):,} stacks, {total:,} µs of {args.metric})", file=sys.stderr)
        elif args.metric == "self_device":
            print(
                f"tracecols: no device time: no device event of this trace was launched from a host call "
                f"in it (a CPU-only trace?); wrote an empty {args.output}",
                file=sys.stderr,
            )
        else:
            print(f"tracecols: no host time of 1 µs or more in any stack; wrote an empty {args.output}", file=sys.stderr)
    return 0
