"""The keys of a JSON document's top-level object that come before one big array.

Kineto traces hold `traceEvents`, Execution Traces `nodes`; whatever metadata precedes that
array is read here by a short token walk (the big array itself is streamed elsewhere).
"""

import json
import re
import sys
from collections.abc import Callable
from decimal import Decimal
from typing import Any, cast

import ijson

from ..errors import Malformed, NotATrace
from .nesting import Bounded
from .source import GZIP_ERRORS

CHUNK = 1 << 16
_warned = False  # said once that the C backend is missing


def ijson_backend():
    """ijson with the C backend when it is there (it is ~10x faster); says once when it is not."""
    global _warned
    try:
        return ijson.get_backend("yajl2_c")
    except Exception:
        if not _warned:
            print(
                f"tracecols: ijson's C backend (yajl2_c) is unavailable; parsing with the slower '{ijson.backend}' backend",
                file=sys.stderr,
            )
            _warned = True
        return ijson


_BOMS = [  # longest first: the UTF-32-LE mark begins with the UTF-16-LE one
    (b"\x00\x00\xfe\xff", "UTF-32 (big-endian)"),
    (b"\xff\xfe\x00\x00", "UTF-32 (little-endian)"),
    (b"\xfe\xff", "UTF-16 (big-endian)"),
    (b"\xff\xfe", "UTF-16 (little-endian)"),
]


def not_utf8(head):
    """Why JSON text starting with the bytes `head` is not UTF-8 (the encodings RFC 8259 names, by
    their byte-order mark or by where the zero bytes of the first ASCII characters fall), or None."""
    if head.startswith(b"\xef\xbb\xbf"):
        return "it starts with a UTF-8 byte-order mark, which JSON text must not have: remove the first 3 bytes"
    name: str | None
    for mark, name in _BOMS:
        if head.startswith(mark):
            return f"{name} text with a byte-order mark; tracecols reads UTF-8 JSON: convert it (iconv -t UTF-8)"
    zeros = tuple(b == 0 for b in head[:4])
    name = (
        {
            (True, True, True, False): "UTF-32 (big-endian)",
            (False, True, True, True): "UTF-32 (little-endian)",
            (True, False, True, False): "UTF-16 (big-endian)",
            (False, True, False, True): "UTF-16 (little-endian)",
        }.get(zeros)
        if len(head) >= 4
        else None
    )
    return f"{name} text; tracecols reads UTF-8 JSON: convert it (iconv -t UTF-8)" if name else None


def first_byte(src):
    """The first non-blank byte of the decompressed content (b'' for an empty document)."""
    with src.stream() as f:
        try:
            return f.read(1 << 12).lstrip()[:1]
        except GZIP_ERRORS as e:
            raise src.gzip_error(e) from None
        except Malformed as e:
            raise (src.gzip_fault(e.offset) or e) from None


def keys_before(src, stop, backend, on_key=None):
    """{key: value} of the top-level keys before `stop`; `on_key(key, meta)` may raise to reject.

    Raises NotATrace when the document has no top-level `stop` key.
    """
    meta: dict[str, Any] = {}
    builder, key, depth = None, None, 0
    with src.stream() as f:
        try:
            for prefix, event, value in backend.parse(Bounded(f, src.path), buf_size=CHUNK):
                if builder is not None:
                    builder.event(event, value)
                    if event in ("start_map", "start_array"):
                        depth += 1
                    elif event in ("end_map", "end_array"):
                        depth -= 1
                    if depth == 0:
                        assert key is not None  # a builder is made for a key only
                        meta[key] = builder.value
                        builder = None
                    continue
                if prefix == "" and event == "map_key":
                    if value == stop:
                        return meta
                    if on_key is not None:
                        on_key(value, meta)
                    key, depth = value, 0
                    builder = ijson.ObjectBuilder()
        except ijson.JSONError as e:
            raise src.fault(f"invalid JSON before {stop}: {one_line(e)}") from None
        except GZIP_ERRORS as e:
            raise src.gzip_error(e) from None
        except Malformed as e:
            raise (src.gzip_fault(e.offset) or e) from None
    raise NotATrace(src.path, f"no '{stop}' array (top-level keys: " + (", ".join(list(meta)[:8]) or "none") + ")")


def one_line(e):
    """An ijson / zlib error message as one line."""
    msg = e.args[0] if e.args else str(e)
    if isinstance(msg, bytes):
        msg = msg.decode("utf-8", "replace")
    return " ".join(str(msg).split("\n")[0].split())


_TAIL_START = re.compile(r"\]\s*(?=[,}])", re.ASCII)
_WS = re.compile(r"[ \t\n\r]*")
# `*`: it matches at every position, so its match is never None
_ws_match = cast(Callable[[str, int], re.Match[str]], _WS.match)
_VALUE = json.JSONDecoder(parse_float=Decimal)


def find_tail(region):
    """(offset in `region` of the `]` that closes traceEvents, the top-level keys after it), or None.

    `region` starts somewhere inside or before the last event. The true end of the array is
    the leftmost ']' whose remainder is a complete JSON object body running to EOF; a ']'
    inside an event leaves that event's closing braces unbalanced, so it never qualifies.
    Each candidate is parsed in place, one value at a time, and given up at the first thing that
    does not fit: at the latest where the element around it closes (parsing each remainder whole
    made this quadratic in the region: minutes for an Execution Trace of 3 MB, whose nodes hold
    thousands of `[]`).
    """
    try:
        text = region.decode("utf-8")
    except UnicodeDecodeError:  # where no remainder decodes, none is a tail; else compare bytes
        text = region.decode("utf-8", "surrogateescape")
    for m in _TAIL_START.finditer(text):
        obj = _object_body(text, m.end())
        if obj is None or "traceEvents" in obj:
            continue
        at = m.start() if text.isascii() else len(text[: m.start()].encode("utf-8", "surrogateescape"))
        try:
            region[at:].decode("utf-8")
        except UnicodeDecodeError:
            continue
        return at, obj
    return None


def _object_body(text, i):
    """The object `{` + text[i + 1:] when text[i] is `,`, or {} when it is `}`: with nothing but
    whitespace after its closing brace; else None."""
    end = len(text)
    obj = {}
    j = i + 1
    if text[i] == ",":
        j = _ws_match(text, j).end()
        if j < end and text[j] == "}":
            j += 1
        else:
            try:
                while True:
                    if j >= end or text[j] != '"':
                        return None
                    key, j = _VALUE.raw_decode(text, j)
                    j = _ws_match(text, j).end()
                    if j >= end or text[j] != ":":
                        return None
                    value, j = _VALUE.raw_decode(text, _ws_match(text, j + 1).end())
                    obj[key] = value
                    j = _ws_match(text, j).end()
                    if j < end and text[j] == ",":
                        j = _ws_match(text, j + 1).end()
                        continue
                    if j < end and text[j] == "}":
                        j += 1
                        break
                    return None
            except (ValueError, RecursionError):
                return None
    return obj if _ws_match(text, j).end() == end else None
