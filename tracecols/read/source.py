"""Open a trace from a local path or an fsspec URL as a stream of decompressed bytes.

Compression is detected from the magic bytes, never from the file name: profilers
and users rename files freely.
"""

import gzip
import hashlib
import importlib
import os
import sys
import zlib
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

from ..errors import Malformed, SourceIOError
from ..progress import tracker


def _module(name, fallback):
    try:
        return importlib.import_module(name)
    except ImportError:
        return fallback


# ISA-L inflates the same gzip bytes 2.3-3x faster (docs/performance.md); the standard modules
# where it is not installed
fast_gzip = _module("isal.igzip", gzip)
fast_zlib = _module("isal.isal_zlib", zlib)

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def is_url(path):
    return "://" in str(path)


def _open_raw(path):
    path = str(path)
    try:
        if is_url(path):
            import fsspec

            return fsspec.open(path, "rb").open()
        return open(path, "rb")
    except FileNotFoundError:
        raise SourceIOError(path, "no such file") from None
    except IsADirectoryError:
        raise SourceIOError(path, "is a directory, not a trace file") from None
    except OSError as e:
        raise SourceIOError(path, e.strerror or str(e)) from None


def file_size(path):
    path = str(path)
    if is_url(path):
        import fsspec

        fs, p = fsspec.core.url_to_fs(path)
        return fs.size(p)
    return os.path.getsize(path)


def hash_file(path, block=8 << 20):
    """(size, sha256) of the raw bytes of a file or URL, read in large blocks (hashlib
    releases the GIL on them, so this can run on a thread beside the parser)."""
    h = hashlib.sha256()
    n = 0
    with _open_raw(path) as f:
        while True:
            b = f.read(block)
            if not b:
                break
            h.update(b)
            n += len(b)
    return n, h.hexdigest()


class Reader:
    """Base of the pass-through readers: a file object over `self.inner` whose subclasses
    define read(n); readinto, close and the context manager come from here."""

    inner: Any = None
    read: Callable[[int], bytes]  # defined by each subclass

    def readinto(self, buf):
        b = self.read(len(buf))
        buf[: len(b)] = b
        return len(b)

    def readable(self):
        return True

    def close(self):
        self.inner.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class _HashingReader(Reader):
    """Pass-through reader that hashes and counts the raw bytes as they stream by."""

    def __init__(self, raw):
        self.raw = self.inner = raw
        self.sha = hashlib.sha256()
        self.nbytes = 0

    def read(self, n=-1):
        b = self.raw.read(n)
        self.sha.update(b)
        self.nbytes += len(b)
        tracker().read(len(b))
        return b


_noted: set[str] | None = None


@contextmanager
def inputs_noted():
    """Within the block, every input opened is noted (opened_inputs): the output writers
    (store/atomic.py) refuse to write over one."""
    global _noted
    outer, _noted = _noted, set()
    try:
        yield
    finally:
        _noted = outer


def note_input(path):
    if _noted is not None and not is_url(str(path)):
        _noted.add(os.path.realpath(path))


def opened_inputs():
    return frozenset(_noted or ())


