"""`tracecols ingest` (traces -> lake, in parallel, with a progress bar) and `tracecols export`."""

import os
import sys
import time

from ..errors import SourceIOError
from ..fleet.ingest import Reporter, ingest_lake
from ..lake import Lake
from ..printable import MESSAGE, printable
from ..progress import Tracker, using
from . import flags


class ProgressReporter(Reporter, Tracker):
    """A rich progress bar on stderr: MB read, files done, events/s, ETA. Silent (but for
    notes and errors) when stderr is not a terminal; with `quiet`, errors only.

    The bar advances as each file is done and, for files read in this process (one file, or
    -j 1), as their bytes are read (it is the progress.Tracker meanwhile)."""

    def __init__(self, stream=None, force=None, quiet=False):
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.live = not quiet and (self.stream.isatty() if force is None else force)
        self.progress = None
        self.t0 = time.perf_counter()
        self.n_events = 0
        self.n_done = 0
        self.read_here = 0  # bytes of the file in hand read in this process, already on the bar

    def _print(self, line):
        line = printable(line, MESSAGE)  # notes and errors quote paths and trace content
        if self.progress is not None:
            self.progress.console.print(line, markup=False, highlight=False)
        else:
            print(line, file=self.stream)

    def note(self, line):
        if not self.quiet:
            self._print(f"tracecols: {line}")

    def read(self, nbytes):
        if self.progress is not None:
            self.read_here += nbytes
            self.progress.update(self.task, advance=nbytes)

    def failed(self, path, error):
        self._print(f"tracecols: {error}")

    def start(self, n_files, n_bytes):
        self.t0 = time.perf_counter()
        if not self.live or n_files == 0:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.progress = Progress(
            TextColumn("[bold]ingest"),
            BarColumn(),
            DownloadColumn(binary_units=False),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=Console(file=self.stream),
            transient=False,
            refresh_per_second=4,
        )
        self.files_total = n_files
        self.task = self.progress.add_task("ingest", total=n_bytes or 1, rate=f"0/{n_files:,} files", completed=0)
        self.progress.start()

    def done(self, record):
        self.n_events += record["n_events"] or 0
        self.n_done += 1
        if self.progress is not None:
            rate = self.n_events / max(time.perf_counter() - self.t0, 1e-9)
            self.progress.update(
                self.task,
                advance=max((record["size"] or 0) - self.read_here, 0),
                rate=f"{self.n_done:,}/{self.files_total:,} files  {rate / 1e3:,.0f}k events/s",
            )
        self.read_here = 0

    def finish(self):
        if self.progress is not None:
            self.progress.stop()
            self.progress = None


def _executor(args):
    if args.executor == "dask":
        if not args.scheduler:
            raise SourceIOError("--executor dask", "needs --scheduler tcp://HOST:PORT")
        try:
            from distributed import Client
        except ImportError:
            raise SourceIOError("--executor dask", "needs dask[distributed]: pip install 'tracecols[dask]'") from None
        client = Client(args.scheduler)
        return client, client.get_executor()
    return None, None


LOCK_TIMEOUT = "TRACECOLS_LOCK_TIMEOUT"


def _lock_timeout(args):
    """Seconds to wait for another ingest into the same lake: None (default) waits until it is done,
    0 fails at once. From `--lock-timeout` if the parser has it, else $TRACECOLS_LOCK_TIMEOUT."""
    value = getattr(args, "lock_timeout", None)
    if value is None:
        value = os.environ.get(LOCK_TIMEOUT, "").strip() or None
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0:
        raise SourceIOError(LOCK_TIMEOUT, f"expected a number of seconds >= 0, got {value!r}")
    return seconds


def ingest(args):
    lock_timeout = _lock_timeout(args)
    run = getattr(args, "run", None)
    if run is not None and not run.strip():
        raise SourceIOError("--run", "expected a label (a commit, a date, a config name), got an empty one")
    client, executor = _executor(args)
    rep = ProgressReporter(quiet=args.quiet)
    try:
        with using(rep):
            res = ingest_lake(
                args.sources,
                args.output,
                executor=executor,
                jobs=args.jobs,
                reporter=rep,
                keep_secrets=args.keep_secrets,
                lock_timeout=lock_timeout,
                run=run,
            )
    finally:
        if client is not None:
            client.close()
    n_ok = len(res.added) + len(res.replaced)
    if n_ok or res.unchanged or not res.failed:
        parts = [f"{len(res.added)} added"]
        if res.replaced:
            parts.append(f"{len(res.replaced)} replaced (changed)")
        parts.append(f"{len(res.unchanged)} unchanged")
        if res.skipped:
            parts.append(f"{len(res.skipped)} non-trace file(s) skipped")
        if res.failed:
            parts.append(f"{len(res.failed)} failed")
        print(f"tracecols: lake {res.root}: {', '.join(parts)} in {res.seconds:.1f} s", file=sys.stderr)
    if not (res.added or res.replaced or res.unchanged or res.failed):
        raise SourceIOError(" ".join(map(str, args.sources)), "no PyTorch profiler traces found")
    return 2 if res.failed else 0


def export(args):
    lake = Lake(args.lake, keep_secrets=args.keep_secrets)
    out, names = lake.export_duckdb(args.duckdb)
    print(f"tracecols: wrote {out} ({len(names)} views over {len(lake.traces)} traces)", file=sys.stderr)
    return 0


def register(sub):
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
    s.set_defaults(func=ingest)

    s = sub.add_parser("export", help="write a DuckDB file of views over a lake, for BI tools")
    s.add_argument("lake", help="lake directory written by `tracecols ingest`")
    s.add_argument("--duckdb", required=True, help="the .duckdb file to write")
    flags.keep_secrets(s)
    s.set_defaults(func=export)
