"""JSON text for values that ijson parsed, keeping decimal numbers exactly as written.

ijson returns non-integer numbers as `Decimal` (exact). msgspec writes those as the number
they are (decimal_format="number": their str(), as written) and the rest exactly as the json
module with ensure_ascii=False and compact separators would, five to ten times faster;
what it declines (a lone surrogate, a NaN) goes to the json module and a small recursive
encoder for the Decimals.
"""
import json
from decimal import Decimal

import msgspec

_fast = msgspec.json.Encoder(decimal_format="number").encode
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def dumps(obj):
    try:
        return _fast(obj).decode()
    except (TypeError, ValueError, UnicodeError, msgspec.EncodeError):
        pass
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
