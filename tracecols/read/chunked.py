"""The elements of a document's big array, decoded in blocks of about a megabyte cut between elements.

ijson's C backend builds the Python objects one parser event at a time. msgspec decodes a
whole buffer about 2.5x faster into the very same objects: integers as int (of any size),
every other number as an exact Decimal of its text (jsontext.Exact, a Decimal that pyarrow
will not truncate into an integer column), strings, lists, dicts with the last of duplicate
keys. So the array is read in blocks; each block is cut after its last `}` `,` `{` (the last
one before a `{` that opens with the first element's first key, where there is one) and the
part before the cut is decoded as the document "[" + part + "]".

A part decodes only if its cut lies between two elements of the array: a cut inside a
string leaves that string unterminated, a cut inside a nested value leaves a bracket open.
Parts therefore begin on element boundaries, by induction from the array's `[`. The first
part that does not decode (bad JSON, a cut inside a value, something msgspec declines such
as a lone surrogate escape) and always the last one (which holds the keys after the array)
go to ijson: it reads the rest of the stream from that part's first byte, behind a made-up
opening (`{"traceEvents": [`), and so parses it exactly as a whole-ijson read would, with the
same objects, the same errors and offsets counted in the real stream.
"""

import re

import ijson

from .jsontext import decode_block
from .nesting import Nesting, check
from .toplevel import find_tail

READ = 1 << 16  # one read of the underlying stream (error offsets are this precise)
BLOCK = 1 << 20  # bytes decoded per part, about 4k events (the Python objects of a part are held at once)
HEAD_MAX = 1 << 26  # a head longer than this (before the array) is left to ijson
_CUT = re.compile(rb"\}\s*,\s*\{")
_FIRST_KEY = re.compile(rb'\s*\{\s*("[^"\\]{1,64}")\s*:')
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")  # a surrogate escape: maybe a lone one


class _Decoder:
    """The decoder of the parts (jsontext.decode_block: msgspec, else the json module), as an object
    with `decode`, so that a test can count what it decodes."""

    @staticmethod
    def decode(data):
        return decode_block(data)


_DECODE = _Decoder()


class _Counted:
    """The stream as ijson sees it after a handover: `opening` + `pending` + the rest of `f`,
    with `offset` the position in the real stream (negative inside the made-up opening).
    Its nesting is bounded (nesting.py): ijson's memory grows with the square of the depth."""

    def __init__(self, f, opening, pending, offset, path):
        self.f, self.head, self.offset = f, opening + pending, offset - len(opening)
        self.path, self.nesting = path, Nesting()

    def read(self, n=-1):
        if self.head:
            out, self.head = self.head[:n], self.head[n:]
        else:
            out = self.f.read(n)
        check(self.nesting, out, self.path, self.offset)
        self.offset += len(out)
        return out


class _Rest:
    """The tap of a stream whose last part was decoded here: the bytes after the array."""

    def __init__(self, after):
        self.after = after

    def tail_bytes(self):
        return self.after


