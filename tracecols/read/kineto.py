"""Stream a Kineto / Chrome-trace JSON file into Arrow record batches of RAW_SCHEMA.

One pass of ijson's C backend over `traceEvents`, with every other top-level key kept
wherever it sits: keys before `traceEvents` are read by a short token walk of the head,
keys after it from the bytes that follow the last event.
"""

import gc
import json
from collections import deque
from contextlib import contextmanager
from decimal import Decimal

import ijson

from ..errors import Empty, Malformed, NotATrace, Unsupported
from ..progress import tracker
from . import native, rocprof
from .batch import build_batches
from .chunked import Items
from .source import GZIP_ERRORS, Source
from .toplevel import find_tail, first_byte, ijson_backend, keys_before, not_utf8
from .toplevel import one_line as _one_line

CHUNK = 1 << 16
BATCH = 1 << 14
# ---------------------------------------------------------------------------------------
# The head: top-level keys before traceEvents.

_OTHER_FORMATS = {
    "nodes": "it is a PyTorch Execution Trace (has 'nodes'); read it with `tracecols link --et`",
}


def _binary_kind(src):
    """What a file that is neither JSON nor text seems to be, or None if it looks like text."""
    with src.stream() as f:
        head = f.read(256)
    if not any(b < 9 or 13 < b < 32 for b in head):
        return None
    if head[:1] == b"\x0a" and len(head) > 2:  # protobuf field 1 (a TracePacket), length-delimited
        return (
            "binary protobuf, probably a Perfetto trace (.pftrace / .perfetto-trace); "
            "Kineto traces are JSON (export_chrome_trace), Perfetto's trace_processor reads this one"
        )
    return f"binary data (starts with {head[:8].hex(' ')}), not a JSON Kineto trace"


class _Rocprof(Exception):
    pass


def read_head(src):
    """Return (form, metadata) where form is 'object', 'array' (a bare Chrome-trace event list)
    or rocprof.FORM (a rocprofiler-sdk JSON file, read by read/rocprof.py; no metadata here)."""
    with src.stream() as f:
        try:
            encoding = not_utf8(f.read(4))
        except GZIP_ERRORS:  # first_byte says what is wrong with it
            encoding = None
    if encoding:
        raise Unsupported(src.path, encoding)
    first = first_byte(src)
    if first == b"[":
        return "array", {}
    if first != b"{":
        kind = _binary_kind(src) if first else None
        if kind:
            raise NotATrace(src.path, kind)
        what = "empty" if not first else f"starts with {first!r}, not a JSON object or array"
        raise Malformed(src.path, f"not JSON: {what}", offset=0)

    def other_format(key, meta):
        if key == rocprof.TOP_KEY:
            raise _Rocprof
        if key in _OTHER_FORMATS and (key != "nodes" or "schema" in meta):
            raise NotATrace(src.path, _OTHER_FORMATS[key])

    try:
        return "object", keys_before(src, "traceEvents", ijson_backend(), on_key=other_format)
    except _Rocprof:
        return rocprof.FORM, {}


def parse_tail(region):
    """Top-level keys after the traceEvents array, from the bytes that follow the last event."""
    found = find_tail(region)
    return found[1] if found else None


# ---------------------------------------------------------------------------------------
# The events.


