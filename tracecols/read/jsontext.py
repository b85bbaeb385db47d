"""JSON text for values that ijson parsed, keeping decimal numbers exactly as written.

ijson returns non-integer numbers as `Decimal` (exact). The json module cannot write
those, so a value holding one is written by a small recursive encoder instead.
"""
import json
from decimal import Decimal

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def dumps(obj):
    try:
        return _dumps(obj)
    except TypeError:
        return _encode(obj)


def _encode(obj):
    if isinstance(obj, Decimal):
        return str(obj)  # "1.5", "1E+400": valid JSON numbers; JSON has no NaN to carry
    if isinstance(obj, dict):
        return "{" + ",".join(_dumps(str(k)) + ":" + _encode(v) for k, v in obj.items()) + "}"
    if isinstance(obj, list):
        return "[" + ",".join(_encode(v) for v in obj) + "]"
    return _dumps(obj)


def loads(text):
    """Parse JSON text back with exact decimals (the inverse of `dumps`)."""
    return json.loads(text, parse_float=Decimal)
