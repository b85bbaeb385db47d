"""Rewrite a trace JSON with extra args on chosen events, byte for byte otherwise.

The input is streamed once in chunks (constant memory): one regular expression steps from
bracket to bracket outside strings (strings are matched whole, so a bracket inside a name never
counts; keys are recognised in the few bytes before a bracket), tracks the nesting depth,
numbers the events of `traceEvents` (or of a bare event array) in file order — the reader's
`uid` — and, for an event that gets new args, inserts their text right after the `{` of its
`args` object (or adds an `args` object before the event's closing `}` when it has
none); new events (the counter samples of `augment --counters`) go just before the `]` that
closes the event array. Every other byte is copied unchanged: whitespace, key order and number spelling survive —
but for secrets (model/secrets.py), which are redacted unless the caller keeps them.
"""

import re

from ..errors import Malformed
from ..read import jsontext
from ..read.source import Source
from .atomic import atomic_output
from .redacting import RedactingFile

CHUNK = 1 << 20
TAIL = 1 << 10  # brackets this close to the end of a chunk wait for the next one
# everything up to the next bracket outside a string (strings matched whole, possessively)
_STEP = re.compile(rb'(?:[^"{}\[\]]++|"(?:[^"\\]|\\.)*+")*+([{}\[\]])')
_ARGS_KEY = re.compile(rb'(?<!\\)"args"\s*:\s*\Z')
_EVENTS_KEY = re.compile(rb'(?<!\\)"traceEvents"\s*:\s*\Z')
_KEY_WINDOW = 64


def args_text(values):
    """`"k": v, …` for a dict of new args (JSON text; Decimal and int written exactly)."""
    return ", ".join(jsontext.dumps(k) + ": " + jsontext.dumps(v) for k, v in values.items()).encode()


class _Rewriter:
    def __init__(self, values, out, path, appended=b""):
        self.values = values  # uid -> {arg: value}
        self.appended = appended  # JSON text of new events, `{…}, {…}`, until placed
        self.out = out
        self.path = path
        self.base = 0  # stream offset of the current buffer's first byte
        self.depth = 0
        self.form = None
        self.events_depth = None  # depth inside an event object, once the event array is found
        self.uid = -1
        self.in_event = False
        self.pending = None  # new args of the current event, until placed
        self.placed = 0

    def _key_before(self, buf, start, at, key_re):
        return key_re.search(buf, max(start, at - _KEY_WINDOW), at) is not None

    def feed(self, buf, final):
        """Process `buf`; write it out with the insertions; return the bytes consumed."""
        pos = 0
        edits = []
        limit = len(buf) - TAIL
        n = len(buf)
        while pos < n:
            m = _STEP.match(buf, pos)
            if m is None:
                break  # no bracket left (or an unterminated string): wait for more
            at = m.start(1)
            if not final and at > limit:
                break
            tok = buf[at : at + 1]
            end = at + 1
            if tok in (b"{", b"["):
                if self.form is None:
                    self.form = "array" if tok == b"[" else "object"
                    if self.form == "array":
                        self.events_depth = 2
                elif (
                    tok == b"[" and self.events_depth is None and self.depth == 1 and self._key_before(buf, pos, at, _EVENTS_KEY)
                ):
                    self.events_depth = 3
                self.depth += 1
                if tok == b"{" and self.events_depth is not None and self.depth == self.events_depth:
                    self.uid += 1
                    self.in_event = True
                    self.pending = self.values.get(self.uid)
                elif (
                    tok == b"{"
                    and self.pending
                    and self.in_event
                    and self.events_depth is not None  # set once the event array is found, as pending is
                    and self.depth == self.events_depth + 1
                    and self._key_before(buf, pos, at, _ARGS_KEY)
                ):
                    empty = buf[end : end + TAIL].lstrip()[:1] == b"}"
                    edits.append((end, args_text(self.pending) + (b"" if empty else b", ")))
                    self.pending = None
                    self.placed += 1
            else:
                if tok == b"}" and self.in_event and self.depth == self.events_depth:
                    if self.pending:
                        edits.append((at, b', "args": {' + args_text(self.pending) + b"}"))
                        self.pending = None
                        self.placed += 1
                    self.in_event = False
                if tok == b"]" and self.appended and self.events_depth is not None and self.depth == self.events_depth - 1:
                    edits.append((at, (b", " if self.uid >= 0 else b"") + self.appended))
                    self.appended = b""
                self.depth -= 1
                if self.events_depth == 3 and self.depth == 1 and tok == b"]":
                    self.events_depth = -1  # past traceEvents: nothing more to number
            pos = end
        if final:
            rest = buf[pos:]
            if b'"' in rest and rest.count(b'"') % 2:
                raise Malformed(self.path, "unterminated string", offset=self.base + pos)
            pos = n
        last = 0
        for off, text in edits:
            self.out.write(buf[last:off])
            self.out.write(text)
            last = off
        self.out.write(buf[last:pos])
        self.base += pos
        return pos


def write_augmented(in_path, out_path, values, keep_secrets=False, events=()):
    """Copy the trace at `in_path` to `out_path` (.gz: gzip) with `values` ({uid: {arg: value}})
    added to those events' args, `events` (dicts) added at the end of its event array, and its
    secrets redacted unless `keep_secrets`. Atomic (temp file, then rename). Returns the events
    changed."""
    appended = ", ".join(jsontext.dumps(e) for e in events).encode()
    with atomic_output(out_path) as f:
        sink = f if keep_secrets else RedactingFile(f)
        rw = _Rewriter(values, sink, in_path, appended)
        carry = b""
        with Source(in_path).stream() as src:
            while True:
                chunk = src.read(CHUNK)
                final = not chunk
                buf = carry + chunk
                used = rw.feed(buf, final)
                carry = buf[used:]
                if final:
                    break
                if len(carry) > 64 * CHUNK:
                    raise Malformed(in_path, "a JSON string longer than 64 MB (or an unterminated string)")
            if rw.appended:  # the output is left unwritten: atomic_output drops it
                raise Malformed(in_path, "no end of the event array found, where the new events would go")
        if isinstance(sink, RedactingFile):
            sink.flush()
    return rw.placed
