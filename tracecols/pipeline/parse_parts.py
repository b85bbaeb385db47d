"""One local trace file read by several processes: this one and workers that share its pieces
out as they go (read/split.py), their events put to one writer in the file's order."""

import os
import time
from concurrent.futures import ThreadPoolExecutor

from ..errors import TraceError
from ..model.traces import detect_rank
from ..progress import tracker
from ..read import split
from ..read.kineto import read_events, read_head
from ..read.source import Source, hash_file, is_url


class PartFailed(Exception):
    """A piece could not be read in parts: the file is read again whole, which also gives a real
    error its true position."""


def read_parts(p, trace_id, writer, scratch, parts):
    """Read one file with `parts` processes (split.py: this one and parts - 1 workers, sharing
    its pieces out as they go); None if it is not worth cutting. `scratch()` gives the directory
    the workers write to."""
    src = Source(p)
    if not split.worth_cutting(src):
        return None
    form, head = read_head(src)  # before inflating: a file that is no trace fails here, at once
    if form not in ("object", "array"):  # not a Chrome-trace event array (rocprofv3): read whole
        return None
    data = digest = inflated = None
    if src.gzip:
        inflated = split.inflate(src)
        if inflated is None:
            return None
        data, digest = inflated
    # as many pieces as balance the processes, else one each (a file of a few huge events)
    planned = (split.FORK and split.plan(src, form, parts * split.PIECES_PER_PROCESS, data)) or split.plan(src, form, parts, data)
    if planned is None:
        return None
    pieces, tail = planned
    reading(p, len(data) if data is not None else src.size, parts)
    rank = detect_rank(p, head)[0]
    writer.context = (trace_id, rank)
    claims = split.Claims(len(pieces))
    i = claims.front()  # the first piece, with the file's head, is this process's
    writer.wait_idle()  # a worker may be a fork: of a process whose other thread holds no lock
    scratch = scratch()  # made now: most files are read whole, without one
    procs = split.start_workers(pieces, claims, scratch, parts - 1)
    with ThreadPoolExecutor(1) as hashing:
        hashed = hashing.submit(hash_file, src.path) if digest is None else None
        try:
            t0 = time.perf_counter()
            n = 0
            while i is not None:  # this process's pieces come first, in order: written as they are read
                count, _ = read_events(pieces[i], form if i == 0 else "array", _shifted(writer.put, n))
                n += count
                i = claims.front()
            writer.flush()  # encoded while the workers finish, not after them
            # the workers end about when this process does: one that takes far longer is stuck
            timeout = 60 + 20 * (time.perf_counter() - t0)
            done = sorted(x for proc in procs for x in split.finish_worker(proc, scratch, timeout))
            # every piece is parsed: the inflated file goes before their events are read back
            del data, inflated, planned, pieces
            for _, count, f in done:
                for b in split.shifted_batches(f, n):
                    writer.put(b)
                n += count
        except (TraceError, split.PartError) as e:
            raise PartFailed() from e
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
    writer.flush()
    size, sha = digest if hashed is None else hashed.result()  # type: ignore[misc]  # hashed is None only where digest is set
    meta = dict(head)
    meta.update(tail)
    return {
        "path": src.path,
        "form": form,
        "metadata": meta,
        "n_events": n,
        "sha256": sha,
        "size": size,
        "gzip": src.gzip,
        "head_rank": rank,
        "parts": parts,
    }


def _shifted(put, offset):
    """`put` of batches whose uids are `offset` on (those of a piece count from 0)."""
    if offset == 0:
        return put
    return lambda b: put(split.shift_uids(b, offset))


def reading(path, size=None, parts=1):
    """Tell the progress line a file is being read (by `parts` processes, this one among them:
    its bytes, `parts` times over, stand for all of them; about, as they share the pieces out)."""
    if size is None and not is_url(path):
        size = os.path.getsize(path) if os.path.isfile(path) else None
    tracker().stage(f"reading {os.path.basename(str(path))}", total_bytes=size, scale=parts)
