"""Open a trace from a local path or an fsspec URL as a stream of decompressed bytes.

Compression is detected from the magic bytes, never from the file name: profilers
and users rename files freely.
"""
import gzip
import hashlib
import os
import zlib

from ..errors import Malformed, SourceIOError

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


class _HashingReader:
    """Pass-through reader that hashes and counts the raw bytes as they stream by."""

    def __init__(self, raw):
        self.raw = raw
        self.sha = hashlib.sha256()
        self.nbytes = 0

    def read(self, n=-1):
        b = self.raw.read(n)
        self.sha.update(b)
        self.nbytes += len(b)
        return b

    def readinto(self, buf):
        b = self.read(len(buf))
        buf[: len(b)] = b
        return len(b)

    def readable(self):
        return True

    def close(self):
        self.raw.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Source:
    """One input file: `stream()` gives decompressed bytes; raw size and sha256 are known after a full read."""

    def __init__(self, path):
        self.path = str(path)
        self.size = file_size(self.path) if is_url(self.path) or os.path.exists(self.path) else None
        with _open_raw(self.path) as f:
            head = f.read(4)
        if not head:
            raise Malformed(self.path, "empty file", offset=0)
        self.gzip = head[:2] == GZIP_MAGIC
        if head == ZSTD_MAGIC:
            raise Malformed(self.path, "zstd-compressed; decompress it first (only gzip is read directly)", offset=0)
        self._hasher = None

    def stream(self, hashed=False):
        """A binary file object of the decompressed content (caller closes it)."""
        raw = _open_raw(self.path)
        if hashed:
            raw = self._hasher = _HashingReader(raw)
        return gzip.GzipFile(fileobj=raw, mode="rb") if self.gzip else raw

    @property
    def sha256(self):
        return self._hasher.sha.hexdigest() if self._hasher else None


GZIP_ERRORS = (gzip.BadGzipFile, zlib.error, EOFError)
