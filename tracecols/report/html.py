"""The HTML report: one self-contained file (inline CSS, SVG and a few lines of JS; no requests).
Its sections are drawn in order by the modules named below, from public tables and views read
by name (section_data.py)."""

import datetime
import os

from ..version import __version__
from .assets import CSP, CSS, HEAD_JS, JS
from .fix_first import fix_first
from .hotspots import _of_roof as _of_roof  # the roofline's hover text, tested on its own
from .hotspots import classes, roofline, stacks, top
from .labels import html_text as _e
from .over_time import critical_path, memory, over_time
from .overview import inputs, timeline
from .page import Page
from .ranks import fleet

SECTIONS = (inputs, fix_first, timeline, top, classes, roofline, critical_path, stacks, memory, over_time, fleet)


def render(src, title: str | None = None) -> str:
    """The report for an opened trace (tracecols.open) or a tc.Lake, as one HTML string."""
    from ..lake import Lake

    is_lake = isinstance(src, Lake)
    page = Page(src, is_lake)
    for section in SECTIONS:
        section(page)
    origin = getattr(src, "origin", "")
    title = title or f"tracecols report: {os.path.basename(str(origin).rstrip('/')) or origin}"
    n = len(src.traces) if is_lake else 1
    sub = (
        f"{'lake of ' + str(n) + ' traces' if is_lake else 'trace'} {origin} · tracecols {__version__} · "
        f"{datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}"
    )
    return document(title, sub, page.sections)


def document(title: str, sub: str, sections: list[str]) -> str:
    """One self-contained page: the report's head, style and script around `sections`."""
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><script>{HEAD_JS}</script><style>{CSS}</style></head><body>"
        f"<header><h1>{_e(title)}</h1><p>{_e(sub)}</p></header><main>"
        + "".join(sections)
        + f'</main><div id="tc-check"></div><script>{JS}</script></body></html>'
    )


def write(source, out_path, title: str | None = None, capture=None) -> str:
    """Open SOURCE (trace file or lake directory; `capture`: its graph capture traces),
    render the report and write it; returns the path."""
    from ..trace import open_any as open_trace

    return save(open_trace(source, capture=capture), out_path, title)


def save(src, out_path, title: str | None = None) -> str:
    """Render the report of an open Trace or Lake and write it atomically; returns the path."""
    return save_html(render(src, title=title), out_path)


def save_html(text: str, out_path) -> str:
    """Write a rendered page atomically; returns the path."""
    from ..store.atomic import atomic_output

    out_path = os.path.abspath(str(out_path))
    with atomic_output(out_path) as f:
        f.write(text.encode("utf-8"))
    return out_path