class Items:
    """Iterator over the elements of the array at `prefix` ("item" for a bare array, "<key>.item"
    for a top-level key) of the binary stream `f`; `offset` is how far the stream has been read.

    `ijson_items(reader, prefix)` is the exact parser's items function; `tap(reader)` wraps
    the reader ijson gets so that the caller can find the bytes after the array
    (kineto._Tap); once the array has been read, `tap` is that wrapper.
    """

    def __init__(self, f, prefix, ijson_items, tap, path="<stream>"):
        self.f, self.prefix, self.path = f, prefix, path
        key = prefix[: -len(".item")] if prefix != "item" else None
        self.key = key
        self._opening = b"[" if key is None else b'{"' + key.encode() + b'": ['
        self._ijson, self._tap_of = ijson_items, tap
        self._read = 0  # bytes read from f by the fast path
        self._counted = None  # the stream ijson reads, once it has been handed over
        self._cuts: tuple[re.Pattern[bytes], ...] = (_CUT,)  # the patterns of a cut, the likeliest first (see _cut_patterns)
        self.tap = None  # ... and the caller's wrapper around it

    @property
    def offset(self):
        return self._counted.offset if self._counted is not None else self._read

    def _more(self):
        parts = []
        n = 0
        while n < BLOCK:
            b = self.f.read(READ)
            if not b:
                break
            parts.append(b)
            n += len(b)
            self._read += len(b)
        return b"".join(parts)

    def __iter__(self):
        for run in self.runs():
            yield from run

    def runs(self):
        """The elements as lists of consecutive elements (a decoded part at a time), which
        spares the caller a Python step per element."""
        buf = self._more()
        start = self._array_start(buf)
        while start is None and len(buf) < HEAD_MAX:
            more = self._more()
            if not more:
                break
            buf += more
            start = self._array_start(buf)
        if start is None:
            yield from self._hand_over(b"", buf, 0)
            return
        base, pos = 0, start  # buf[pos] is in the stream at base + pos, on an element boundary
        self._cuts = _cut_patterns(buf, start)
        while True:
            cut = self._last_cut(buf, pos, self._cuts)
            if cut is not None:
                end, nxt = cut
                try:
                    elements = _DECODE.decode(b"[" + buf[pos:end] + b"]")
                except (ValueError, RecursionError):
                    elements = None  # bad JSON, or a cut inside a string: a later cut may decode
                if elements is not None:
                    yield elements
                    pos = nxt
            if len(buf) - pos > 4 * BLOCK:  # no cut that decodes in sight (one huge element?): not worth it
                break
            more = self._more()
            if not more:
                last = self._last_part(buf[pos:])
                if last is not None:
                    yield last
                    return
                break
            buf, base, pos = buf[pos:] + more, base + pos, 0
        yield from self._hand_over(self._opening, buf[pos:], base + pos)

    def _last_part(self, rest):
        """The elements of `rest`, the stream's last bytes from an element boundary on, when they
        decode (then `tap` holds the bytes after the array); else None, and ijson reads them, as
        it does a part the decoders decline (for its exact errors)."""
        if self.key is None:
            body = rest.rstrip()
            if body[-1:] != b"]":
                return None
            end, after = len(body) - 1, b""
        else:
            found = find_tail(rest)
            if found is None:
                return None
            end = found[0]
            after = rest[end:]
        try:
            elements = _DECODE.decode(b"[" + rest[:end] + b"]")
        except (ValueError, RecursionError):
            return None
        if type(elements) is not list:
            return None
        self.tap = _Rest(after)
        return elements

    def _hand_over(self, opening, pending, offset):
        """ijson from `pending` on (see _Counted), as runs of one element."""
        self._counted = _Counted(self.f, opening, pending, offset, self.path)
        self.tap = self._tap_of(self._counted)
        items = self._ijson
        if _SURROGATE.search(pending):  # ijson's C backend cannot read lone surrogates, its Python one can
            items = ijson.get_backend("python").items
        for item in items(self.tap, self.prefix):
            yield (item,)
            self.tap.mark = self.tap.n

    def _array_start(self, buf):
        """Offset just past the array's `[` in `buf`, or None (not found, or not certain)."""
        if self.key is None:
            body = buf.lstrip()
            return len(buf) - len(body) + 1 if body[:1] == b"[" else None
        pattern = re.compile(rb'"' + re.escape(self.key.encode()) + rb'"\s*:\s*\[')
        for m, _ in zip(pattern.finditer(buf), range(8)):  # the first few: a key may hide in a string
            try:  # the match is the key itself only if all before it is the head of the object
                head = _DECODE.decode(buf[: m.end()] + b"]}")
            except (ValueError, RecursionError):
                continue
            if type(head) is dict and next(reversed(head)) == self.key and head[self.key] == []:
                return m.end()
        return None

    @staticmethod
    def _last_cut(buf, pos, patterns=(_CUT,)):
        """(end of the last element before a `}` `,` `{` after `pos`, start of the next), or None;
        by the first of `patterns` (each matches `}` `,` and an opening `{`) found after `pos`."""
        for cut in patterns:
            last = None
            for lo in (max(pos, len(buf) - READ), pos):
                for m in cut.finditer(buf, lo):
                    last = m
                if last is not None:
                    return last.start() + 1, buf.index(b"{", last.start() + 1)
        return None


def _cut_patterns(buf: bytes, start: int) -> tuple[re.Pattern[bytes], ...]:
    """Where to cut the array that starts at `buf[start]`: before an element that opens with the
    key its first element opens with, else before any `{`. Elements hold objects too (an ET
    node's attrs, an event's args), and a cut before one of those leaves a bracket open: the part
    fails to decode and grows. A cut before an element's own first key nearly always decodes."""
    m = _FIRST_KEY.match(buf, start)
    if m is None:
        return (_CUT,)
    return (re.compile(rb"\}\s*,\s*\{\s*" + re.escape(m.group(1)) + rb"\s*:"), _CUT)
