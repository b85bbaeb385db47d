"""Peak memory of a process and its children, counted once.

ru_maxrss adds nothing up: a child forked from a 300 MB process starts with those 300 MB in
its own RSS, although they are the parent's pages, shared. What a process tree holds is the
parent's resident set plus each child's private pages (those it allocated or copied on
write). The parent's peak is exact (its own ru_maxrss, which the measured code reports);
the children's private bytes are sampled from /proc (Linux) every 50 ms while they live,
and their highest sum is added to it. Peaks that do not coincide are added all the same:
an upper bound. Only children are sampled, since reading a process's page tables
(smaps_rollup) holds up its own allocations while it runs.
"""
import os
import subprocess
import threading
import time


def _fields(pid):
    out = {}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                k, _, v = line.partition(":")
                if v.strip().endswith("kB"):
                    out[k] = int(v.split()[0]) * 1024
    except OSError:
        pass
    return out


def _children(pid):
    kids = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                kids += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return kids


def children_bytes(pid):
    """The private bytes of every descendant of `pid`, now."""
    total = 0
    todo = _children(pid)
    while todo:
        c = todo.pop()
        f = _fields(c)
        total += f.get("Private_Clean", 0) + f.get("Private_Dirty", 0)
        todo += _children(c)
    return total


class Watch:
    """Samples children_bytes of a running Popen on a thread; `.peak` (bytes) once it has ended."""

    def __init__(self, popen, interval=0.05):
        self.peak = 0
        self._p, self._interval = popen, interval
        self._t = threading.Thread(target=self._watch, daemon=True)
        self._t.start()

    def _watch(self):
        while self._p.poll() is None:
            self.peak = max(self.peak, children_bytes(self._p.pid))
            time.sleep(self._interval)

    def join(self):
        self._t.join()
        return self.peak


def run(args, **popen):
    """subprocess.run(args, capture_output=True, text=True) and the peak of children_bytes over
    its life: (CompletedProcess, peak bytes)."""
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)
    w = Watch(p)
    out, err = p.communicate()
    return subprocess.CompletedProcess(args, p.returncode, out, err), w.join()
