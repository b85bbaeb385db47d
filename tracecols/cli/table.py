"""The one table style of the command line: a title, a header row and aligned columns with
units (report/units.py), text left and numbers right. Every cell is escaped and cut
(printable.py), so no string from a trace can move the cursor, colour the terminal, start
a new line or outgrow its column."""

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import IO, Any

from ..printable import printable
from ..report.units import column_format, is_number

GAP = "  "


@dataclass(frozen=True)
class Col:
    """One column: its header, how a value reads (`fmt`), the most characters it shows (a
    longer cell is cut with …), whether it is aligned right, and which end of a cut cell stays
    (`keep="end"` for call paths, whose last frame matters most)."""

    header: str
    fmt: Callable[[Any], str] = str
    width: int = 40
    right: bool = False
    keep: str = "start"


def text(v: Any) -> str:
    """A text cell: None reads `-`."""
    return "-" if v is None else str(v)


def render(
    cols: Sequence[Col],
    rows: Iterable[Sequence[Any]],
    title: str | None = None,
    indent: str = GAP,
    empty: str | None = "(none)",
) -> str:
    """The table as lines of text; each column as wide as its widest cell (within its width).
    No rows: the `empty` line instead of the header (the header alone where it is None)."""
    cells = [[printable(c.fmt(v), c.width, c.keep) for c, v in zip(cols, row)] for row in rows]
    heads = [printable(c.header, max(c.width, 1)) for c in cols]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(heads)]
    out = [] if title is None else [printable(title)]
    if not cells and empty is not None:
        return "\n".join(out + [indent + "(none)"]) + "\n"

    def line(values):
        parts = [v.rjust(w) if c.right else v.ljust(w) for c, v, w in zip(cols, values, widths)]
        return (indent + GAP.join(parts)).rstrip()

    out.append(line(heads))
    out += [line(r) for r in cells]
    return "\n".join(out) + "\n"


def write(out: IO[str], title: str | None, cols: Sequence[Col], rows: Iterable[Sequence[Any]]) -> None:
    """The table after a blank line (the summary's sections)."""
    out.write("\n" + render(cols, rows, title))


def columns(names: Sequence[str], rows: Sequence[Sequence[Any]], width: int = 60) -> list[Col]:
    """Columns for a result whose names are those of the views: each takes the unit its
    name says (report/units.column_format); a column of numbers is aligned right."""
    out = []
    for i, name in enumerate(names):
        numbers = any(is_number(r[i]) for r in rows) and all(r[i] is None or is_number(r[i]) for r in rows)
        out.append(Col(name, column_format(name, numbers), width=width, right=numbers))
    return out


def frame_text(df: Any, more: bool = False) -> str:
    """A polars DataFrame (or an Arrow table) as a table of this style; `more` adds a line
    saying that rows were left out."""
    if hasattr(df, "column_names"):  # Arrow
        names = list(df.column_names)
        rows = list(zip(*(c.to_pylist() for c in df.columns)))
    else:
        names, rows = list(df.columns), list(df.iter_rows())
    text_ = render(columns(names, rows), rows, empty=None)
    n = len(rows)
    tail = GAP + f"({'first ' if more else ''}{n:,} row{'s' if n != 1 else ''}{'; raise --max-rows for more' if more else ''})\n"
    return text_ + tail