class Source:
    """One input file: `stream()` gives decompressed bytes; raw size and sha256 are known after a full read."""

    def __init__(self, path):
        self.path = str(path)
        note_input(self.path)
        self.size = file_size(self.path) if is_url(self.path) or os.path.exists(self.path) else None
        with _open_raw(self.path) as f:
            head = f.read(4)
        if not head:
            raise Malformed(self.path, "empty file", offset=0)
        self.gzip = head[:2] == GZIP_MAGIC
        if head == ZSTD_MAGIC:
            raise Malformed(self.path, "zstd-compressed; decompress it first (only gzip is read directly)", offset=0)
        self._hasher = None
        self._digest = None

    def stream(self, hashed=False):
        """A binary file object of the decompressed content (caller closes it).

        Reading it raises Malformed at a run of digits too long for Python to convert to an
        int (see _DigitGuard), and the gzip module's errors (GZIP_ERRORS) on bad gzip data.
        """
        raw = _open_raw(self.path)
        if hashed:
            raw = self._hasher = _HashingReader(raw)
        return _DigitGuard(fast_gzip.GzipFile(fileobj=raw, mode="rb") if self.gzip else raw, self.path)

    def gzip_fault(self, offset=None):
        """None when the input is not gzip or its compressed stream is sound; else a Malformed
        saying what is wrong with it (corrupt or truncated) and where zlib noticed.

        A parser reading through GzipFile may see garbage before zlib notices the damage (or
        the CRC-32/length check at the end fails only after the parse error), so the readers
        call this when parsing a gzip input fails, and report the gzip fault when there is one.
        `offset` is the decompressed byte where the parse failed (where the damage shows): the
        error's offset for corrupt data; without it, and for a truncated file, the decompressed
        byte where zlib noticed (for a truncated file, the end of the content).
        """
        if not self.gzip:
            return None
        try:
            fault = _check_gzip(self.path)
        except (OSError, SourceIOError):
            return None
        if fault is None:
            return None
        kind, reason, at, out = fault
        where = f"(at compressed byte {at} / decompressed byte {out})"
        if kind == "truncated":
            msg = f"truncated gzip file: the compressed data ends before the gzip end-of-stream marker {where}"
            offset = out
        else:
            msg = f"corrupt gzip data: {reason} {where}"
        return Malformed(self.path, msg, offset=out if offset is None else offset)

    def fault(self, message, offset=None):
        """The error for a parse failure at decompressed byte `offset`: the gzip fault when
        the input is a damaged gzip stream, else Malformed(message)."""
        return self.gzip_fault(offset) or Malformed(self.path, message, offset=offset)

    def gzip_error(self, e, offset=None):
        """The error for an exception of GZIP_ERRORS raised while reading the stream."""
        fault = self.gzip_fault(offset)
        if fault is not None:
            return fault
        msg = e.args[0] if e.args else str(e)
        msg = " ".join(str(msg).split())
        if isinstance(e, EOFError):
            return Malformed(self.path, f"truncated gzip file: {msg}", offset=offset)
        return Malformed(self.path, f"corrupt gzip data: {msg}", offset=offset)

    def digested(self, size, sha256):
        """Record the raw size and sha256 of the file, hashed beside a read that did not stream it here."""
        self._digest = (size, sha256)

    @property
    def sha256(self):
        if self._digest is not None:
            return self._digest[1]
        return self._hasher.sha.hexdigest() if self._hasher else None

    @property
    def read_size(self):
        """Bytes of the file as its hashed stream read them, else its size on disk."""
        if self._digest is not None:
            return self._digest[0]
        return self._hasher.nbytes if self._hasher else self.size


GZIP_ERRORS = (gzip.BadGzipFile, zlib.error, fast_zlib.error, EOFError)


# ---------------------------------------------------------------------------------------
# Checking a gzip stream: where is it corrupt, or does it end early?

_CHUNK = 1 << 16
_MAX_OUT = 1 << 20  # decompressed bytes per zlib call: a highly compressible member stays bounded in memory

_ZLIB_REASONS = {
    "incorrect data check": "incorrect data check (the content does not match the CRC-32 in the gzip trailer)",
    "incorrect length check": "incorrect length check (the content does not match the length in the gzip trailer)",
}


def _zlib_reason(e):
    """zlib's reason, without the 'Error -3 while decompressing data:' prefix."""
    msg = str(e.args[0] if e.args else e)
    msg = msg.split(": ", 1)[1] if msg.startswith("Error ") and ": " in msg else msg
    msg = " ".join(msg.split())
    return _ZLIB_REASONS.get(msg, msg)


def _inflate(d, data):
    """Feed `data` to decompressor `d`; returns the number of decompressed bytes (not kept)."""
    n = len(d.decompress(data, _MAX_OUT))
    while d.unconsumed_tail and not d.eof:
        n += len(d.decompress(d.unconsumed_tail, _MAX_OUT))
    return n


