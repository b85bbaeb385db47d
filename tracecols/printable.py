"""A string from a trace made safe to show on a terminal or in the report.

Traces come from other people: a name holding ESC, BEL, CR or LF would recolour or clear the
terminal, or forge lines of a table; a bidi override would reorder what is read; a name of
megabytes would flood the screen or the report. Every such string goes through `printable`
before it is shown. The tables and files keep the full text.
"""

LONG = 1000  # characters: beyond this a string is cut wherever it is shown, and says how long it was
MESSAGE = 10 * LONG  # characters of an error or note line: room for the list of every table a query could name
ELLIPSIS = "…"

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped(c: str) -> str:
    """One character that is not printable, as text: `\\n`, `\\x1b`, `\\u202e`, `\\U000e0001`."""
    if c in _NAMED:
        return _NAMED[c]
    n = ord(c)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def escape(text: str) -> str:
    """`text` with every character Python does not call printable written as its escape:
    C0 and C1 controls, DEL, line and paragraph separators, format characters (bidi
    overrides and isolates, zero-width ones), lone surrogates, unassigned code points and
    spaces other than ' '. A backslash is left as it is."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else _escaped(c) for c in text)


def printable(value: object, limit: int = LONG, keep: str = "start") -> str:
    """`value` as text to show: escaped (see `escape`) and at most `limit` characters long.
    A longer one is cut with an ellipsis, keeping its start (or its end, with `keep="end"`);
    when the original is longer than LONG the cut also says how many characters it had.
    None is ""."""
    text = "" if value is None else str(value)
    n = len(text)
    part = text[:limit] if keep == "start" else text[max(n - limit, 0) :]  # escaping only what can show
    shown = escape(part)
    if n <= limit and len(shown) <= limit:
        return shown
    count = f" ({n:,} chars)" if n > LONG else ""
    mark = ELLIPSIS + count
    room = max(limit - len(mark), 0)
    pieces = [c if c.isprintable() else _escaped(c) for c in part]
    if keep != "start":
        pieces.reverse()
    kept, used = [], 0
    for p in pieces:  # whole escapes only: a cut never splits `\x1b` into `\x1`
        if used + len(p) > room:
            break
        kept.append(p)
        used += len(p)
    if keep == "start":
        return "".join(kept) + mark
    return count.lstrip() + " " * bool(count) + ELLIPSIS + "".join(reversed(kept))


def _json_escape(c: str) -> str:
    n = ord(c)
    if n < 0x10000:
        return f"\\u{n:04x}"
    n -= 0x10000
    return f"\\u{0xD800 + (n >> 10):04x}\\u{0xDC00 + (n & 0x3FF):04x}"


def escape_json(text: str) -> str:
    """JSON text (one document per line) with every character that is not printable, but
    the newlines between documents, written as a JSON escape: the same data, safe to show.
    Such characters can only be inside strings, where `\\uXXXX` means the same."""
    lines = text.split("\n")
    return "\n".join(ln if ln.isprintable() else "".join(c if c.isprintable() else _json_escape(c) for c in ln) for ln in lines)
