"""How times, shares, sizes and rates read on screen and in the report: one formatter each,
and which one a column of the views takes, by its name (sql/ headers name every unit)."""

import json
from collections.abc import Callable
from decimal import Decimal


def time_unit(max_ns):
    """(divisor, unit label) that makes max_ns readable."""
    for div, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
        if max_ns >= div:
            return div, unit
    return 1.0, "ns"


def fmt_ns(v, missing="-"):
    """A duration in ns as `1.234 ms` (three decimals in the largest unit below it), `17 ns`."""
    if v is None:
        return missing
    div, unit = time_unit(abs(float(v)))
    return f"{float(v) / div:.3f} {unit}" if div > 1 else f"{float(v):.0f} ns"


def fmt_pct(v):
    return "-" if v is None else f"{v:.1f}%"


def fmt_bytes(n, missing="-"):
    """A size in bytes as `512 B`, `1.5 MB` (units of 1024)."""
    if n is None:
        return missing
    n = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def fmt_number(v, missing="-"):
    """A number as itself: integers whole (ids, counts), other numbers with three decimals
    (`97.225`, `1,234.500`), very large or very small ones in e-notation."""
    if v is None:
        return missing
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int):
        return str(v)
    f = float(v)
    if f != 0 and not 1e-3 <= abs(f) < 1e15:
        return f"{f:.3e}"
    return f"{f:,.3f}"


def _rate(unit, scale=1.0, digits=2):
    def fmt(v, missing="-"):
        return missing if v is None else f"{float(v) * scale:,.{digits}f} {unit}"

    return fmt


fmt_tflops = _rate("TFLOP/s")
fmt_gb_per_s = _rate("GB/s")

# the last words of a `_ns` column that make it a point in time (ts_ns, window_start_ns,
# gap_end_ns, bucket_lo_ns), shown as the integer it is; every other `_ns` column is a duration
_INSTANT = ("ts", "start", "end", "first", "last", "lo", "hi")


def _is_instant(name):
    words = name[: -len("_ns")].split("_")
    return words[-1] in _INSTANT or name in ("peak_ns", "base_time_ns")


def _text(v, missing="-"):
    if v is None:
        return missing
    if isinstance(v, (list, dict)):
        return json.dumps(v, default=str, ensure_ascii=False)
    return str(v)


def column_format(name: str, value_is_number: bool = True) -> Callable:
    """The formatter for a column of the views by its name: `_ns` durations as times,
    `_pct` as %, `_bytes` as sizes, `…tflops…` as TFLOP/s, `…tb_per_s`, `…gb_per_s` and
    `bytes_per_s` as GB/s or TB/s; numbers otherwise as `fmt_number`, text as itself."""
    n = name.lower()
    if not value_is_number:
        return _text
    if n.endswith("_ns"):
        return fmt_number if _is_instant(n) else fmt_ns
    if n.endswith("_pct") or n.startswith("pct_"):
        return fmt_pct
    if n.endswith("tflops_per_s") or n.endswith("_tflops"):
        return fmt_tflops
    if n.endswith("tb_per_s"):
        return _rate("TB/s", digits=3)
    if n.endswith("gb_per_s"):
        return fmt_gb_per_s
    if n.endswith("bytes_per_s"):
        return _rate("GB/s", scale=1e-9)
    if n.endswith("_bytes"):
        return fmt_bytes
    return fmt_number


def is_number(v) -> bool:
    return isinstance(v, (int, float, Decimal)) and not isinstance(v, bool)
