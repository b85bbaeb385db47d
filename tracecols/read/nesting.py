"""A bound on how deeply a JSON document nests, checked on its bytes before ijson parses them.

ijson's parser keeps the path to the current value as a dotted prefix string per level, so
memory grows with the square of the depth: a 200 KB file of 100,000 nested arrays asks for
tens of GB. msgspec refuses such documents itself (about 1,000 levels); the bytes ijson
reads (the head before the events, the last part of the events and every part msgspec
declines) pass through here first. Real traces nest fewer than 10 levels.

The check is vectorised per chunk: escaped backslashes and quotes are dropped (with
bytes.replace), every byte but brackets and quotes is deleted (bytes.translate), and numpy
finds which brackets lie outside strings and the running depth. A chunk costs ~3 ms per MB.
"""

import numpy as np

from ..errors import Malformed

MAX_DEPTH = 900
_DROP = bytes(c for c in range(256) if c not in b'[]{}"')
_STEP = np.zeros(256, np.int64)
_STEP[[ord("["), ord("{")]] = 1
_STEP[[ord("]"), ord("}")]] = -1


class Nesting:
    """The nesting depth of a JSON text fed chunk by chunk."""

    def __init__(self, depth=0):
        self.depth = depth
        self.in_string = False
        self.carry = b""  # backslashes ending a chunk escape the next chunk's first byte

    def too_deep(self, chunk):
        """Feed the next chunk; whether the depth went beyond MAX_DEPTH within it."""
        data = self.carry + chunk
        body = data.rstrip(b"\\")
        self.carry = data[len(body) :]
        marks = np.frombuffer(body.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _DROP), np.uint8)
        if not len(marks):
            return False
        # 1 from an opening quote up to (not including) its closing quote
        inside = np.bitwise_xor.accumulate((marks == ord('"')).view(np.uint8)) ^ np.uint8(self.in_string)
        step = _STEP[marks]
        step[inside.view(bool)] = 0
        depth = np.cumsum(step) + self.depth
        self.in_string, self.depth = bool(inside[-1]), int(depth[-1])
        return int(depth.max()) > MAX_DEPTH


class Bounded:
    """A binary reader that raises Malformed once the document nests beyond MAX_DEPTH;
    `offset` is the position of the next byte in the real stream (for the message)."""

    def __init__(self, f, path, offset=0, depth=0):
        self.f, self.path, self.offset = f, path, offset
        self.nesting = Nesting(depth)

    def read(self, n=-1):
        b = self.f.read(n)
        check(self.nesting, b, self.path, self.offset)
        self.offset += len(b)
        return b


def check(nesting, chunk, path, offset):
    if nesting.too_deep(chunk):
        raise Malformed(
            path,
            f"JSON nested more than {MAX_DEPTH} levels deep within the {len(chunk):,} bytes "
            "from here (profiler traces nest fewer than 10)",
            offset=max(offset, 0),
        )
