#!/usr/bin/env python3
"""The synthetic trace of ../shared/tools/synth_trace.py, written one step at a time.

usage: bench/synth_stream.py OUT.json --steps N [--rank R] [--world W] [--seed S]

synth_trace.py builds the whole document in memory before writing it (about 6 GB of Python
objects per GB of JSON), which a 4 GB trace cannot afford beside anything else on a 24 GB
machine. This drives the same generator (its Writer) step by step and writes each step's
events as they come, with the same JSON separators: the file is byte for byte the one
synth_trace.py writes for the same arguments (`--check` compares them on a small trace).
"""

import argparse
import filecmp
import importlib.util
import json
import os
import sys
import tempfile

SYNTH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "tools", "synth_trace.py")


def _generator():
    spec = importlib.util.spec_from_file_location("synth_trace", SYNTH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def write(path, steps, rank=0, world=1, seed=0):
    synth = _generator()
    w = synth.Writer(rank, world, seed)
    # no step taken: the document's keys in synth_trace's order, written around the events, and
    # its metadata events, which come first
    head = w.doc(0)
    keys = list(head)
    at = keys.index("traceEvents")
    before, after = {k: head[k] for k in keys[:at]}, {k: head[k] for k in keys[at + 1 :]}
    meta = head["traceEvents"]
    first = True

    def put(f, events):
        nonlocal first
        for e in events:
            f.write(("" if first else ", ") + json.dumps(e))
            first = False

    with open(path, "w") as f:
        f.write(json.dumps(before)[:-1] + ', "traceEvents": [')
        put(f, meta)
        t = 1_700_000_000.0
        for i in range(steps):  # synth_trace's Writer.doc loop, the events written and dropped per step
            t = w.step(i, t) + 20
            put(f, w.events)
            w.events = []
        f.write("], " + json.dumps(after)[1:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", nargs="?")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--rank", type=int, default=0)
    ap.add_argument("--world", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--check", action="store_true", help="compare with synth_trace.py's own file on 3 steps")
    a = ap.parse_args()
    if a.check:
        with tempfile.TemporaryDirectory() as tmp:
            ours, theirs = os.path.join(tmp, "a.json"), os.path.join(tmp, "b.json")
            write(ours, 3, a.rank, a.world, a.seed)
            _generator().write(theirs, 3, a.rank, a.world, a.seed)
            same = filecmp.cmp(ours, theirs, shallow=False)
            print("identical" if same else "DIFFERENT")
            return 0 if same else 1
    if not a.out:
        sys.exit("give OUT (or --check)")
    write(a.out, a.steps, a.rank, a.world, a.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