def _check_gzip(path):
    """Decompress the whole gzip file at `path` (discarding the output), checking every
    member's CRC-32 and length the way GzipFile reads it (members back to back, zero padding
    after the last one allowed).

    Returns None if the stream is sound, else (kind, reason, compressed offset, decompressed
    offset) with kind "corrupt" or "truncated". The compressed offset of corrupt data is the
    byte at which zlib noticed; the damage is at or before it.
    """
    pos = out = 0  # compressed bytes read before the current chunk; decompressed bytes so far
    d, members = None, 0
    with _open_raw(path) as f:
        while True:
            buf = f.read(_CHUNK)
            if not buf:
                break
            i = 0
            while i < len(buf):
                if d is None:  # before a member: skip zero padding; anything else starts a member
                    rest = buf[i:].lstrip(b"\0")
                    i = len(buf) - len(rest)
                    if not rest:
                        break
                    d, members, member_at = zlib.decompressobj(16 + zlib.MAX_WBITS), members + 1, pos + i
                piece = buf[i:]
                before = d.copy()
                try:
                    out += _inflate(d, piece)
                except zlib.error:
                    # replay the piece a byte at a time to find the byte at which zlib notices
                    for k in range(len(piece)):
                        try:
                            out += _inflate(before, piece[k : k + 1])
                        except zlib.error as e2:
                            e, at = e2, pos + i + k
                            break
                    else:
                        at = pos + len(buf)
                    reason = _zlib_reason(e)
                    if members > 1 and reason == "incorrect header check":  # where the junk starts
                        reason, at = "data after the end of the gzip stream that is not another gzip member", member_at
                    return "corrupt", reason, at, out
                if d.eof:
                    i += len(piece) - len(d.unused_data)
                    d = None
                else:
                    i = len(buf)
            pos += len(buf)
    if d is not None or members == 0:
        return "truncated", None, pos, out
    return None


# ---------------------------------------------------------------------------------------
# Digit runs too long for int().

_DIGITS = b"0123456789"


class _DigitGuard(Reader):
    """Pass-through reader of the decompressed content that raises Malformed at a run of more
    digits than Python converts to an int (sys.get_int_max_str_digits(), 4300 by default).

    ijson's C backend crashes the process (a segfault) on such a number instead of raising,
    and corrupt gzip data decompresses to such runs readily (a zeroed block inflates to runs
    of one repeated byte). No trace holds numbers that long; a run that long inside a JSON
    string is rejected too (the guard does not track strings).

    Cheap on real data: it looks at every S-th byte (S = half the limit) and only examines the
    stretch between two sampled digits when the whole stretch is digits.
    """

    def __init__(self, f, path):
        self.f = self.inner = f
        self.path = path
        self.limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()
        self.stride = max(1, (self.limit + 1) // 2)
        self.pos = 0  # decompressed bytes returned so far
        self.carry = 0  # length of the digit run the bytes so far end with

    def _fail(self, start):
        raise Malformed(
            self.path,
            f"a run of more than {self.limit} digits: no trace holds a number that long "
            "(Python will not convert it; corrupt data?)",
            offset=start,
        )

    def _check(self, b):
        n, limit, s = len(b), self.limit, self.stride
        lead = n - len(b.lstrip(_DIGITS))
        if self.carry + lead > limit:
            self._fail(self.pos - self.carry)
        if lead == n:
            self.carry += n
            return
        samples = b[::s]
        for k in range(len(samples) - 1):
            if samples[k] in _DIGITS and samples[k + 1] in _DIGITS and b[k * s : (k + 1) * s + 1].isdigit():
                start = len(b[: k * s].rstrip(_DIGITS))
                end = n - len(b[k * s :].lstrip(_DIGITS))
                if end - start > limit:
                    self._fail(self.pos + start)
        self.carry = n - len(b.rstrip(_DIGITS))

    def read(self, n=-1):
        b = self.f.read(n)
        if self.limit and b:
            self._check(b)
        self.pos += len(b)
        return b
