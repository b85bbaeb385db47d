"""Cut one trace into byte ranges that parse independently, one per core.

The JSON parser is the cost of a read and it runs on one core. A local file can be cut
between two events and each part parsed by its own process: an uncompressed file where it
lies, a gzip file once inflated in memory (inflating is a tenth of the parse, and a
deflate stream cannot be entered in the middle). On Linux a part's process is a fork of
this one, which costs milliseconds; elsewhere it is a fresh interpreter (a fifth of a
second and more), worth it only for large uncompressed files. A cut is a comma
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

Equal bytes are not equal work: events differ in size and in what they hold (resnet50's
first half has 19,516 events, its second 56,202), and a forked part also writes its events
to a file for the caller. So on Linux the file is cut into PIECES_PER_PROCESS pieces per
process, and they are shared out as the processes go (Claims): the caller takes pieces from
the front, in order, writing their events as it goes; the forks take them from the back; they
meet wherever the work balances.
"""

import hashlib
import io
import os
import re
import select
import subprocess
import sys
import warnings
import zlib
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ..progress import tracker
from .kineto import find_tail, read_events
from .schema import RAW_SCHEMA
from .source import Reader, Source, _DigitGuard, fast_zlib, is_url

FORK = sys.platform == "linux"  # parts run in forks of this process (elsewhere: fresh interpreters)
MIN_BYTES = (8 << 20) if FORK else (64 << 20)  # below this, the parts cost more than they save
GZIP_MAX = 256 << 20  # a gzip file that inflates to more than this is read as a stream (memory)
_CUT = re.compile(rb'\}\s*,\s*\{\s*"')
_SEARCH = 1 << 20  # how far past the intended offset a cut is looked for
PIECES_PER_PROCESS = 8  # the pieces shared out between processes (Linux): enough to balance them
_TAIL_REGION = 1 << 20


class Part(Source):
    """Bytes [start, end) of a local file, or of its inflated `data`, framed by `prefix` and
    `suffix`, as a Source."""

    def __init__(self, path, start, end, prefix, suffix, data=None):
        self.path, self.size, self.gzip, self._hasher = str(path), None, False, None
        self.start, self.end, self.prefix, self.suffix, self.data = start, end, prefix, suffix, data

    def stream(self, hashed=False):
        # the digit guard too: ijson's C parser crashes on a number Python cannot convert
        return _DigitGuard(_PartReader(self), self.path)


class _PartReader(Reader):
    """prefix + file bytes [start, end) + suffix, never more than `n` bytes per read."""

    def __init__(self, part):
        self.f = self.inner = _opener(part.path, part.data)()
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
            tracker().read(len(b))
            out += b
        if len(out) < n and self.left <= 0 and self.suffix:
            out, self.suffix = out + self.suffix[: n - len(out)], self.suffix[n - len(out) :]
        return out


def _opener(path, data):
    # BytesIO shares the bytes it is given (nothing is copied until written to)
    return (lambda: io.BytesIO(data)) if data is not None else (lambda: open(path, "rb"))


def worth_cutting(src):
    """Whether `src` is large enough to be read in parts, and can be: local, and for gzip
    where parts are forks and it inflates to between MIN_BYTES and GZIP_MAX (read from the
    size field at its end: four bytes, before anything is inflated or parsed)."""
    if is_url(src.path) or not src.size:
        return False
    if not src.gzip:
        return src.size >= MIN_BYTES
    if not FORK or src.size > GZIP_MAX:
        return False
    with open(src.path, "rb") as f:
        f.seek(max(0, src.size - 4))
        isize = int.from_bytes(f.read(4), "little")  # the (last member's) inflated size mod 2**32
    return isize <= GZIP_MAX and (isize >= MIN_BYTES or src.size >= MIN_BYTES)


