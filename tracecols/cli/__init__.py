"""The `tracecols` command. Every failure is one line on stderr and exit code 2."""

import argparse
import os
import sys

from .. import memory, progress
from ..errors import TraceError
from ..printable import MESSAGE, printable
from ..read.source import inputs_noted

memory.for_this_process()  # before anything loads polars or pyarrow
from . import commands, flags, fleet  # noqa: E402
from .sources import stdin_scope  # noqa: E402

_DEBUG = "TRACECOLS_DEBUG"


def _parser():
    p = argparse.ArgumentParser(prog="tracecols", description="Columnar analytics for PyTorch profiler traces.")
    from ..version import __version__

    p.add_argument("--version", action="version", version=f"tracecols {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = sub.add_parser("info", help="one screen about a trace: size, events by category, span, devices, rank")
    s.add_argument(
        "source",
        nargs="+",
        help="trace files (.json/.json.gz, path, URL, quoted glob, - for standard input) or a tracecols output directory",
    )
    flags.keep_secrets(s)
    s.set_defaults(func=commands.info)

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
    s.add_argument(
        "--capture",
        metavar="DIR",
        help="folder of CUDA/HIP graph capture traces: graph-replayed kernels go to the ops that captured them",
    )
    flags.keep_secrets(s)
    s.set_defaults(func=commands.sql)

    s = sub.add_parser("tree", help="print the host call tree under an op (kernels under their launch calls)")
    s.add_argument("source", help="one trace file (- for standard input) or tracecols output directory")
    g = s.add_mutually_exclusive_group(required=True)
    g.add_argument("--uid", type=int, help="the event's uid (its position in traceEvents)")
    g.add_argument("--name", help="an op name, e.g. aten::convolution (its first instance is shown)")
    s.add_argument("--parents", action="store_true", help="print the chain of parents instead of the subtree")
    s.add_argument("--fields", default=None, help='comma-separated args to show per op, e.g. "Input Dims,Input type"')
    s.add_argument("--trace-id", type=int, default=0, help="which trace, when several were opened (default 0)")
    s.add_argument(
        "--capture",
        metavar="DIR",
        help="folder of CUDA/HIP graph capture traces: graph-replayed kernels go to the ops that captured them",
    )
    flags.keep_secrets(s)
    s.set_defaults(func=commands.tree)

    s = sub.add_parser("ingest", help="ingest traces (files, directories, globs, URLs) into a Parquet lake")
    s.add_argument("sources", nargs="+", help="trace files, directories of them, globs or fsspec URLs")
    s.add_argument("-o", "--output", required=True, help="lake directory or URL (created, or added to)")
    s.add_argument("-j", "--jobs", type=int, default=None, help="worker processes (default: one per core)")
    s.add_argument(
        "--executor", choices=["local", "dask"], default="local", help="local processes (default) or a Dask distributed cluster"
    )
    s.add_argument("--scheduler", help="Dask scheduler address, e.g. tcp://HOST:8786 (with --executor dask)")
    flags.keep_secrets(s)
    s.add_argument(
        "--lock-timeout",
        type=float,
        default=None,
        help="seconds to wait for another ingest into the same local lake (default: "
        "$TRACECOLS_LOCK_TIMEOUT, else no limit; 0 fails at once)",
    )
    s.add_argument(
        "--run",
        metavar="LABEL",
        help="the run these traces belong to (a commit, a date, a config name): one lake holds many runs (docs/fleet.md)",
    )
    s.set_defaults(func=fleet.ingest)

    s = sub.add_parser("export", help="write a DuckDB file of views over a lake, for BI tools")
    s.add_argument("lake", help="lake directory written by `tracecols ingest`")
    s.add_argument("--duckdb", required=True, help="the .duckdb file to write")
    flags.keep_secrets(s)
    s.set_defaults(func=fleet.export)

    from . import augment, compare, link

    link.register(sub)
    compare.register(sub)
    augment.register(sub)
    from . import analyze

    analyze.register(sub)
    from . import report

    report.register(sub)
    from . import stacks

    stacks.register(sub)
    from . import critical_path

    critical_path.register(sub)
    from . import merge

    merge.register(sub)

    from . import mcp

    mcp.register(sub)
    for s in sub.choices.values():  # every command: -q
        if not any("--quiet" in a.option_strings for a in s._actions):
            s.add_argument("-q", "--quiet", action="store_true", help="no progress line and no notes on stderr")
    return p


def main(argv=None):
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if extra and args.command == "sql" and not any(a.startswith("-") for a in extra):
        # a query after the options: argparse gave its place to SOURCE's words before them
        args.source += ([args.query] if args.query else []) + extra
        args.query = None
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        # `ingest` draws its own bar (files, MB) over its workers
        with inputs_noted(), stdin_scope(quiet=args.quiet), progress.shown(enabled=not args.quiet and args.command != "ingest"):
            return args.func(args) or 0
    except TraceError as e:
        print(f"tracecols: {printable(e.line(), MESSAGE)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tracecols: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as e:  # a bug of ours: still one line, with a way to get the traceback
        if os.environ.get(_DEBUG):
            raise
        print(
            f"tracecols: internal error: {type(e).__name__}: {printable(' '.join(str(e).split()), MESSAGE)} "
            f"(set {_DEBUG}=1 for a traceback)",
            file=sys.stderr,
        )
        return 2


def run():
    memory.without_pandas()
    sys.exit(main())