class _Tap:
    """Reader between the decompressed stream and ijson: counts bytes for error offsets and
    keeps the chunks read since the last event was parsed (where the tail keys are), at most
    MAX_HELD bytes of them (a run of whitespace between events is not held without bound)."""

    MAX_HELD = 256 << 20

    def __init__(self, f):
        self.f = f
        self.offset = 0
        self.n = 0
        self.mark = 0
        self.recent: deque[tuple[int, bytes]] = deque()
        self.held = 0

    def read(self, size=-1):
        b = self.f.read(size)
        self.offset += len(b)
        # the last event ended in chunk mark-1: older chunks can hold no tail key
        while self.recent and self.recent[0][0] < self.mark - 1:
            self.held -= len(self.recent.popleft()[1])
        self.recent.append((self.n, b))
        self.held += len(b)
        self.n += 1
        if self.held > self.MAX_HELD:
            raise Malformed(
                getattr(self.f, "path", "?"),
                f"more than {self.MAX_HELD >> 20} MiB without an event (a run of whitespace?): the Python "
                "reader's bound; the compiled reader reads such a file in bounded memory",
                offset=self.offset,
            )
        return b

    def tail_bytes(self):
        return b"".join(c for i, c in self.recent if i >= self.mark - 1)


_JSON_TYPE = {list: "array", str: "string", int: "number", float: "number", bool: "boolean", type(None): "null"}


def _objects(held, uid, src):
    """`held`, after checking that every event is a JSON object."""
    for j, e in enumerate(held):
        if type(e) is not dict:
            t = _JSON_TYPE.get(type(e), "number")
            raise Malformed(src.path, f"event {uid + j} of traceEvents is a JSON {t}, expected an object")
    return held


@contextmanager
def item_stream(src, prefix, what):
    """The elements of the array at `prefix` of `src` (hashed as it streams by), as a
    chunked.Items: iterate it; afterwards `.tap.tail_bytes()` holds the bytes after the array.

    Python's cyclic GC is off meanwhile (it would walk every held dict, again and again), and
    JSON and gzip errors become one-line Malformed errors at the byte offset reached.
    `what` names the document in the truncation message ("trace", "Execution Trace").

    When `src` is gzip, any failure (a JSON error, a gzip error, a Malformed raised by the
    caller over garbage events) is checked against the compressed stream itself: corrupt or
    truncated gzip data is reported as that (Source.gzip_fault), whatever the parser saw.
    """
    gc_was = gc.isenabled()
    gc.disable()
    try:
        with src.stream(hashed=True) as f:
            backend = ijson_backend()
            items = Items(f, prefix, lambda r, p: backend.items(r, p, buf_size=CHUNK), _Tap, src.path)
            try:
                yield items
            except ijson.JSONError as e:
                msg = _one_line(e)
                if "premature EOF" in msg or "incomplete" in msg.lower():
                    msg = f"unexpected end of file (truncated {what}?)"
                raise src.fault(msg, offset=items.offset) from None
            except GZIP_ERRORS as e:
                raise src.gzip_error(e, offset=items.offset) from None
            except UnicodeDecodeError:  # ijson's C backend, on bytes that are not UTF-8 or a lone surrogate
                why = "a string that is not UTF-8 (bytes that are not, or a lone surrogate escape)"
                raise src.fault(why, items.offset) from None
            except Malformed as e:
                raise (src.gzip_fault(items.offset if e.offset is None else e.offset) or e) from None
    finally:
        if gc_was:
            gc.enable()


def read_events(src, form, on_batch, batch_size=BATCH, threads=1, skip=0):
    """Stream the events of `src` (a Source) to `on_batch(RecordBatch)`; returns (n_events, tail_meta).

    A local file is read by the compiled reader (read/native.py) on `threads` threads, where it
    is built; else, and for the error of a file that reader stops on, by the Python reader.

    A document with more than one `traceEvents` array: the compiled reader raises
    native.AnotherArray after the first, and is called again with `skip` (the pipeline does so);
    the Python reader reads all of them, one after the other (docs/reader.md)."""
    if native.usable(src):
        try:
            return native.read_events(src, form, on_batch, threads, skip)
        except native.Declined as why:
            _read_events_python(Source(src.path), form, lambda b: None, batch_size)
            message, offset = why.args
            raise Malformed(
                src.path,
                f"the compiled reader stopped ({message}) where the Python reader does not; TRACECOLS_READER=python reads it",
                offset=offset,
            ) from None
    return _read_events_python(src, form, on_batch, batch_size)