def inflate(src):
    """(the inflated content of gzip `src`, (size, sha256) of its raw bytes), or None where it
    should be read as a stream: more than GZIP_MAX inflated, or damaged (the stream read then
    reports the damage where it is). For a `src` that is worth_cutting."""
    with open(src.path, "rb") as f:
        raw = f.read()
    out: list[bytes] = []
    rest = raw
    try:
        while rest:  # one member after another, as gzip.GzipFile reads them
            d = fast_zlib.decompressobj(31)
            out.append(d.decompress(rest, GZIP_MAX + 1 - sum(map(len, out))))
            if not d.eof or sum(map(len, out)) > GZIP_MAX:
                return None
            rest = d.unused_data.lstrip(b"\0")  # GzipFile skips zero padding between members
    except (zlib.error, fast_zlib.error):
        return None
    data = out[0] if len(out) == 1 else b"".join(out)  # one member: no copy of it
    return data, (len(raw), hashlib.sha256(raw).hexdigest())


def plan(src, form, parts, data=None):
    """(list of Part, tail keys) for reading `src` in `parts` pieces, or None when it should be
    read whole (remote, small, compressed without its inflated `data`, or no cut found)."""
    if parts < 2 or is_url(src.path) or (src.gzip and data is None) or (data is not None and not FORK):
        return None
    size = len(data) if data is not None else src.size
    if not size or size < MIN_BYTES:
        return None
    opener = _opener(src.path, data)
    found = _array_end(opener, size, form)
    if found is None:
        return None
    array_end, tail = found
    cuts: list[int] = []
    with opener() as f:
        for k in range(1, parts):
            at = size * k // parts
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
    out = [Part(src.path, 0, cuts[0], b"", close, data)]
    bounds = cuts + [array_end]
    for a, b in zip(bounds, bounds[1:]):
        out.append(Part(src.path, a + 1, b, b"[", b"]", data))
    return out, tail


def _array_end(opener, size, form):
    """(offset of the `]` that closes the events array, keys after it), from the file's end."""
    with opener() as f:
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


def idle_cores() -> int:
    """The cores this process has that other work leaves idle: cpu_count less the machine's
    one-minute load average, the core this process runs on counted idle (at least 1). Where
    there is no load average (Windows), every core."""
    cores = cpu_count()
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return cores
    return max(1, min(cores, round(cores - load) + 1))


def parse_part(part, out_path):
    """The events of one Part as RAW_SCHEMA record batches in an Arrow IPC file, uids counted
    from 0 (the caller shifts them). Returns the number of events."""
    with pa.OSFile(str(out_path), "wb") as sink, pa.ipc.new_file(sink, RAW_SCHEMA) as w:
        n, _ = read_events(part, "array", w.write_batch)
    return n


class Claims:
    """Which of `n` pieces are left. Shared with forked workers (Linux): the caller takes
    pieces from the front, the workers from the back, under one lock. Elsewhere (no fork) each
    process has its own piece: the caller the first, worker k the piece k + 1."""

    def __init__(self, n):
        # a fork context's Lock and RawArray, or None and a plain list without fork
        self._lock: Any
        self._ends: Any
        if FORK:
            import multiprocessing

            ctx = multiprocessing.get_context("fork")
            self._lock, self._ends = ctx.Lock(), ctx.RawArray("q", [0, n - 1])
        else:  # no fork: the first piece alone
            self._lock, self._ends = None, [0]

    def front(self):
        """The next piece from the front, or None once the two ends have met."""
        if self._lock is None:
            return self._ends.pop() if self._ends else None
        with self._lock:
            i = self._ends[0]
            if i > self._ends[1]:
                return None
            self._ends[0] = i + 1
            return i

    def back(self):
        """The next piece from the back, or None once the two ends have met (forks only)."""
        with self._lock:
            i = self._ends[1]
            if i < self._ends[0]:
                return None
            self._ends[1] = i - 1
            return i


def start_workers(pieces, claims, directory, n):
    """`n` processes that parse pieces into Arrow IPC files in `directory` (piece_file), started
    now (after the caller has taken piece 0): forks of this one on Linux, which take pieces from
    the back of `claims` until none is left (no interpreter to start, and they see an inflated
    `data` without a copy); elsewhere fresh interpreters (`python -m tracecols.read.split`), one
    per piece after the first. Each reports `piece:events` for every piece it parsed."""
    if FORK:
        return [_Fork(lambda: _work(pieces, claims, directory)) for _ in range(n)]
    out = []
    for k, part in enumerate(pieces[1 : n + 1], start=1):
        args = [part.path, str(part.start), str(part.end), part.prefix.hex(), part.suffix.hex(), directory, str(k)]
        cmd = [sys.executable, "-m", __name__, *args]
        out.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL))
    return out


