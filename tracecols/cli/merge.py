"""`tracecols merge LAKE|TRACES… -o job.json.gz`: every rank on one timeline, one Chrome-trace
file for Perfetto (fleet/merge.py does the work)."""

from __future__ import annotations

import argparse
import os
import sys

from ..errors import SourceIOError
from ..fleet.discover import discover
from ..fleet.merge import ALIGN, OVERLAYS, check_overlays, merge
from ..printable import MESSAGE, printable
from ..store.parquet import read_manifest
from ..trace import open_any
from . import flags
from .sources import expand


def _open(items: list[str], keep_secrets: bool):  # -> Trace | Lake
    """A lake or saved directory as it is; trace files, folders of them and globs together."""
    paths = expand(items)
    if len(paths) == 1 and os.path.isdir(paths[0]) and read_manifest(paths[0]) is not None:
        return open_any(paths[0], keep_secrets=keep_secrets)
    files, _skipped = discover(paths)
    if not files:
        raise SourceIOError(" ".join(items), "holds no trace file to merge")
    return open_any(*files, keep_secrets=keep_secrets)


def _overlays(text: str | None) -> tuple[str, ...]:
    return tuple(o.strip() for o in text.split(",") if o.strip()) if text else ()


def run(args: argparse.Namespace) -> int:
    overlays = _overlays(args.overlay)
    check_overlays(overlays)
    t = _open(args.sources, args.keep_secrets)
    done = merge(t, args.output, align=args.align, overlays=overlays, keep_secrets=args.keep_secrets)
    if not args.quiet:
        print(printable(f"tracecols: clocks aligned by {done.alignment.rule}: {done.alignment.words}", MESSAGE), file=sys.stderr)
        shifted = [p for p in done.ranks if p.offset_ns]
        if shifted:
            offsets = ", ".join(f"{p.label} {p.offset_ns / 1e6:+.3f} ms" for p in shifted)
            print(printable(f"tracecols: offsets {offsets}", MESSAGE), file=sys.stderr)
    extra = "".join(f"; {name} overlay: {n:,} events" for name, n in done.overlays.items())
    sys.stdout.write(
        printable(
            f"wrote {done.path}: {len(done.ranks)} trace{'s' if len(done.ranks) != 1 else ''}, {done.events:,} events "
            f"({sum(p.events for p in done.ranks):,} from the traces){extra}"
        )
        + "\n"
    )
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("merge", help="every rank on one timeline: one Chrome-trace file (Perfetto) of a lake or of traces")
    s.add_argument(
        "sources",
        nargs="+",
        help="a lake directory, or trace files, folders of them and quoted globs (- for standard input)",
    )
    s.add_argument("-o", "--output", required=True, help="the merged trace (.json, or .json.gz to compress)")
    s.add_argument(
        "--align",
        choices=ALIGN,
        default="auto",
        help="how the traces' clocks are put together: baseTimeNanoseconds (base-time), the end of the first "
        "collective every trace ran (collective), as written (none); auto (default): the first that applies",
    )
    s.add_argument(
        "--overlay",
        metavar="LIST",
        help=f"extra tracks, comma-separated: {', '.join(OVERLAYS)}",
    )
    flags.keep_secrets(s)
    s.set_defaults(func=run)