def _read_events_python(src, form, on_batch, batch_size=BATCH):
    prefix = "item" if form == "array" else "traceEvents.item"
    held, uid = [], 0
    with_ph = 0
    sink, progress = on_batch, tracker()

    def counted(b):
        nonlocal with_ph
        with_ph += len(b) - b.column("ph").null_count
        progress.events(len(b))
        sink(b)

    with item_stream(src, prefix, "trace") as items:
        first = None
        # how many of the held events ijson parsed (plain Decimals: build_batches' check); ijson,
        # once it takes over, reads the rest of the array, so those are the last ones held
        plain = 0
        for run in items.runs():
            if first is None and run:
                first = run[0]
            held.extend(run)
            if type(run) is tuple:  # ijson's runs are tuples, msgspec's lists
                plain += len(run)
            while len(held) >= batch_size:  # batches of exactly batch_size, whatever the runs
                batch, held = held[:batch_size], held[batch_size:]
                for b in build_batches(_objects(batch, uid, src), uid, checked=plain > len(held)):
                    counted(b)
                plain = min(plain, len(held))
                uid += len(batch)
        if held:
            for b in build_batches(_objects(held, uid, src), uid, checked=plain > 0):
                counted(b)
            uid += len(held)
        # let the last events go while the cyclic GC is still off: turned back on, its first pass
        # walks every container alive that was made meanwhile, the last batch of 16k events and
        # their args among them, in one collection that frees nothing
        batch = held = run = None  # type: ignore[assignment]  # released on purpose: see above
    tail = {}
    if form == "object":
        if uid == 0:
            with src.stream() as f:
                doc = json.loads(f.read(), parse_float=Decimal)
            tail = {k: v for k, v in doc.items() if k != "traceEvents"}
            _no_events(src, doc.get("traceEvents"))
        else:
            tail = parse_tail(items.tap.tail_bytes()) or {}
    elif uid == 0:
        _no_events(src, [])
    if uid and not with_ph:
        raise NotATrace(src.path, _without_ph(first, uid))
    return uid, tail


def _no_events(src, events):
    """Raise for a trace with no events: why there are none."""
    if type(events) is not list:
        raise Malformed(
            src.path, f"'traceEvents' is a JSON {_JSON_TYPE.get(type(events), 'object')}, expected an array of events"
        )
    raise Empty(src.path, "no events: its event array is empty")


def _without_ph(first, n):
    """Why a JSON array of objects none of which has a 'ph' key is no trace."""
    if type(first) is dict and {"file", "batch_size"} <= first.keys():
        return "it is a list of graph capture files (execution_details.json), not a trace; pass its folder to --capture"
    return f"none of its {n:,} events has a 'ph' key (every Chrome-trace event has one)"


def read_trace(path, on_batch, batch_size=BATCH, on_head=None, threads=1, skip=0):
    """Read one trace file. Returns a dict: path, form, metadata (all top-level keys), n_events, sha256, size.

    `on_head(metadata)`, if given, sees the top-level keys that precede the events before
    the first batch is sent (keys after the events are only known at the end).
    """
    src = Source(path)
    form, head = read_head(src)
    if form == rocprof.FORM:
        return rocprof.read_trace(src, on_batch, batch_size, on_head)
    if on_head is not None:
        on_head(dict(head))
    used = threads if native.usable(src) else 1
    n, tail = read_events(src, form, on_batch, batch_size, threads, skip)
    meta = dict(head)
    meta.update(tail)
    return {
        "path": src.path,
        "form": form,
        "metadata": meta,
        "n_events": n,
        "sha256": src.sha256,
        "size": src.read_size,
        "gzip": src.gzip,
        "threads": used,
        "warnings": [f"{skip + 1} 'traceEvents' arrays: the last is read, as JSON parsers keep the last of duplicate keys"]
        if skip
        else [],
    }
