"""How times and shares read on screen and in the report: one formatter each."""


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
