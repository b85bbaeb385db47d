"""The traces named on a command line: paths, URLs, quoted globs, and `-` for standard input."""

import os
import shutil
import sys
from contextlib import contextmanager

from ..errors import SourceIOError
from ..fleet.walk import Walk
from ..read.source import is_url
from ..store.atomic import scratch_dir

_GLOB = set("*?[")
_stdin_dir = None
_quiet = False


@contextmanager
def stdin_scope(quiet=False):
    """Within the block `-` may be read (once); the copy of standard input goes at its end.
    `quiet`: expand() says nothing on stderr (the command's -q)."""
    global _stdin_dir, _quiet
    outer, _stdin_dir = _stdin_dir, None
    outer_quiet, _quiet = _quiet, quiet
    try:
        yield
    finally:
        if _stdin_dir is not None:
            _stdin_dir.cleanup()
        _stdin_dir, _quiet = outer, outer_quiet


def _stdin():
    """Standard input, copied to a scratch file (gzip or not, the reader sees by its bytes):
    traces are read more than once (head, events, parts), which a pipe cannot be."""
    global _stdin_dir
    if _stdin_dir is not None:
        raise SourceIOError("-", "standard input can be read only once per command")
    if sys.stdin is None or sys.stdin.isatty():
        raise SourceIOError("-", "standard input is a terminal; pipe a trace into it (… | tracecols info -)")
    _stdin_dir = scratch_dir("tracecols-stdin-")
    path = os.path.join(_stdin_dir.name, "stdin")
    with open(path, "wb") as f:
        shutil.copyfileobj(sys.stdin.buffer, f, 1 << 20)
    return path


def expand(items, one=False, command="this command"):
    """The paths `items` stand for: `-` is standard input; an item with * ? [ that is not
    itself a file is a glob (sorted, `**` across folders, no symlink loop followed); others
    as given. A file reached by several paths is taken once, and one line on stderr (not
    with -q) says what was passed over. `one`: the command takes a single trace, and says so
    if it got more."""
    out, walk = [], Walk()
    for item in items:
        item = str(item)
        if item == "-":
            out.append(_stdin())
        elif _GLOB & set(item) and not is_url(item) and not os.path.exists(item):
            hits = sorted(walk.glob(item))
            if not hits:
                raise SourceIOError(item, "matches no file")
            out += hits
        else:
            out.append(item)
    local = set(walk.once([p for p in out if not is_url(p)]))
    out = [p for p in out if is_url(p) or p in local]
    if walk.note() and not _quiet:
        print(f"tracecols: {walk.note()}", file=sys.stderr)
    if one and len(out) != 1:
        raise SourceIOError(" ".join(map(str, items)), f"{command} takes one trace, and these name {len(out)}")
    return out
