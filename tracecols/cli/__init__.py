"""The `tracecols` command. Every failure is one line on stderr and exit code 2."""

import argparse
import os
import sys

from .. import memory, progress
from ..errors import TraceError
from ..printable import MESSAGE, printable
from ..read.source import inputs_noted

memory.for_this_process()  # before anything loads polars or pyarrow
from . import commands, fleet  # noqa: E402
from .sources import stdin_scope  # noqa: E402

_DEBUG = "TRACECOLS_DEBUG"


def _parser():
    p = argparse.ArgumentParser(prog="tracecols", description="Columnar analytics for PyTorch profiler traces.")
    from ..version import __version__

    p.add_argument("--version", action="version", version=f"tracecols {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    from . import analyze, augment, compare, critical_path, link, mcp, merge, report, stacks

    for module in (commands, fleet, link, compare, augment, analyze, report, stacks, critical_path, merge, mcp):
        module.register(sub)
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
