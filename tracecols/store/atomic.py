"""Files that appear whole or not at all: written under a temporary name, then renamed."""
import gzip
import os
import uuid
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_output(path):
    """A binary file object for `path` (gzip-compressed when the name ends in .gz).

    The data goes to a hidden sibling file that replaces `path` only when the block ends
    without an exception; on any failure the temporary file is removed.
    """
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.tmp-{uuid.uuid4().hex[:8]}"
    raw = open(tmp, "wb")  # noqa: SIM115 - closed in the finally below, after the rename or the cleanup
    f = gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) if out.name.endswith(".gz") else raw
    try:
        yield f
        if f is not raw:
            f.close()
        raw.close()
        os.replace(tmp, out)
    except BaseException:
        raw.close()
        tmp.unlink(missing_ok=True)
        raise
