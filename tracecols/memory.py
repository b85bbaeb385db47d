"""Freed memory goes back to the system between the stages of a big ingest.

A streaming ingest runs stages that each peak and then free (parse, tree, links, views)
with three allocators in one process: CPython's and glibc's (parsed events), Arrow's
(tables) and polars' jemalloc (frames). Each keeps what it freed for its own reuse, so the
resident size of the process becomes the sum of every allocator's own peak instead of the
peak of one stage (docs/performance.md, "Memory handed back between stages").

tracecols' own processes (the CLI, its workers, the benchmarks that stand for them) call
for_this_process() before polars or pyarrow is loaded:
- Arrow allocates with the system allocator, and glibc serves every block of 16 MB or more
  (Arrow's buffers, DuckDB's hash tables) from a mapping of its own, unmapped when freed.
  Left to itself glibc raises that threshold to the largest block freed so far (up to
  32 MB), after which such blocks come from its heaps, where what is freed stays resident.
  (A lower threshold saves no more memory and maps and zeroes every smaller block anew);
- polars' jemalloc purges freed pages within 0.3 s of their freeing, on its own background
  thread (polars' default: half a second, and what it purges stays resident, unused, for one
  more), so that pages polars freed in a stage are gone before the next stage peaks. Not at
  once: then every frame polars builds takes pages the kernel maps and zeroes anew, a third of
  the tree, links and critical path stages' time on a trace of 200k events in a process that
  has derived one before (a fleet worker's next trace, `tracecols.open` again).
The command also calls without_pandas().
A program that imports tracecols as a library keeps its own settings. Between stages the
streaming ingest calls release(), which hands glibc's free heap pages back (malloc_trim).
"""

import ctypes
import ctypes.util
import os
import sys

_SETTINGS = {
    "ARROW_DEFAULT_MEMORY_POOL": "system",
    "_RJEM_MALLOC_CONF": "background_thread:true,dirty_decay_ms:300,muzzy_decay_ms:0",
}


def for_this_process():
    """Set the allocator environment and glibc's mmap threshold, unless the user set them
    (MALLOC_MMAP_THRESHOLD_ is glibc's own variable); the environment is effective only before polars
    and pyarrow are first loaded (and inherited by the processes started afterwards)."""
    for k, v in _SETTINGS.items():
        os.environ.setdefault(k, v)
    if _MALLOPT is not None and "MALLOC_MMAP_THRESHOLD_" not in os.environ:
        _MALLOPT(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)


def without_pandas():
    """From now on this process has no pandas, even where it is installed. pyarrow imports pandas
    at the first array it builds, to test whether its input is a pandas object, and tracecols
    never hands it one: the import costs every command time and resident memory
    (docs/performance.md, "Memory handed back between stages").
    For the command and the benchmarks that stand for it; a library user keeps pandas."""
    if "pandas" not in sys.modules and not any(isinstance(f, _NoPandas) for f in sys.meta_path):
        sys.meta_path.insert(0, _NoPandas())


class _NoPandas:
    """An import finder under which pandas is not installed."""

    def find_spec(self, name, path=None, target=None):
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(f"No module named {name!r} (tracecols' own processes do without it)", name=name)
        return None


def _glibc(*names):
    """glibc's functions of these names, or Nones where this is no glibc (nothing to tune).
    Looked for among the process's own symbols first, which hold the C library's on Linux:
    finding the library by name runs `ldconfig -p`, 4-13 ms of every command and worker."""
    for where in (lambda: None, lambda: ctypes.util.find_library("c") or "libc.so.6"):
        try:
            libc = ctypes.CDLL(where())
            return tuple(getattr(libc, n) for n in names)
        except (OSError, AttributeError, TypeError):
            pass
    return (None,) * len(names)


_MALLOC_TRIM, _MALLOPT = _glibc("malloc_trim", "mallopt")
_M_MMAP_THRESHOLD = -3  # mallopt's parameter number (malloc.h)
MMAP_THRESHOLD = 16 << 20


def release():
    """Return glibc's free heap pages to the system (a no-op elsewhere)."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)
