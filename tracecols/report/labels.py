"""Text that fits: how wide a label draws, cutting it to a width, short kernel names and
one distinct name per trace.

The charts are static SVG, so the room a label needs is estimated here, not measured. The
widths (in em) are those of DejaVu Sans, the widest of the fonts the page asks for and what
Linux browsers fall back to, rounded up per class of character: other fonts draw narrower.
"""

import os
import re
from html import escape

from ..printable import LONG, printable

_EM = (
    (0.34, frozenset(" '.,:;/\\|ijlIJ")),
    (0.40, frozenset('()[]{}!ftr-"')),
    (0.82, frozenset("ABCDEFGHKNOPQRSTUVXYZ")),
    (0.84, frozenset("w#+<=>^~&")),
    (1.00, frozenset("mMW@%")),
)
_DEFAULT_EM = 0.64  # lower case, digits, `_` and the rest of ASCII
_WIDE_EM = 1.0  # anything outside ASCII (…, µ, ·, CJK): the widest case
ELLIPSIS = "…"
PAGE_CHARS = 2 * LONG  # the most characters of one text on the page: room for a label of LONG and what is said of it


def html_text(s):
    """Any text drawn on the page, as HTML: its control characters escaped and a text of more
    than PAGE_CHARS cut (printable.py), then its HTML special characters escaped. A name from
    a trace that is part of a longer text is cut to LONG first (`printable`), so that what
    follows it stays."""
    return escape(printable(s, PAGE_CHARS), quote=True)


def _em(ch):
    if ord(ch) > 126:
        return _WIDE_EM
    for em, chars in _EM:
        if ch in chars:
            return em
    return _DEFAULT_EM


def text_px(text, size=11.0):
    """Upper estimate of the width in px of `text` drawn at font size `size`."""
    return size * sum(_em(c) for c in str(text))


def fit(text, max_px, size=11.0, where="middle"):
    """`text` unchanged when it fits in `max_px`, else cut with an ellipsis in the middle
    (keeps both ends: an op's namespace and its last word) or at the end."""
    text = str(text)
    if text_px(text, size) <= max_px:
        return text
    room = max_px - text_px(ELLIPSIS, size)
    if where == "end":
        out, used = [], 0.0
        for c in text:
            used += size * _em(c)
            if used > room:
                break
            out.append(c)
        return "".join(out).rstrip() + ELLIPSIS
    head: list[str]
    tail: list[str]
    head, tail, used = [], [], 0.0
    i, j = 0, len(text) - 1
    while i <= j:  # take characters from each end in turn while they fit
        c = text[i] if len(head) <= len(tail) else text[j]
        w = size * _em(c)
        if used + w > room:
            break
        used += w
        if len(head) <= len(tail):
            head.append(c)
            i += 1
        else:
            tail.append(c)
            j -= 1
    return "".join(head).rstrip() + ELLIPSIS + "".join(reversed(tail)).lstrip()


_QUALIFIER = re.compile(r"(?<![\w:])(?:[A-Za-z_]\w*::)+(?=[A-Za-z_~{])")


def kernel_label(name):
    """A GPU kernel's demangled name, short: no `void`, no namespaces, no argument list.
    `void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::Half>,
    std::array<char*, 3ul> >(int, …)` reads `vectorized_elementwise_kernel<4,
    CUDAFunctor_add<Half>, array<char*, 3ul> >`. The full name stays in the tooltip and table."""
    s = str(name).strip()
    if s.startswith("void "):
        s = s[5:]
    s = s.replace("(anonymous namespace)::", "")
    if s.endswith(")"):  # the argument list: a bracket group ending the name, right after it
        depth = 0
        for k in range(len(s) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(s[k], 0)
            if depth == 0:
                if k > 0 and (s[k - 1].isalnum() or s[k - 1] in "_>"):
                    s = s[:k]
                break
    return _QUALIFIER.sub("", s) or str(name)


def _stem(path):
    """A trace file's name without the extensions every trace has."""
    base = os.path.basename(str(path).rstrip("/"))
    for ext in (".gz", ".json", ".pt.trace"):
        if base.endswith(ext) and len(base) > len(ext):
            base = base[: -len(ext)]
    return base


def trace_labels(traces, lake):
    """{trace_id: label} for (trace_id, path, rank) rows. In a lake: `rank N` when every trace
    has a rank and no two share one, else the file name (with as many parent folders as it takes
    to tell them apart); a single trace: `rank N`, or "" when its rank is unknown."""
    if not lake:
        return {t: (f"rank {r}" if r is not None else "") for t, _, r in traces}
    ranks = [r for _, _, r in traces]
    if None not in ranks and len(set(ranks)) == len(ranks):
        return {t: f"rank {r}" for t, _, r in traces}
    parts = {t: [_stem(p)] + [d for d in reversed(os.path.dirname(str(p).rstrip("/")).split("/")) if d] for t, p, _ in traces}
    depth = {t: 1 for t in parts}
    while True:
        names = {t: "/".join(reversed(parts[t][: depth[t]])) for t in parts}
        seen: dict[str, list] = {}
        for t, n in names.items():
            seen.setdefault(n, []).append(t)
        clash = [t for ts in seen.values() if len(ts) > 1 for t in ts if depth[t] < len(parts[t])]
        if not clash:
            break
        for t in clash:
            depth[t] += 1
    count = {n: sum(1 for m in names.values() if m == n) for n in names.values()}
    return {t: (n if count[n] == 1 else f"{n} #{t}") for t, n in names.items()}
