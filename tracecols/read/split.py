"""Cut one large uncompressed trace into byte ranges that parse independently, one per core.

The JSON parser is the cost of a read and it runs on one core. An uncompressed local file
can be cut between two events and each part parsed by its own process. A cut is a comma
between `}` and `{"`, searched near the intended offset. (Inside a string a quote is
escaped, so that pattern can only match falsely where a string ends in "}, {".) Each
part is read as a complete JSON document of its own:

    part 0   bytes[0 : cut1]        + "]}"   (or "]" for a bare event array)
    part k   "[" + bytes[cut_k + 1 : cut_k+1]  + "]"
    last     "[" + bytes[cut_k + 1 : array_end] + "]"

and that is also the proof that the cuts are right: part k parses to its end only if cut_k+1
is outside every string and exactly one level inside the events array, i.e. between two
events. A part that fails says nothing about the file, so the caller then reads the whole
file the ordinary way (which reports any real error with its true offset).
"""
import os
import re
import subprocess
import sys

import pyarrow as pa
import pyarrow.compute as pc

from .kineto import find_tail, read_events
from .schema import RAW_SCHEMA
from .source import Reader, Source, _DigitGuard, is_url

MIN_BYTES = 64 << 20  # below this, starting processes costs more than it saves
_CUT = re.compile(rb'\}\s*,\s*\{\s*"')
_SEARCH = 1 << 20  # how far past the intended offset a cut is looked for
_TAIL_REGION = 1 << 20


class Part(Source):
    """Bytes [start, end) of a local file, framed by `prefix` and `suffix`, as a Source."""

    def __init__(self, path, start, end, prefix, suffix):
        self.path, self.size, self.gzip, self._hasher = str(path), None, False, None
        self.start, self.end, self.prefix, self.suffix = start, end, prefix, suffix

    def stream(self, hashed=False):
        # the digit guard too: ijson's C parser crashes on a number Python cannot convert
        return _DigitGuard(_PartReader(self), self.path)


class _PartReader(Reader):
    """prefix + file bytes [start, end) + suffix, never more than `n` bytes per read."""

    def __init__(self, part):
        self.f = self.inner = open(part.path, "rb")
        self.f.seek(part.start)
        self.left = part.end - part.start
        self.head = part.prefix
        self.suffix = part.suffix

    def read(self, n=-1):
        n = (1 << 62) if n is None or n < 0 else n
        out = self.head[:n]
        self.head = self.head[n:]
        if len(out) < n and self.left > 0:
            b = self.f.read(min(n - len(out), self.left))
            self.left = self.left - len(b) if b else 0
            out += b
        if len(out) < n and self.left <= 0 and self.suffix:
            out, self.suffix = out + self.suffix[: n - len(out)], self.suffix[n - len(out):]
        return out


def plan(src, form, parts):
    """(list of Part, tail keys) for reading `src` in `parts` pieces, or None when it should be
    read whole (compressed, remote, small, or no cut found)."""
    if parts < 2 or src.gzip or is_url(src.path) or not src.size or src.size < MIN_BYTES:
        return None
    found = _array_end(src.path, src.size, form)
    if found is None:
        return None
    array_end, tail = found
    cuts = []
    with open(src.path, "rb") as f:
        for k in range(1, parts):
            at = src.size * k // parts
            f.seek(at)
            buf = f.read(_SEARCH)
            m = _CUT.search(buf)
            if m is None:
                return None
            cut = at + buf.index(b",", m.start())
            if cut >= array_end or (cuts and cut <= cuts[-1]):
                return None
            cuts.append(cut)
    close = b"]}" if form == "object" else b"]"
    out = [Part(src.path, 0, cuts[0], b"", close)]
    bounds = cuts + [array_end]
    for a, b in zip(bounds, bounds[1:]):
        out.append(Part(src.path, a + 1, b, b"[", b"]"))
    return out, tail


def _array_end(path, size, form):
    """(offset of the `]` that closes the events array, keys after it), from the file's end."""
    with open(path, "rb") as f:
        for window in (1 << 16, 1 << 18, _TAIL_REGION):  # the end is usually in the last few KB
            start = max(0, size - window)
            f.seek(start)
            region = f.read()
            if form == "array":
                i = region.rstrip().rfind(b"]")
                if i >= 0:
                    return start + i, {}
            else:
                found = find_tail(region)  # the sequential reader's rule for where the array ends
                if found is not None:
                    return start + found[0], found[1]
            if start == 0:
                break
    return None


def cpu_count():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def parse_part(part, out_path):
    """The events of one Part as RAW_SCHEMA record batches in an Arrow IPC file, uids counted
    from 0 (the caller shifts them). Returns the number of events."""
    with pa.OSFile(str(out_path), "wb") as sink, pa.ipc.new_file(sink, RAW_SCHEMA) as w:
        n, _ = read_events(part, "array", w.write_batch)
    return n


def start_part(part, out_path):
    """parse_part in a fresh interpreter (`python -m tracecols.read.split`): a plain child
    process, which neither forks this one's threads nor re-imports the caller's script."""
    args = [part.path, str(part.start), str(part.end), part.prefix.hex(), part.suffix.hex(), str(out_path)]
    return subprocess.Popen([sys.executable, "-m", __name__, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)


def finish_part(proc):
    """The event count of a start_part process; raises PartError if it failed."""
    out, err = proc.communicate()
    if proc.returncode != 0:
        lines = err.decode(errors="replace").strip().splitlines()
        raise PartError(lines[-1] if lines else f"exit code {proc.returncode}")
    return int(out)


class PartError(Exception):
    pass


def shifted_batches(ipc_path, offset):
    """The record batches of a parse_part file with `offset` added to every uid."""
    # read, not memory-mapped: a mapped page stays resident until the whole file is unmapped
    with pa.OSFile(str(ipc_path)) as m:
        r = pa.ipc.open_file(m)
        i = r.schema.get_field_index("uid")
        for k in range(r.num_record_batches):
            b = r.get_batch(k)
            yield b.set_column(i, "uid", pc.add(b.column(i), pa.scalar(offset, pa.int64())))


if __name__ == "__main__":
    path, start, end, prefix, suffix, out = sys.argv[1:]
    print(parse_part(Part(path, int(start), int(end), bytes.fromhex(prefix), bytes.fromhex(suffix)), out))
