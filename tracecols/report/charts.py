"""Charts as inline SVG strings: no library, no requests, nothing to load.

Every chart is a <figure class="chart"> with a title, axis titles that carry units, a
one-sentence reading aid and an <svg>. Data marks carry class "mark" (the page's check
script counts them in the browser).
"""

import math

from ..printable import printable
from .labels import fit, text_px
from .labels import html_text as _e

PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac")

W, H = 860, 340  # default plot size (px)
MR, MT, MB = 12, 16, 46  # margins: right (beyond the last tick's label), top, bottom
FONT, VAL_FONT, AXT_FONT = 11, 10, 12  # px: the page's CSS for svg text, .val and .axt
LABEL_MAX = 330  # px: the widest a bar label may be (a longer one is cut, whole in its tooltip)


def _num(v):
    """Short tick label."""
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1e6 or a < 1e-3:
        return f"{v:.0e}".replace("e+0", "e").replace("e-0", "e-")
    if a >= 100:
        return f"{v:,.0f}"
    if a >= 1:
        return f"{v:.3g}"
    return f"{v:.2g}"


def nice_ticks(lo, hi, n=5):
    """Round tick values from at or below `lo` to at or above `hi` (so an axis that ends at
    its last tick holds the data)."""
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / max(n, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    k0, k1 = math.floor(lo / step), math.ceil(hi / step)
    while k0 * step > lo:  # float division may land one step inside the data
        k0 -= 1
    while k1 * step < hi:
        k1 += 1
    return [round(k * step, 12) for k in range(k0, k1 + 1)]


def log_ticks(lo, hi):
    """Powers of ten from at or below `lo` to at or above `hi`."""
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    while 10.0**a > lo:
        a -= 1
    while 10.0**b < hi:
        b += 1
    if a == b:
        b += 1
    return [10.0**k for k in range(a, b + 1)]


def figure(cid, title, reading, svg, legend=None, note=None):
    leg = ""
    if legend:
        leg = (
            '<div class="legend">' + "".join(f'<span><i style="background:{c}"></i>{_e(n)}</span>' for n, c in legend) + "</div>"
        )
    nt = f'<p class="note">{_e(note)}</p>' if note else ""
    return (
        f'<figure class="chart" id="{_e(cid)}"><figcaption><b>{_e(title)}</b>'
        f'<span class="reading">{_e(reading)}</span></figcaption>{leg}{svg}{nt}</figure>'
    )


def _svg(w, h, body):
    return f'<svg width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img">{body}</svg>'


def _axis_title(x, y, text, rotate=False, room=W):
    """An axis title centred on (x, y), moved (never cut) so that it stays inside [0, room]."""
    half = text_px(text, AXT_FONT) / 2 + 2
    if rotate:
        y = min(max(y, half), room - half)
        tr = f' transform="rotate(-90 {x:.1f} {y:.1f})"'
    else:
        x = min(max(x, half), room - half)
        tr = ""
    return f'<text class="axt" x="{x:.1f}" y="{y:.1f}" text-anchor="middle"{tr}>{_e(text)}</text>'


def bar_labels(labels, short=None, cut="middle"):
    """Bar labels that fit LABEL_MAX: `short` (a name shortener) first, then cut in the middle
    or at the end; labels that an end cut made equal are cut in the middle instead, which
    keeps their ends apart."""
    cut_ = [printable(lab) for lab in labels]  # a name of megabytes is measured no further than LONG
    shown = [printable(short(c)) if short else c for c in cut_]
    out = [fit(s, LABEL_MAX, FONT, where=cut) for s in shown]
    dup = {c for c in out if out.count(c) > 1}
    return [fit(s, LABEL_MAX, FONT) if c in dup and c != s else c for s, c in zip(shown, out)]


def hbars(
    cid,
    title,
    reading,
    labels,
    series,
    xlabel,
    fmt=_num,
    colors=None,
    legend=None,
    note=None,
    xmax=None,
    short=None,
    cut="middle",
):
    """Horizontal bars, one row per label; `series` is a list of value lists (stacked when several).
    Each label is drawn whole or cut to fit (`short`: how to shorten it first; `cut`: "middle" or
    "end"), its full text in a tooltip; the left margin is as wide as the widest drawn label."""
    n = len(labels)
    colors = colors or PALETTE
    shown = bar_labels(labels, short, cut)
    lw = math.ceil(max((text_px(s, FONT) for s in shown), default=0)) + 12
    row = 22
    w, h = W, MT + n * row + MB
    totals = [sum((s[i] or 0) for s in series) for i in range(n)]
    top = max(totals, default=0)
    # shares that add up to 100 may sum a hair above it: they end at the axis, not past it
    hi = xmax if xmax is not None and top <= xmax * (1 + 1e-9) else (top if top > 0 else 1)
    ticks = nice_ticks(0, hi)
    hi = ticks[-1]
    # room right of the plot: the longest value label after a bar, or half the last tick's label
    vw = max([text_px(fmt(t), VAL_FONT) + 6 for t in totals] + [text_px(_num(ticks[-1]), FONT) / 2])
    pw = w - lw - vw - MR

    def sx(v):
        return lw + min(v, hi) / hi * pw

    b = []
    for t in ticks:
        x = sx(t)
        b.append(
            f'<line class="grid" x1="{x:.1f}" x2="{x:.1f}" y1="{MT}" y2="{MT + n * row}"/>'
            f'<text class="tick" x="{x:.1f}" y="{MT + n * row + 14}" text-anchor="middle">{_num(t)}</text>'
        )
    for i, lab in enumerate(labels):
        y = MT + i * row
        b.append(
            f'<text class="lab" x="{lw - 6}" y="{y + row * 0.65:.1f}" text-anchor="end">'
            f"<title>{_e(lab)}</title>{_e(shown[i])}</text>"
        )
        x0, acc = lw, 0.0
        for k, s in enumerate(series):
            v = s[i] or 0
            acc += v
            wv = sx(acc) - x0
            if wv > 0:
                b.append(
                    f'<rect class="mark" x="{x0:.1f}" y="{y + 3}" width="{max(wv, 0.8):.1f}" '
                    f'height="{row - 6}" fill="{colors[k % len(colors)]}"><title>{_e(lab)}: '
                    f"{_e(fmt(v))}</title></rect>"
                )
                x0 += wv
        b.append(f'<text class="val" x="{x0 + 4:.1f}" y="{y + row * 0.65:.1f}">{_e(fmt(totals[i]))}</text>')
    b.append(f'<line class="axis" x1="{lw}" x2="{lw}" y1="{MT}" y2="{MT + n * row}"/>')
    b.append(_axis_title(lw + pw / 2, h - 8, xlabel))
    return figure(cid, title, reading, _svg(w, h, "".join(b)), legend=legend, note=note)


def _series_marks(series, kind, sx, sy, ok) -> list[str]:
    """The data marks of `xy`: one step polyline per series (kind="step"), else a circle per
    point (with its hover text when the point has one); sx, sy map a value to px, ok keeps a
    point a log axis can show."""
    out: list[str] = []
    for s in series:
        c = s["color"]
        if kind == "step":
            steps: list[str] = []
            prev = None
            for x, y in s["points"]:
                if prev is not None:
                    steps.append(f"{sx(x):.1f},{sy(prev):.1f}")
                steps.append(f"{sx(x):.1f},{sy(y):.1f}")
                prev = y
            if steps:
                out.append(
                    f'<polyline class="mark" points="{" ".join(steps)}" stroke="{c}" fill="none">'
                    f"<title>{_e(s['name'])}</title></polyline>"
                )
        else:
            for pt in s["points"]:
                if not ok(pt):
                    continue
                tip = f" <title>{_e(pt[2])}</title>" if len(pt) > 2 else ""
                out.append(f'<circle class="mark" cx="{sx(pt[0]):.1f}" cy="{sy(pt[1]):.1f}" r="3.2" fill="{c}">{tip}</circle>')
    return out


def xy(
    cid,
    title,
    reading,
    series,
    xlabel,
    ylabel,
    logx=False,
    logy=False,
    lines=(),
    kind="points",
    note=None,
    height=H,
    ymin=None,
    xlim=None,
):
    """Scatter (kind="points") or step lines (kind="step") of series [{name, color, points:[(x, y)]}];
    `lines` are reference lines [{name, color, points, dash}] (not data marks). Both axes run from
    a tick at or below the smallest value to one at or above the largest (`ymin`, `xlim` = (lo, hi)
    widen them; they never cut data off)."""
    w, h = W, height
    pts = [p for s in series for p in s["points"]] + [p for s in lines for p in s["points"]]
    if logx:
        pts = [p for p in pts if p[0] > 0]
    if logy:
        pts = [p for p in pts if p[1] > 0]
    xs = [p[0] for p in pts] or [0, 1]
    ys = [p[1] for p in pts] or [0, 1]
    xlo, xhi = min(xs), max(xs)
    if xlim is not None:
        xlo, xhi = min(xlo, xlim[0]), max(xhi, xlim[1])
    xt = log_ticks(xlo, xhi) if logx else nice_ticks(xlo, xhi)
    if logy:
        yt = log_ticks(min(ys), max(ys))
    else:
        yt = nice_ticks(min(ys) if ymin is None else min(ymin, min(ys)), max(ys))
    x0, x1, y0, y1 = min(xt[0], xlo), max(xt[-1], xhi), min(yt[0], min(ys)), max(yt[-1], max(ys))
    if logx:
        x0, x1 = math.log10(x0), math.log10(x1)
    if logy:
        y0, y1 = math.log10(y0), math.log10(y1)
    # left margin: the y axis title (rotated, 12 px) and the widest tick label
    ml = math.ceil(AXT_FONT + 12 + max(text_px(_num(t), FONT) for t in yt))
    mr = MR + math.ceil(text_px(_num(xt[-1]), FONT) / 2)
    pw, ph = w - ml - mr, h - MT - MB

    def sx(v):
        v = math.log10(v) if logx else v
        return ml + (v - x0) / ((x1 - x0) or 1) * pw

    def sy(v):
        v = math.log10(v) if logy else v
        return MT + ph - (v - y0) / ((y1 - y0) or 1) * ph

    def ok(p):
        return (not logx or p[0] > 0) and (not logy or p[1] > 0)

    b = [f'<rect class="plot" x="{ml}" y="{MT}" width="{pw}" height="{ph}"/>']
    for t in xt:
        x = sx(t)
        b.append(
            f'<line class="grid" x1="{x:.1f}" x2="{x:.1f}" y1="{MT}" y2="{MT + ph}"/>'
            f'<text class="tick" x="{x:.1f}" y="{MT + ph + 14}" text-anchor="middle">{_num(t)}</text>'
        )
    for t in yt:
        y = sy(t)
        b.append(
            f'<line class="grid" x1="{ml}" x2="{ml + pw}" y1="{y:.1f}" y2="{y:.1f}"/>'
            f'<text class="tick" x="{ml - 5}" y="{y + 4:.1f}" text-anchor="end">{_num(t)}</text>'
        )
    b.append(
        f'<clipPath id="{_e(cid)}-clip"><rect x="{ml}" y="{MT}" width="{pw}" height="{ph}"/></clipPath>'
        f'<g clip-path="url(#{_e(cid)}-clip)">'
    )
    for ln in lines:
        p = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in ln["points"] if ok((x, y)))
        dash = ' stroke-dasharray="6 4"' if ln.get("dash") else ""
        b.append(f'<polyline class="ref" points="{p}" stroke="{ln["color"]}"{dash}><title>{_e(ln["name"])}</title></polyline>')
    b += _series_marks(series, kind, sx, sy, ok)
    b.append("</g>")
    b.append(
        f'<line class="axis" x1="{ml}" x2="{ml}" y1="{MT}" y2="{MT + ph}"/>'
        f'<line class="axis" x1="{ml}" x2="{ml + pw}" y1="{MT + ph}" y2="{MT + ph}"/>'
    )
    b.append(_axis_title(ml + pw / 2, h - 8, xlabel))
    b.append(_axis_title(AXT_FONT + 2, MT + ph / 2, ylabel, rotate=True, room=h))
    legend = [(s["name"], s["color"]) for s in series] + [(ln["name"], ln["color"]) for ln in lines]
    return figure(cid, title, reading, _svg(w, h, "".join(b)), legend=legend, note=note)