def _work(pieces, claims, directory):
    return " ".join(_parse_piece(pieces[i], directory, i) for i in iter(claims.back, None))


def _parse_piece(part, directory, i):
    return f"{i}:{parse_part(part, piece_file(directory, i))}"


def piece_file(directory, i):
    """Where a worker writes the events of piece `i`."""
    return os.path.join(directory, f"piece{i}.arrow")


def finish_worker(proc, directory, timeout=None):
    """[(piece, event count, IPC file)] of a start_workers process; raises PartError if it
    failed or is still running after `timeout` seconds (then it is stopped)."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise PartError(f"no answer after {timeout:.0f} s") from None
    if proc.returncode != 0:
        lines = err.decode(errors="replace").strip().splitlines()
        raise PartError(lines[-1] if lines else f"exit code {proc.returncode}")
    found = [w.split(":") for w in out.decode().split()]
    return [(int(i), int(n), piece_file(directory, int(i))) for i, n in found]


class _Fork:
    """A forked worker, with the part of Popen's interface that the caller uses.

    The child runs `work`, writes what it returns (or its error) to a pipe and leaves with
    os._exit, so that nothing of the parent (buffers, atexit handlers, the Parquet writer's
    thread, which a fork does not copy) runs twice. It touches nothing the parent's threads
    hold: the parser, Arrow arrays from Python objects (malloc, which is fork-safe), its IPC
    files, and the lock of the pieces (Claims: a semaphore shared between the processes, taken
    in the parent only by the thread that forks, never across a fork)."""

    def __init__(self, work):
        r, w = os.pipe()
        with warnings.catch_warnings():  # Python 3.12+ warns of any fork beside threads
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:
            code, msg = 1, "failed"
            try:
                os.close(r)
                msg, code = work(), 0
            except BaseException as e:
                msg = f"{type(e).__name__}: {' '.join(str(e).split())}"
            finally:
                try:
                    os.write(w, msg.encode(errors="replace"))
                finally:
                    os._exit(code)
        os.close(w)
        self.pid, self.fd, self.returncode = pid, r, None

    def communicate(self, timeout=None):
        chunks = []
        while True:
            ready, _, _ = select.select([self.fd], [], [], timeout)
            if not ready:
                raise subprocess.TimeoutExpired("part", timeout)
            b = os.read(self.fd, 1 << 16)
            if not b:
                break
            chunks.append(b)
        os.close(self.fd)
        self.wait()
        msg = b"".join(chunks)
        return (msg, b"") if self.returncode == 0 else (b"", msg)

    def poll(self):
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self):
        if self.returncode is None:
            self.returncode = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
        return self.returncode

    def kill(self):
        if self.returncode is None:
            os.kill(self.pid, 9)


class PartError(Exception):
    pass


def shifted_batches(ipc_path, offset):
    """The record batches of a parse_part file with `offset` added to every uid."""
    # read, not memory-mapped: a mapped page stays resident until the whole file is unmapped
    with pa.OSFile(str(ipc_path)) as m:
        r = pa.ipc.open_file(m)
        for k in range(r.num_record_batches):
            yield shift_uids(r.get_batch(k), offset)


def shift_uids(batch, offset):
    """`batch` with `offset` added to every uid."""
    i = batch.schema.get_field_index("uid")
    return batch.set_column(i, "uid", pc.add(batch.column(i), pa.scalar(offset, pa.int64())))


if __name__ == "__main__":
    path, start, end, prefix, suffix, directory, i = sys.argv[1:]
    print(_parse_piece(Part(path, int(start), int(end), bytes.fromhex(prefix), bytes.fromhex(suffix)), directory, i))
