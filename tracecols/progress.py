"""How far a long piece of work has got: stages, bytes read, events, and one line on a terminal.

The work (reader, pipeline, engine) tells the current `tracker()` what it is doing; it is a
no-op unless a command has started a `Line` (cli: each command, unless -q or stderr is not a
terminal). The line appears only once the work has run for SHOW_AFTER seconds, is redrawn a
few times a second from its own thread, and is erased when the work ends, so short commands
and piped output never see it.
"""

import sys
import threading
import time
from contextlib import contextmanager

from .printable import printable

SHOW_AFTER = 2.0
REFRESH = 0.25


class Tracker:
    """Counts what the work reports; the base class keeps nothing (no command is watching)."""

    def stage(self, name, total_bytes=None, scale=1, total_items=None):
        pass

    def read(self, nbytes):
        pass

    def events(self, n):
        pass

    def item(self):
        pass


_current = Tracker()


def tracker():
    return _current


class Line(Tracker):
    """The progress line on `stream`: `tracecols: reading 120.4/386.8 MB · 1.23M events · 410k ev/s · ETA 20 s`."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.t0 = time.perf_counter()
        self.name, self.total, self.scale = "starting", None, 1
        self.nbytes = self.nevents = self.items = 0
        self.total_items = None
        self.stage_t0 = self.t0
        self.shown = False
        self._stop = threading.Event()
        self._lock = threading.Lock()

    def stage(self, name, total_bytes=None, scale=1, total_items=None):
        with self._lock:
            self.name, self.total, self.scale = name, total_bytes, scale
            self.nbytes, self.nevents, self.items, self.total_items = 0, 0, 0, total_items
            self.stage_t0 = time.perf_counter()

    def read(self, nbytes):
        self.nbytes += nbytes

    def events(self, n):
        self.nevents += n

    def item(self):
        self.items += 1

    def text(self, now=None):
        """The line as it reads now."""
        now = time.perf_counter() if now is None else now
        with self._lock:
            parts = [self.name]
            elapsed = max(now - self.stage_t0, 1e-9)
            done = None
            if self.total:
                got = min(self.nbytes * self.scale, self.total)
                parts[0] += f" {got / 1e6:,.1f}/{self.total / 1e6:,.1f} MB"
                done = got / self.total
            if self.total_items:
                parts[0] += f" {self.items}/{self.total_items}"
                done = self.items / self.total_items
            if self.nevents and self.name.startswith("reading"):
                n = self.nevents * self.scale  # the other parts' readers run as fast
                parts.append(f"{_count(n)} events")
                parts.append(f"{_count(n / elapsed)} events/s")
            if done:
                parts.append(f"ETA {_seconds(elapsed * (1 - done) / done)}")
            parts.append(f"{_seconds(now - self.t0)} so far")
        return "tracecols: " + printable(" · ".join(parts))  # it names the file being read

    def _draw(self):
        while not self._stop.wait(REFRESH):
            if time.perf_counter() - self.t0 < SHOW_AFTER:
                continue
            line = self.text()
            self.stream.write("\r\x1b[K" + line[: _width() - 1])
            self.stream.flush()
            self.shown = True

    def close(self):
        self._stop.set()
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


@contextmanager
def using(t):
    """Within the block the work reports to Tracker `t`."""
    global _current
    outer, _current = _current, t
    try:
        yield t
    finally:
        _current = outer


@contextmanager
def shown(enabled=True, stream=None):
    """Within the block the work reports to a progress line on `stream` (stderr), drawn only
    when `enabled` and the stream is a terminal."""
    stream = stream or sys.stderr
    if not enabled or not getattr(stream, "isatty", lambda: False)():
        yield
        return
    line = Line(stream)
    drawer = threading.Thread(target=line._draw, daemon=True)
    drawer.start()
    try:
        with using(line):
            yield
    finally:
        line.close()
        drawer.join()


def _count(n):
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= div:
            return f"{n / div:,.2f}{unit}" if unit != "k" else f"{n / div:,.0f}k"
    return f"{n:,.0f}"


def _seconds(s):
    s = max(0, int(round(s)))
    return f"{s // 60} min {s % 60:02d} s" if s >= 60 else f"{s} s"


def _width():
    import shutil

    return shutil.get_terminal_size((100, 20)).columns