ICICLE_ROW = 18  # px per stack level


def icicle(cid, title, reading, rects, levels, legend, note=None):
    """An icicle (a flame graph hung from the top): `rects` are (level, start, width, label, tip,
    colour) with start and width as shares of the whole (0..1), level 0 the roots. A label is
    drawn inside its rectangle when some of it fits, cut at the end; the tooltip has it all."""
    w, h = W, MT + levels * ICICLE_ROW + 8
    pw = w - 2 * MR
    b = [f'<rect class="plot" x="{MR}" y="{MT}" width="{pw}" height="{levels * ICICLE_ROW}" fill="none"/>']
    for level, start, width, label, tip, colour in rects:
        x, y, rw = MR + start * pw, MT + level * ICICLE_ROW, max(width * pw, 0.8)
        rw = min(rw, MR + pw - x)
        b.append(
            f'<rect class="mark" x="{x:.2f}" y="{y + 1}" width="{rw:.2f}" height="{ICICLE_ROW - 2}" '
            f'fill="{colour}"><title>{_e(tip)}</title></rect>'
        )
        room = rw - 6
        if room >= text_px("ab…", VAL_FONT):
            b.append(
                f'<text class="val" x="{x + 3:.1f}" y="{y + ICICLE_ROW * 0.7:.1f}">'
                f"<title>{_e(tip)}</title>{_e(fit(printable(label), room, VAL_FONT, where='end'))}</text>"
            )
    return figure(cid, title, reading, _svg(w, h, "".join(b)), legend=legend, note=note)
