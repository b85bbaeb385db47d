"""The `tracecols` command. Every failure is one line on stderr and exit code 2."""

import argparse
import atexit
import importlib
import os
import sys
import threading

from .. import memory, progress
from ..errors import TraceError
from ..printable import MESSAGE, printable
from ..read.source import inputs_noted

memory.for_this_process()  # before anything loads polars or pyarrow
from .sources import stdin_scope  # noqa: E402

_DEBUG = "TRACECOLS_DEBUG"

# Each command and the module of this package that registers it, in the order `tracecols --help`
# lists them. A command imports its own module alone: each pulls in what it runs on, and the
# others' would be paid on every run (tests/test_cli.py checks the table against the modules).
COMMANDS = {
    "info": "commands",
    "sql": "commands",
    "tree": "commands",
    "ingest": "fleet",
    "export": "fleet",
    "link": "link",
    "compare": "compare",
    "diff": "compare",
    "augment": "augment",
    "analyze": "analyze",
    "report": "report",
    "stacks": "stacks",
    "critical-path": "critical_path",
    "merge": "merge",
    "mcp": "mcp",
}


def _parser(command=None):
    """The parser of `command`'s arguments, or of every command's when it names none of them
    (--help, --version, a mistake: argparse lists or names them all)."""
    p = argparse.ArgumentParser(prog="tracecols", description="Columnar analytics for PyTorch profiler traces.")
    from ..version import __version__

    p.add_argument("--version", action="version", version=f"tracecols {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    modules = [COMMANDS[command]] if command in COMMANDS else COMMANDS.values()
    for module in dict.fromkeys(modules):
        importlib.import_module(f".{module}", __name__).register(sub)
    for s in sub.choices.values():  # every command: -q
        if not any("--quiet" in a.option_strings for a in s._actions):
            s.add_argument("-q", "--quiet", action="store_true", help="no progress line and no notes on stderr")
    return p


def main(argv=None):
    words = sys.argv[1:] if argv is None else list(argv)
    parser = _parser(words[0] if words else None)
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
        _discard(sys.stdout)
        return 0
    except OSError as e:
        # the files a command writes say their own failures: a write failure that gets here is
        # the standard output's (a full disk under `> file`)
        code = _stdout_failed(e)
        return _internal(e) if code is None else code
    except Exception as e:
        return _internal(e)


def _internal(e: Exception) -> int:
    """A bug of ours: still one line, with a way to get the traceback."""
    if os.environ.get(_DEBUG):
        raise e
    print(
        f"tracecols: internal error: {type(e).__name__}: {printable(' '.join(str(e).split()), MESSAGE)} "
        f"(set {_DEBUG}=1 for a traceback)",
        file=sys.stderr,
    )
    return 2


def _discard(stream) -> None:
    """What is left in the stream's buffer goes nowhere (it could not be written)."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())


def _stdout_failed(e: OSError) -> int | None:
    """For a write the system refused (store.atomic.write_failure): one line, what is left of the
    standard output dropped, and exit code 2; None for any other error."""
    from ..store.atomic import write_failure

    failed = write_failure("standard output", e)
    if failed is None:
        return None
    _discard(sys.stdout)
    print(f"tracecols: {printable(failed.line(), MESSAGE)}", file=sys.stderr)
    return 2


def run():
    memory.without_pandas()
    code = main()
    if not isinstance(code, int):  # what sys.exit makes of anything else (a message, exit 1)
        sys.exit(code)
    _exit(code)


def _exit(code: int) -> None:
    """End the process as Python's own exit does (the other threads joined, the atexit handlers
    run: temporary directories removed; the standard streams flushed), without tearing down the
    interpreter: freeing every object of DuckDB, polars and Arrow one by one takes a small
    trace's command some 50 ms. Every file the command writes is closed before it returns."""
    for t in threading.enumerate():
        if t is not threading.main_thread() and not t.daemon:
            t.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:  # the reader went away: what is left goes nowhere, as in main
            _discard(stream)
        except OSError as e:  # the standard output's last bytes would not go (a full disk)
            failed = _stdout_failed(e) if stream is sys.stdout and code == 0 else None
            if failed is None:
                _discard(stream)
            else:
                code = failed
        except ValueError:  # closed by the command
            pass
    os._exit(code)
