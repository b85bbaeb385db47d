"""`tracecols report SOURCE -o report.html`: one self-contained HTML file of charts and tables."""

import sys

from . import flags


def register(sub):
    s = sub.add_parser("report", help="write a self-contained HTML report (charts, sortable tables; works offline)")
    s.add_argument(
        "source",
        nargs="+",
        help="trace files (path, URL, quoted glob, - for standard input), a tracecols output directory or a lake directory",
    )
    s.add_argument("-o", "--output", default="report.html", help="the HTML file to write (default report.html)")
    s.add_argument("--title", help="title shown at the top of the page")
    flags.capture(s)
    flags.keep_secrets(s)
    s.set_defaults(func=report)


def report(args):
    from ..report import save
    from ..trace import open_any as open_trace
    from .sources import expand

    out = save(open_trace(*expand(args.source), capture=args.capture, keep_secrets=args.keep_secrets), args.output, args.title)
    import os

    print(f"tracecols: wrote {out} ({os.path.getsize(out) / 1e3:,.0f} kB)", file=sys.stderr)
    return 0
