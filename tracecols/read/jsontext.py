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
# a string with a lone surrogate (which JSON's \u escapes can carry, and UTF-8 cannot) is written
# with every non-ASCII character escaped: the text stays valid UTF-8 and reads back the same
_ascii = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode


def dumps(obj):
    try:
        return _fast(obj).decode()
    except (TypeError, ValueError, UnicodeError, msgspec.EncodeError):
        pass
    text = _encode(obj, _dumps)
    return text if utf8(text) else _encode(obj, _ascii)


def utf8(text):
    """Whether `text` can be written as UTF-8 (it holds no lone surrogate)."""
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def _encode(obj, dump):
    if isinstance(obj, Decimal):
        return str(obj)  # "1.5", "1E+400": valid JSON numbers; JSON has no NaN to carry
    if isinstance(obj, dict):
        return "{" + ",".join(dump(str(k)) + ":" + _encode(v, dump) for k, v in obj.items()) + "}"
    if isinstance(obj, list):
        return "[" + ",".join(_encode(v, dump) for v in obj) + "]"
    return dump(obj)


def _no_constant(name):
    raise ValueError(f"{name} is not JSON")


_decode_fast = msgspec.json.Decoder(float_hook=Exact).decode
_decode_json = json.JSONDecoder(parse_float=Exact, parse_constant=_no_constant).decode


def decode_block(data):
    """Parse JSON bytes into the reader's objects (ints, Exact decimals, str, list, dict with the
    last of duplicate keys): by msgspec, else by the json module, which also takes strings with
    lone surrogates (msgspec refuses them); raises ValueError (or RecursionError) when neither can."""
    try:
        return _decode_fast(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        pass
    try:
        return _decode_json(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ValueError(str(e)) from None


def loads(text):
    """Parse JSON text back with exact decimals (the inverse of `dumps`)."""
    return json.loads(text, parse_float=Decimal)
