"""Freed memory goes back to the system between the stages of a big ingest.

A streaming ingest runs stages that each peak and then free (parse, tree, links, views)
with three allocators in one process: CPython's and glibc's (parsed events), Arrow's
(tables) and polars' jemalloc (frames). Each keeps what it freed for its own reuse, so the
resident size of the process becomes the sum of every allocator's own peak instead of the
peak of one stage (on a 1 GB trace, about 3 GB instead of 1.5).

tracecols' own processes (the CLI, its workers, the benchmarks that stand for them) call
for_this_process() before polars or pyarrow is loaded:
- Arrow allocates with the system allocator, which unmaps a large block when it is freed;
- polars' jemalloc purges freed pages at once rather than after 10 s.
A program that imports tracecols as a library keeps its own settings. Between stages the
streaming ingest calls release(), which hands glibc's free heap pages back (malloc_trim).
"""
import ctypes
import ctypes.util
import os

_SETTINGS = {
    "ARROW_DEFAULT_MEMORY_POOL": "system",
    "_RJEM_MALLOC_CONF": "dirty_decay_ms:0,muzzy_decay_ms:0",
}


def for_this_process():
    """Set the allocator environment, unless the user set it; effective only before polars
    and pyarrow are first loaded (and inherited by the processes started afterwards)."""
    for k, v in _SETTINGS.items():
        os.environ.setdefault(k, v)


def _trim():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc.malloc_trim
    except (OSError, AttributeError):  # not glibc: nothing to trim
        return None


_MALLOC_TRIM = _trim()


def release():
    """Return glibc's free heap pages to the system (a no-op elsewhere)."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)
