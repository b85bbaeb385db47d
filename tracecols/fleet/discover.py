"""Find the trace files of a job: directories (walked), globs, single files, fsspec URLs.

`tensorboard_trace_handler` names each rank's file `{worker}.{time_ns}.pt.trace.json[.gz]`;
those are taken by name. Any other `*.json` / `*.json.gz` found in a directory or glob is
sniffed (the first MB of its decompressed text) and kept only if it is a Kineto trace or a
rocprofv3 file; Execution Traces and other JSON are skipped with a one-line reason.
A file named explicitly is always taken: if it is not a trace, ingesting it says why.
Local folders and `**` globs are walked by `walk.Walk`: no symlink loop is followed, a file
reached by several paths is read once, and one note says what was passed over.
"""

import gzip
import os
import re
import zlib

from ..errors import SourceIOError
from ..read.source import is_url
from .walk import Walk

_TB_NAME = re.compile(r"\.pt\.trace\.json(\.gz)?$")
_JSON_NAME = re.compile(r"\.json(\.gz)?$")
_SNIFF = 1 << 20
_GLOB_CHARS = set("*?[")


def _natural_key(s):
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", s)]


def _fs(url):
    import fsspec

    return fsspec.core.url_to_fs(url)


def sniff(path):
    """None if the file looks like a trace (Kineto or rocprofv3), else a short reason why it is skipped."""
    try:
        if is_url(path):
            fs, p = _fs(path)
            raw = fs.open(p, "rb")
        else:
            raw = open(path, "rb")  # noqa: SIM115 - closed by the `with raw` below
        with raw:
            head = raw.read(2)
            raw.seek(0)
            f = gzip.GzipFile(fileobj=raw) if head == b"\x1f\x8b" else raw
            try:
                text = f.read(_SNIFF)
            except (OSError, EOFError, zlib.error):
                return "unreadable gzip data"
    except OSError as e:
        return f"cannot read it ({e.strerror or e})"
    body = text.lstrip()
    if b'"traceEvents"' in text:
        return None
    if body[:1] == b"[" and b'"ph"' in text[:65536]:
        return None  # a bare Chrome-trace event array
    if b'"nodes"' in text and b'"schema"' in text:
        return "a PyTorch Execution Trace, not a profiler trace"
    if body[:1] == b"{" and body[1:].lstrip().startswith(b'"rocprofiler-sdk-tool"'):
        return None  # rocprofv3 JSON (read/rocprof.py)
    return "JSON without 'traceEvents' (not a profiler trace)"


def _walk(root, walk):
    """Every file under a local directory (hidden folders left out) or a URL prefix."""
    if is_url(root):
        fs, p = _fs(root)
        proto = root.split("://", 1)[0]
        return [f"{proto}://{f.lstrip('/')}" if proto != "file" else f for f in fs.find(p)]
    return [p for p in walk.folder(root) if not os.path.isdir(p)]


def _expand_glob(pattern, walk):
    if is_url(pattern):
        fs, p = _fs(pattern)
        proto = pattern.split("://", 1)[0]
        return [f"{proto}://{f.lstrip('/')}" for f in fs.glob(p)]
    return walk.glob(pattern)


def _isdir(path):
    if is_url(path):
        fs, p = _fs(path)
        return fs.isdir(p)
    return os.path.isdir(path)


def _exists(path):
    if is_url(path):
        fs, p = _fs(path)
        return fs.exists(p)
    return os.path.exists(path)


def _norm(path):
    return path if is_url(path) else os.path.abspath(path)


def discover(sources, exclude=(), walk=None):
    """(paths, skipped): trace paths in a stable order, and [(path, reason)] for files passed over.

    `exclude` are directories not to walk into (the lake being written, when it sits under DIR).
    `walk` (a walk.Walk) collects the symlink loops and second paths passed over: its `note()`.
    """
    walk = walk or Walk()
    found, skipped, seen = [], [], set()
    excl = [_norm(str(e)).rstrip("/") + "/" for e in exclude]

    def add(p):
        p = _norm(p)
        if p not in seen and not any(p.startswith(e) for e in excl):
            seen.add(p)
            found.append(p)

    for src in sources:
        src = str(src)
        if _GLOB_CHARS & set(src.split("://", 1)[-1]):
            cands, explicit = sorted(_expand_glob(src, walk), key=_natural_key), False
            if not cands:
                raise SourceIOError(src, "matches no files")
        elif _isdir(src):
            cands, explicit = sorted(_walk(src, walk), key=_natural_key), False
        elif _exists(src):
            add(src)
            continue
        else:
            raise SourceIOError(src, "no such file or directory")
        for c in cands:
            if any(_norm(c).startswith(e) for e in excl) or _isdir(c):
                continue
            name = os.path.basename(c)
            if _TB_NAME.search(name):
                add(c)
            elif _JSON_NAME.search(name):
                reason = sniff(c)
                if reason is None:
                    add(c)
                else:
                    skipped.append((c, reason))
            elif not explicit:
                continue
    kept = set(walk.once([p for p in found if not is_url(p)]))
    return [p for p in found if is_url(p) or p in kept], skipped
