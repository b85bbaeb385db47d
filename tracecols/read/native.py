"""The compiled reader (rust/, built into the package as `tracecols._native`) behind read_events.

It reads the `traceEvents` array of a local file (plain or gzip) on threads that run without
the GIL, into record batches of RAW_SCHEMA with the Python reader's rules (read/batch.py), and
hands back, as their bytes, the few events whose row would depend on Python's own conversions
(an exponent in a number, escaped or duplicate keys, …): they are read here by the Python
reader's decoder and batch builder, so that every row is the one the Python reader gives.

The Python reader stays the reference: it reads where the extension is missing (one note on
stderr), where TRACECOLS_READER=python asks for it, for URLs and byte ranges of a file, and it
is what reports a malformed file: when the compiled reader stops on bad JSON or gzip data, the
Python reader reads the file again for its exact error (file, byte offset, what was expected).

Bounds (the compiled reader's memory does not grow with the file): pieces of PIECE bytes, at
most threads + 2 of them in flight; one event at most MAX_EVENT bytes, the JSON after the events
array at most MAX_TAIL bytes (whitespace outside strings not counted), nesting at most
nesting.MAX_DEPTH levels. A file beyond them fails with one line naming the bound.
"""

from __future__ import annotations

import importlib
import io
import os
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pyarrow as pa

from ..errors import Empty, Malformed
from ..progress import tracker
from . import jsontext
from .batch import build_batches
from .jsontext import decode_block
from .nesting import MAX_DEPTH
from .schema import PROMOTED, RAW_SCHEMA
from .source import GZIP_ERRORS, Source, fast_gzip, hash_file, is_url

try:
    # by name: the layers checker (pyproject.toml) would read `from .. import _native` as an import
    # of the package's __init__, whose lazy `open` and `Lake` are the API floor; the compiled
    # module itself imports nothing of tracecols
    _native: Any = importlib.import_module("tracecols._native")
except ImportError:  # a source checkout without the build, or a platform without a wheel
    _native = None

PIECE = 4 << 20
MAX_EVENT = 64 << 20
MAX_TAIL = 64 << 20
_SPEC = [(key, col, kind) for key, col, kind in PROMOTED]
_noted = False


def name() -> str:
    """Which reader reads local Kineto files here: "native" or "python" (and why not native)."""
    if os.environ.get("TRACECOLS_READER", "").lower() == "python":
        return "python (TRACECOLS_READER=python)"
    if _native is None:
        return "python (the compiled reader tracecols._native is not built)"
    return "native"


def usable(src: object) -> bool:
    """Whether `src` is read by the compiled reader: a whole local file, and the reader is there."""
    if type(src) is not Source or is_url(src.path) or not os.path.isfile(src.path):
        return False
    if os.environ.get("TRACECOLS_READER", "").lower() == "python":
        return False
    if _native is None:
        _note_missing()
        return False
    return True


def _note_missing() -> None:
    global _noted
    if not _noted:
        print("tracecols: the compiled reader is not built; reading with the Python reader (slower)", file=sys.stderr)
        _noted = True


class AnotherArray(Exception):
    """The document has another `traceEvents` array after the one read: the caller reads it again
    with `skip` arrays passed over (the last one counts, as JSON parsers keep the last of
    duplicate keys); the batches already handed over are to be dropped."""

    def __init__(self, skip: int):
        super().__init__(skip)
        self.skip = skip
        self.path: str | None = None


class Declined(Exception):
    """The compiled reader stopped where the Python reader must decide (bad JSON or gzip data,
    an event it could not decode): read the file again with the Python reader."""


