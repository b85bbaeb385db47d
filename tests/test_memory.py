"""Memory settings of tracecols' own processes: what they set for their allocators (memory.for_this_process)
and how much DuckDB may use for the views (pipeline/views_to_files.views_memory)."""

import os
import subprocess
import sys

import pytest

# In a fresh interpreter: allocate, touch and free a 24 MB block twice; print how much more is
# resident afterwards than before. Left to itself glibc maps the first block, then raises its
# mmap threshold to that size (and the heap's trim threshold to twice it), so the second comes
# from the heap and stays resident once freed. A fixed threshold stops both from rising.
_TWICE = r"""
import ctypes, os, sys
if sys.argv[1] == "set":
    from tracecols import memory
    memory.for_this_process()
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = ctypes.c_void_p
def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
before = resident()
for _ in range(2):
    p = libc.malloc(24 << 20)
    ctypes.memset(p, 1, 24 << 20)
    libc.free(ctypes.c_void_p(p))
print((resident() - before) >> 20)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc and /proc are Linux's")
def test_big_blocks_go_back_to_the_system_once_freed():
    def kept(mode):
        env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
        r = subprocess.run([sys.executable, "-c", _TWICE, mode], capture_output=True, text=True, env=env)
        assert r.returncode == 0, r.stderr
        return int(r.stdout)

    assert kept("default") >= 20  # what the setting is for: glibc alone keeps the second block
    assert kept("set") <= 4


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's functions")
def test_glibc_is_found_among_the_process_symbols_without_ldconfig():
    # ctypes.util.find_library runs `ldconfig -p`: milliseconds of every command and worker
    code = (
        "import ctypes.util; ctypes.util.find_library = None; "  # calling it fails the import
        "from tracecols import memory; print(memory._MALLOPT is not None, memory._MALLOC_TRIM is not None)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True", "True"]


def test_the_views_get_more_memory_on_a_big_trace_within_a_quarter_of_the_machine():
    from tracecols.pipeline.views_to_files import views_memory

    assert views_memory(0) == "640MB"
    assert views_memory(3_572_004) == "640MB"  # the 1 GB synthetic trace keeps the default
    assert views_memory(14_288_004) == "1526MB"  # 4 GB: 112 B an event, 1,600,256,448 B
    machine = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert views_memory(10**12) == f"{machine // 4 >> 20}MB"


# In a fresh interpreter: build and drop 100 frames of 2 MB (blocks of 8 MB or more jemalloc
# hands back at once anyway), then wait 1.5 s while polars does nothing; print how much more is
# resident than before.
_POLARS_IDLE = r"""
import os, sys, time
if sys.argv[1] == "set":
    from tracecols import memory
    memory.for_this_process()
import polars as pl
def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
pl.Series([1, 2]).sum()
before = resident()
frames = [pl.DataFrame({"a": pl.int_range(i, i + 250_000, eager=True)}) for i in range(100)]
assert sum(f["a"].sum() for f in frames) > 0
del frames
time.sleep(1.5)
print((resident() - before) >> 20)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")
def test_what_polars_frees_goes_back_to_the_system_while_it_is_idle():
    def kept(mode, conf=None):
        env = {k: v for k, v in os.environ.items() if k != "_RJEM_MALLOC_CONF"}
        if conf:
            env["_RJEM_MALLOC_CONF"] = conf
        r = subprocess.run([sys.executable, "-c", _POLARS_IDLE, mode], capture_output=True, text=True, env=env)
        assert r.returncode == 0, r.stderr
        return int(r.stdout)

    # the check can fail: without a background thread, nothing is purged until polars allocates
    assert kept("default", "background_thread:false,dirty_decay_ms:300,muzzy_decay_ms:0") >= 40
    assert kept("set") <= 20
