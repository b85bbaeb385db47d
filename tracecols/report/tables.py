"""HTML tables and headline figures of the report: every cell escaped, numbers formatted, raw
values kept in `data-v` so that the page's script sorts by them."""

from collections.abc import Iterable, Sequence
from typing import Any

from .labels import html_text as _e
from .units import fmt_ns, fmt_pct


def _cell(v: Any, kind: str) -> str:
    if kind == "ns":
        return f'<td class="n" data-v="{"" if v is None else float(v)}">{_e(fmt_ns(v))}</td>'
    if kind == "pct":
        return f'<td class="n" data-v="{"" if v is None else float(v)}">{_e(fmt_pct(v))}</td>'
    if kind == "n":
        if isinstance(v, float):
            txt = f"{v:,.3g}"
        else:
            txt = "-" if v is None else f"{v:,}" if isinstance(v, int) else str(v)
        return f'<td class="n" data-v="{"" if v is None else v}">{_e(txt)}</td>'
    if kind == "flag":
        return f'<td class="{"flag" if v else ""}">{"yes" if v else "no"}</td>'
    return f'<td class="name" title="{_e(v)}">{_e(v)}</td>'


def table(tid: str, header: Sequence[str], rows: Sequence[Sequence], kinds: Sequence[str]) -> str:
    """A sortable table. kinds per column: 'name' (text), 'n' (number shown as is), 'ns' (a
    duration in ns), 'pct', 'flag' (yes/no); each row cell is a raw value."""
    if not rows:
        return '<p class="empty">(no rows)</p>'
    h = "".join(f"<th>{_e(c)}</th>" for c in header)
    body = "".join("<tr>" + "".join(_cell(v, k) for v, k in zip(r, kinds)) + "</tr>" for r in rows)
    # a table wider than the window scrolls inside its section instead of running off the page
    return (
        f'<div class="tw"><table class="sortable" id="{_e(tid)}"><thead><tr>{h}</tr></thead><tbody>{body}</tbody></table></div>'
    )


def kpis(figures: Iterable[tuple[str, str]]) -> str:
    """Headline figures, (label, value text) each, as a row of boxes."""
    return (
        '<div class="kpis">'
        + "".join(f'<div class="kpi"><b>{_e(v)}</b><span>{_e(k)}</span></div>' for k, v in figures)
        + "</div>"
    )
