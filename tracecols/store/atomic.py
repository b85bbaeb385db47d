"""Outputs that appear whole or not at all, never over an input, and no litter from a dead run.

Every file and directory tracecols writes is built under a hidden temporary sibling and
renamed into place at the end (`atomic_output`, parquet.staged_dir); scratch space goes to
`scratch_dir`. Their names carry the host and the process id, so that the next run can
sweep what a killed one left — only names of this form, only from this host, and only
when that process is gone.

While the inputs a command opens are noted (read/source.py `inputs_noted`: the CLI, for
each command), an output that is one of them, or a directory holding one, is refused
before anything is replaced.

A write that the system refuses part-way (disk full, quota, read-only file system, no
permission) is `cannot write: OUTPUT: reason` (`writing`, `write_failure`): one mapping for
Python's, pyarrow's and DuckDB's ways of saying so.
"""

import contextlib
import errno
import gzip
import os
import re
import shutil
import socket
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import OutputError
from ..read.source import opened_inputs

_HOST = re.sub(r"[^A-Za-z0-9]", "", socket.gethostname())[:24] or "host"


def check_not_input(out, holds=False):
    """Raise OutputError if `out` is a noted input (or, with `holds`, a directory above one)."""
    inputs = opened_inputs()
    if not inputs:
        return
    real = os.path.realpath(out)
    for p in inputs:
        if p == real or (holds and p.startswith(real.rstrip(os.sep) + os.sep)):
            what = "is" if p == real else "holds"
            raise OutputError(out, f"{what} an input of this command ({p}); refusing to write over it")


def temp_sibling(out):
    """A fresh hidden name beside `out` for building it; stale ones of dead runs are swept first."""
    out = Path(out)
    sweep(out.parent, f".{out.name}.")
    return out.parent / f".{out.name}.tmp-{_HOST}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


def old_sibling(out):
    """The name an output being replaced is moved to until the new one is in place."""
    return out.parent / f".{out.name}.old-{_HOST}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


def scratch_dir(prefix="tracecols-", dir=None):
    """A tempfile.TemporaryDirectory named so that a later run can sweep it if this one is killed."""
    base = dir or tempfile.gettempdir()
    sweep(base, prefix)
    return tempfile.TemporaryDirectory(prefix=f"{prefix}{_HOST}-{os.getpid()}-", dir=dir)


_LEFT = re.compile(r"(?:tmp|old|sort|parts)?-?(?P<host>[A-Za-z0-9]+)-(?P<pid>\d+)-")


def sweep(directory, prefix):
    """Remove entries of `directory` named `prefix` + [tmp-|old-]HOST-PID-… left by a process of
    this host that no longer runs."""
    try:
        entries = os.scandir(directory)
    except OSError:
        return
    with entries:
        for e in entries:
            if not e.name.startswith(prefix):
                continue
            m = _LEFT.match(e.name[len(prefix) :])
            if m is None or m["host"] != _HOST or _alive(int(m["pid"])):
                continue
            if e.is_dir(follow_symlinks=False):
                shutil.rmtree(e.path, ignore_errors=True)
            else:
                try:
                    os.unlink(e.path)
                except OSError:
                    pass


def _alive(pid):
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


# what a write can fail with that is the output's place, not a bug: the system's reason is the message
WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG, errno.EACCES, errno.EPERM})
# the errno as pyarrow ("[errno 28]"), polars ("(os error 28)") and DuckDB ('"errno":"28"') write it
_ERRNO_IN_TEXT = re.compile(r'(?:\[errno |\(os error |"errno"\s*:\s*"?)(\d+)', re.IGNORECASE)


def write_failure(out: str | os.PathLike, e: BaseException) -> OutputError | None:
    """`cannot write: OUT: reason` for an exception that says the system refused a write (an
    OSError of WRITE_ERRNOS, its errno an attribute or in its text; a DuckDB error (an IO
    error, a failed commit of a database file) whose errno sits in a JSON blob or whose
    reason ends its message), else None: anything else stays what it is."""
    if isinstance(e, OutputError):
        return e
    if isinstance(e, OSError) and e.errno is not None:
        return OutputError(out, os.strerror(e.errno)) if e.errno in WRITE_ERRNOS else None
    if not isinstance(e, OSError) and not type(e).__module__.endswith("duckdb"):
        return None
    text = str(e)
    m = _ERRNO_IN_TEXT.search(text)
    if m:
        return OutputError(out, os.strerror(int(m[1]))) if int(m[1]) in WRITE_ERRNOS else None
    for n in WRITE_ERRNOS:
        if text.rstrip().endswith(os.strerror(n)):
            return OutputError(out, os.strerror(n))
    return None


@contextmanager
def writing(out: str | os.PathLike) -> Iterator[None]:
    """Within the block, a write the system refuses (write_failure) is OutputError(`out`)."""
    try:
        yield
    except Exception as e:
        failure = write_failure(out, e)
        if failure is None or failure is e:
            raise
        raise failure from None


def prepare_parent(out, want_dir):
    """Check that `out` can be written (as a directory when `want_dir`) and create its parent;
    an impossible output is one OutputError line, not an OSError from deep inside."""
    out = Path(out)
    check_not_input(out, holds=want_dir)
    if want_dir and out.exists() and not out.is_dir():
        raise OutputError(out, "is a file; the output here is a directory")
    if not want_dir and out.is_dir():
        raise OutputError(out, "is a directory; the output here is a file")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise OutputError(out, f"{_file_above(out)} is a file, not a directory") from None
    except OSError as e:
        raise OutputError(out, e.strerror) from None
    if not os.access(out.parent, os.W_OK | os.X_OK):
        if os.statvfs(out.parent).f_flag & os.ST_RDONLY:
            raise OutputError(out, os.strerror(errno.EROFS))
        raise OutputError(out, f"no write permission in {out.parent}")


def _file_above(out):
    for p in Path(out).parents:
        if p.exists():
            return p
    return out.parent


@contextmanager
def atomic_output(path):
    """A binary file object for `path` (gzip-compressed when the name ends in .gz).

    The data goes to a hidden sibling file that replaces `path` only when the block ends
    without an exception; on any failure the temporary file is removed.
    """
    out = Path(path)
    prepare_parent(out, want_dir=False)
    tmp = temp_sibling(out)
    try:
        raw = open(tmp, "wb")  # noqa: SIM115 - closed in the finally below, after the rename or the cleanup
    except OSError as e:
        raise write_failure(out, e) or OutputError(out, e.strerror) from None
    f = gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) if out.name.endswith(".gz") else raw
    try:
        with writing(out):
            yield f
            if f is not raw:
                f.close()
            raw.close()
            check_not_input(out)  # inputs opened meanwhile count too
            os.replace(tmp, out)
    except BaseException:
        with contextlib.suppress(OSError):  # a full disk can fail the close too
            raw.close()
        tmp.unlink(missing_ok=True)
        raise
