"""`tracecols critical-path SOURCE`: the critical path of each profiler step (or of each
annotation named with --annotation), per bound_by or segment by segment. The rows are those
of the critical_path_summary and critical_path views (Trace.critical_path)."""

from . import flags


def register(sub):
    s = sub.add_parser(
        "critical-path",
        help="the longest dependency path through each profiler step: how much of "
        "it is CPU, GPU compute or communication, launch or kernel-kernel "
        "overhead, data loading",
    )
    s.add_argument(
        "source",
        nargs="+",
        help="trace files (path, URL, quoted glob, - for standard input), a tracecols output directory or a lake directory",
    )
    s.add_argument(
        "--annotation",
        metavar="PATTERN",
        help="take the path through each host annotation (or op) whose name matches this SQL LIKE "
        "pattern (%% any text, _ one character, every other character itself) instead of through each ProfilerStep",
    )
    s.add_argument("--segments", action="store_true", help="every segment of the path in order, instead of the time per bound_by")
    s.add_argument("--format", choices=["table", "csv", "json", "parquet"], default="table")
    s.add_argument("-o", "--output", help="write the rows to this file instead of stdout")
    flags.capture(s)
    flags.keep_secrets(s)
    s.set_defaults(func=critical_path)


def critical_path(args):
    from ..errors import SourceIOError
    from ..trace import open_any as open_trace
    from .commands import emit
    from .sources import expand

    if args.format == "parquet" and not args.output:
        raise SourceIOError("-o", "--format parquet needs -o FILE")
    t = open_trace(*expand(args.source), capture=args.capture, keep_secrets=args.keep_secrets)
    emit(t.critical_path(args.annotation, summary=not args.segments), args.output, args.format)
    return 0
