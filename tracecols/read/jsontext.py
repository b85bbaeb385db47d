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


class Exact(Decimal):
    """A JSON number with a fraction or an exponent, exactly as written (the decoders' float_hook).

    A Decimal in all but one way: it has no int(). pyarrow converts an object to an int64
    column through int(), which truncates a plain Decimal without a word (Decimal('1.5') -> 1),
    so a reader holding plain Decimals must check integer columns a second time; this one
    pyarrow refuses, and the value takes the exact path (batch._column).
    """

    __slots__ = ()

    def __int__(self) -> int:
        raise TypeError("a JSON number with a fraction or exponent has no exact int(): use Decimal(x)")


def _as_decimal(obj):
    if isinstance(obj, Decimal):  # Exact: msgspec encodes Decimal itself, not its subclasses
        return Decimal(obj)
    raise TypeError(f"cannot write a {type(obj).__name__} as JSON")


_fast = msgspec.json.Encoder(decimal_format="number", enc_hook=_as_decimal).encode
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
