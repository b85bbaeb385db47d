"""Peak memory of a process and its children, counted once.

ru_maxrss adds nothing up: a child forked from a 300 MB process starts with those 300 MB in
its own RSS, although they are the parent's pages, shared. What a process tree holds is the
parent's resident set plus each child's private pages (those it allocated or copied on
write). The parent's peak is exact (its own ru_maxrss, which the measured code reports);
the children's private bytes are sampled from /proc (Linux) every 20 ms while they live,
and their highest sum is added to it. Peaks that do not coincide are added all the same:
an upper bound (`peak`). The same samples also take the process's own resident size from
its counters (statm, which walks no page tables), so that `together` is the highest
coincident total seen: with the process's own exact peak, a lower bound. The two bound the
true peak of the tree; they differ where the children's peak and the process's do not
meet (a part parser lives during the read, the process peaks in the views). Only children's
page tables are read (smaps_rollup), since that holds up a process's allocations while it runs.
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


def resident_bytes(pid):
    """The resident size of `pid` now, from its counters (0 once it has gone)."""
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


class Watch:
    """Samples a running Popen on a thread: `.peak`, the children's highest private bytes, and
    `.together`, the highest sum of its own resident bytes and its children's private ones."""

    def __init__(self, popen, interval=0.02):
        self.peak = self.together = 0
        self._p, self._interval = popen, interval
        self._t = threading.Thread(target=self._watch, daemon=True)
        self._t.start()

    def _watch(self):
        while self._p.poll() is None:
            kids = children_bytes(self._p.pid)
            self.peak = max(self.peak, kids)
            self.together = max(self.together, kids + resident_bytes(self._p.pid))
            time.sleep(self._interval)

    def join(self):
        self._t.join()
        return self.peak

    def bounds(self, own_peak):
        """(lower, upper) bound of the tree's peak, given the process's own exact peak (ru_maxrss,
        taken before the process ends: a sample may see a little more)."""
        lower = max(own_peak, self.together)
        return lower, max(lower, own_peak + self.peak)


def run(args, **popen):
    """subprocess.run(args, capture_output=True, text=True) and the Watch of its life, joined."""
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)
    w = Watch(p)
    out, err = p.communicate()
    w.join()
    return subprocess.CompletedProcess(args, p.returncode, out, err), w