def read_events(
    src: Source, form: str, on_batch: Callable[[pa.RecordBatch], None], threads: int = 1, skip: int = 0
) -> tuple[int, dict[str, Any]]:
    """The events of `src` to `on_batch`, as kineto.read_events; raises Declined where the Python
    reader must read the file (after batches may have gone to `on_batch`)."""
    progress = tracker()
    options = dict(
        array=form == "array",
        threads=max(1, threads),
        piece=PIECE,
        max_event=MAX_EVENT,
        max_tail=MAX_TAIL,
        max_depth=MAX_DEPTH,
        max_digits=getattr(sys, "get_int_max_str_digits", lambda: 0)(),  # the Python reader's guard (source.py)
        skip=skip,
    )
    with ThreadPoolExecutor(2) as beside:
        try:
            if src.gzip:  # inflated here by ISA-L (2-3x zlib's speed) on a thread of its own, fed to the reader
                reader = _native.EventReader(_SPEC, **options)
                pumped = beside.submit(_pump, src, reader)
            else:
                reader = _native.EventReader(_SPEC, path=src.path, **options)
                pumped = None
            digest = beside.submit(hash_file, src.path)  # hashlib releases the GIL
            with_ph, done = 0, 0
            try:
                while True:
                    out = reader.next_batch()
                    if out is None:
                        break
                    schema, array, odd, read = out
                    progress.read(read - done)
                    done = read
                    for b in _batches(schema, array, odd):
                        with_ph += len(b) - b.column("ph").null_count
                        progress.events(len(b))
                        on_batch(b)
            finally:
                reader.close()  # the threads end, and a feeder stops
                if pumped is not None:
                    pumped.result()
        except _native.ReadFailed as e:
            kind, offset, message = e.args
            if kind == "again":
                raise AnotherArray(skip + offset) from None  # offset: how many more arrays
            if kind == "bound":
                raise Malformed(src.path, f"{message} (TRACECOLS_READER=python reads it without this bound)", offset) from None
            raise Declined(message, offset) from None
        n = reader.events()
        src.digested(*digest.result())
    tail = _tail(src, form, reader.tail())
    if n == 0:
        raise Empty(src.path, "no events: its event array is empty")
    if not with_ph:
        raise Declined("no event has a 'ph' key", None)  # the Python reader says what the file is
    return n, tail


def _pump(src: Source, reader: Any) -> None:
    """Inflate gzip `src` into `reader` (its feed waits, without the GIL, while the reader is ahead)."""
    try:
        with fast_gzip.open(src.path, "rb") as f:
            while True:
                block = f.read(PIECE)
                if not reader.feed(block) or not block:
                    return
    except GZIP_ERRORS + (OSError,) as e:  # the Python reader's read again says what and where
        reader.fail(f"{type(e).__name__}: {e}")


def _tail(src: Source, form: str, tail: bytes | None) -> dict[str, Any]:
    """The top-level keys after the events array, from the bytes after its `]`."""
    if form == "array":
        if tail:
            raise Declined("data after the event array", None)
        return {}
    body = tail or b""
    if body[:1] == b",":
        body = b"{" + body[1:]
    elif body[:1] == b"}":
        body = b"{" + body
    else:
        raise Declined("the events array is not followed by ',' or '}'", None)
    try:
        obj = jsontext.loads(body)
    except (ValueError, RecursionError, UnicodeDecodeError):
        raise Declined("invalid JSON after the events array", None) from None
    if type(obj) is not dict or "traceEvents" in obj:
        raise Declined("a second traceEvents array", None)
    return obj


def _batches(schema: Any, array: Any, odd: list[tuple[int, bytes]]) -> list[pa.RecordBatch]:
    """The RAW_SCHEMA batches of one piece: the compiled reader's rows, then its odd events'."""
    got = pa.RecordBatch._import_from_c_capsule(schema, array)
    if not got.schema.equals(RAW_SCHEMA):  # a build of rust/ from another version of the package
        raise RuntimeError("tracecols._native does not build this version's events schema: rebuild it")
    out = [got] if got.num_rows else []
    if odd:
        events = [_event(raw) for _, raw in odd]
        uids = pa.array([uid for uid, _ in odd], pa.int64())
        for b in build_batches(events, 0, checked=True):
            out.append(b.set_column(0, "uid", uids.take(b.column(0))))
    return out


def _event(raw: bytes) -> Any:
    """One event as the Python reader decodes it: msgspec or the json module where they can, else ijson."""
    from .toplevel import ijson_backend

    try:
        return decode_block(raw)
    except (ValueError, RecursionError):
        pass
    try:
        return next(iter(ijson_backend().items(io.BytesIO(raw), "")))
    except Exception:  # whatever ijson makes of it, the Python reader's own read of the file says it
        raise Declined("an event the Python decoders refuse", None) from None
