#!/usr/bin/env python3
"""Peak memory of one tracecols command on a trace, against the size of its input.

usage: bench/command_memory.py info TRACE
       bench/command_memory.py sql TRACE "select …"
       bench/command_memory.py analyze TRACE          (with -o into a temporary directory)
       bench/command_memory.py link ET KINETO         (ratio to the ET's size)

The command runs in a fresh process (`python -m tracecols …`); its peak is the process's own
(ru_maxrss of the child) plus its children's private memory (bench/memwatch.py). Ends with
  RESULT command=C peak_rss_mb=M ratio_to_input=R input_mb=S seconds=T load=L
(`load`: the 1-minute load average when it ended; on a shared machine, a high one slows it).
"""

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

import memwatch


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=["info", "sql", "analyze", "link"])
    p.add_argument("inputs", nargs="+")
    a = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as out:
        if a.command == "info":
            args, sized = ["info", a.inputs[0]], a.inputs[0]
        elif a.command == "sql":
            args, sized = ["sql", a.inputs[0], a.inputs[1], "--format", "csv"], a.inputs[0]
        elif a.command == "analyze":
            args, sized = ["analyze", a.inputs[0], "-o", os.path.join(out, "a"), "-q"], a.inputs[0]
        else:
            args, sized = ["link", "--et", a.inputs[0], "--kineto", a.inputs[1], "-o", os.path.join(out, "l")], a.inputs[0]
        t = time.perf_counter()
        done, watch = memwatch.run([sys.executable, "-m", "tracecols", *args], stdin=subprocess.DEVNULL)
        seconds = time.perf_counter() - t
    if done.returncode != 0:
        sys.exit(f"tracecols {a.command} failed: {done.stderr.strip()}")
    own = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    peak = memwatch.Watch.bounds(watch, own)[1]
    size = os.path.getsize(sized)
    print(f"{a.command:8s} {sized}: {size / 1e6:.1f} MB, peak RSS {peak / 1e6:.0f} MB ({peak / size:.1f}x), {seconds:.1f} s")
    print(
        f"RESULT command={a.command} peak_rss_mb={peak / 1e6:.0f} ratio_to_input={peak / size:.2f} "
        f"input_mb={size / 1e6:.1f} seconds={seconds:.1f} load={os.getloadavg()[0]:.2f}"
    )


if __name__ == "__main__":
    main()
