"""Rebuild the original trace event (as a dict) from an `events` row: the inverse of ingest.

Used to prove losslessness in the tests and to write traces back out.
"""

from decimal import Decimal

from . import jsontext
from .schema import PROMOTED

_ID_FIELDS = [("pid", "pid", "pid_str"), ("tid", "tid", "tid_str"), ("id", "flow_id", "flow_id_str")]
_STR_FIELDS = [("ph", "ph"), ("cat", "cat_raw"), ("name", "name"), ("bp", "bp"), ("s", "scope")]


def us(ns):
    """int ns -> the µs value a trace writes for it, exactly: an int when whole, else a Decimal
    (ts and dur of a rebuilt event, of an event written into a trace, of a converted file)."""
    if ns % 1000 == 0:
        return ns // 1000
    return Decimal(ns).scaleb(-3)


def restore_event(row):
    """`row`: a dict of one events row (RAW_SCHEMA columns). Returns the event dict."""
    e = {}
    for key, col in _STR_FIELDS:
        if row.get(col) is not None:
            e[key] = row[col]
    for key, num, text in _ID_FIELDS:
        if row.get(text) is not None:
            e[key] = row[text]
        elif row.get(num) is not None:
            e[key] = row[num]
    if row.get("ts_ns") is not None:
        e["ts"] = us(row["ts_ns"])
    if row.get("dur_ns") is not None:
        e["dur"] = us(row["dur_ns"])
    args = {}
    for key, col, _kind in PROMOTED:
        v = row.get(col)
        if v is not None:
            args[key] = v
    if row.get("args") is not None:
        args.update(jsontext.loads(row["args"]))
    if args or row.get("args") is not None:
        e["args"] = args
    if row.get("extra") is not None:
        e.update(jsontext.loads(row["extra"]))
    return e
