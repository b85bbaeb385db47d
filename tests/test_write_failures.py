"""A write the system refuses (disk full, read-only file system, no permission) is one line,
`OUTPUT: cannot write: reason`, exit code 2, and leaves no output and no temporary file.

The real cases run each command on a tiny tmpfs (full after 64 KiB) or a read-only one,
mounted in a mount namespace of its own (`unshare -m`, root only: skipped elsewhere); the
simulated ones raise the errors pyarrow, polars and DuckDB raise, wherever tests run."""

import contextlib
import errno
import io
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from conftest import DATA_TRACE

from tracecols import errors
from tracecols.cli import main
from tracecols.store.atomic import write_failure

NO_SPACE = "No space left on device"  # glibc's strerror(ENOSPC)
READ_ONLY = "Read-only file system"  # strerror(EROFS)


def cli(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in args])
    return rc, out.getvalue(), err.getvalue()


def _everything(d):
    return sorted(str(p.relative_to(d)) for p in Path(d).rglob("*"))


# ----------------------------------------------------------------------------------------
# The one mapping: what each library raises, and what it is not


@pytest.mark.parametrize(
    "exc, reason",
    [
        (OSError(errno.ENOSPC, "No space left on device"), NO_SPACE),
        (PermissionError(errno.EACCES, "Permission denied", "/x"), "Permission denied"),
        (OSError(errno.EROFS, "Read-only file system"), READ_ONLY),
        (OSError(errno.EDQUOT, "Disk quota exceeded"), "Disk quota exceeded"),
        # pyarrow: errno set, its own text around it
        (OSError(errno.ENOSPC, "Error writing bytes to file. Detail: [errno 28] No space left on device"), NO_SPACE),
        # polars: no errno attribute, the number in the text
        (OSError("No space left on device (os error 28)"), NO_SPACE),
        # DuckDB writing Parquet: a JSON blob with the errno
        (
            duckdb.IOException(
                'IO Error: Async write failed for range [offset=28, size=620994]: {"exception_type":"IO",'
                '"exception_message":"Could not write file \\"/m/x.parquet\\": No space left on device","errno":"28"}'
            ),
            NO_SPACE,
        ),
        # DuckDB writing a database file: the reason ends the message
        (duckdb.IOException('IO Error: Could not write file "/m/db.duckdb": No space left on device'), NO_SPACE),
        (
            duckdb.TransactionException(
                'TransactionContext Error: Failed to commit: Could not write file "/m/.x.wal": No space left on device'
            ),
            NO_SPACE,
        ),
    ],
)
def test_write_failures_become_one_reason(exc, reason):
    e = write_failure("out/x", exc)
    assert isinstance(e, errors.OutputError)
    assert e.line() == f"out/x: cannot write: {reason}"


@pytest.mark.parametrize(
    "exc",
    [
        FileNotFoundError(errno.ENOENT, "No such file or directory", "in.json"),
        OSError(errno.EIO, "Input/output error"),  # a failing read as much as a write
        OSError("something else"),
        duckdb.IOException("IO Error: No magic bytes found at end of file 'x.parquet'"),
        duckdb.ConversionException("Conversion Error: Could not convert string 'a' to INT32"),
        ValueError("No space left on device"),
    ],
)
def test_other_errors_are_not_write_failures(exc):
    assert write_failure("out/x", exc) is None


def test_errors_survive_a_trip_to_a_worker_process():
    """A worker of `ingest -j N` hands its error back pickled (it once broke the pool)."""
    for kind in (errors.OutputError, errors.Malformed, errors.QueryError):
        e = pickle.loads(pickle.dumps(kind("/a/b", "went wrong", offset=7)))
        assert type(e) is kind and e.line() == kind("/a/b", "went wrong", offset=7).line()


# ----------------------------------------------------------------------------------------
# Simulated: the errors raised where the outputs are written, any user


def test_report_on_a_full_disk_leaves_nothing(tmp_path, monkeypatch):
    import tracecols.report.html as html

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(html, "render", lambda src, title=None: "x" * 10)
    monkeypatch.setattr(os, "replace", full)
    rc, _, err = cli("report", DATA_TRACE, "-o", tmp_path / "r.html", "-q")
    assert (rc, err) == (2, f"tracecols: {tmp_path / 'r.html'}: cannot write: {NO_SPACE}\n")
    assert _everything(tmp_path) == []


def test_analyze_whose_duckdb_write_fails_leaves_nothing(tmp_path, monkeypatch):
    from tracecols.engine import scheduler

    def copy_fails(*a, **k):
        raise duckdb.IOException(
            'IO Error: Async write failed for range [offset=4, size=9]: {"exception_type":"IO",'
            '"exception_message":"Could not write file \\"h.parquet\\": No space left on device","errno":"28"}'
        )

    monkeypatch.setattr(scheduler, "_stream_to", copy_fails)
    out = tmp_path / "res"
    rc, _, err = cli("analyze", DATA_TRACE, "-o", out, "-q")
    assert (rc, err) == (2, f"tracecols: {out}: cannot write: {NO_SPACE}\n")
    assert _everything(tmp_path) == []


def test_sql_to_dev_full(tmp_path, monkeypatch):
    """/dev/full: every write to it is ENOSPC (the temporary file is the output's sibling,
    so the file written is /dev/full itself through a patched temp_sibling)."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    import tracecols.store.atomic as atomic

    monkeypatch.setattr(atomic, "temp_sibling", lambda out: Path("/dev/full"))
    monkeypatch.setattr(Path, "unlink", lambda self, missing_ok=False: None)  # not /dev/full
    out = tmp_path / "r.csv"
    rc, _, err = cli("sql", DATA_TRACE, "select * from events", "--format", "csv", "-o", out, "-q")
    assert (rc, err) == (2, f"tracecols: {out}: cannot write: {NO_SPACE}\n")
    assert not out.exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes in a read-only directory")
def test_read_only_directory(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o555)
    for argv in (["analyze", DATA_TRACE, "-o", ro / "a"], ["report", DATA_TRACE, "-o", ro / "r.html"]):
        rc, _, err = cli(*argv, "-q")
        assert (rc, err) == (2, f"tracecols: {argv[-1]}: cannot write: no write permission in {ro}\n")
    assert _everything(ro) == []


# ----------------------------------------------------------------------------------------
# Real: a tmpfs of 64 KiB, or a read-only one, in a mount namespace of its own


def _can_mount(tmp):
    if not shutil.which("unshare") or os.geteuid() != 0:
        return False
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs {tmp}"], capture_output=True, timeout=30
    )
    return probe.returncode == 0


def _on_small_fs(tmp_path, argv, options="size=64k"):
    """Run `tracecols ARGV` (MNT stands for the mount point) with a tmpfs mounted at MNT;
    returns (exit code, stderr, what MNT holds afterwards)."""
    mnt = tmp_path / "mnt"
    mnt.mkdir(exist_ok=True)
    if not _can_mount(mnt):
        pytest.skip("cannot mount a tmpfs in a mount namespace here (needs root and unshare)")
    args = " ".join(f"'{str(a).replace('MNT', str(mnt))}'" for a in argv)
    script = (
        f"mount -t tmpfs -o {options} tmpfs {mnt} || exit 99\n"
        f"{sys.executable} -m tracecols {args} -q >/dev/null 2>{tmp_path}/err\n"
        f"rc=$?\nfind {mnt} -mindepth 1 >{tmp_path}/left\nexit $rc\n"
    )
    # the tracecols these tests import (CI's is the installed wheel, with its compiled reader),
    # not the source tree: run from elsewhere, with the environment as it is
    done = subprocess.run(["unshare", "-m", "sh", "-c", script], cwd=tmp_path, timeout=300)
    assert done.returncode != 99
    left = (tmp_path / "left").read_text().split()
    return done.returncode, (tmp_path / "err").read_text(), left


FULL = {
    "analyze": (["analyze", DATA_TRACE, "-o", "MNT/a"], "MNT/a"),
    "report": (["report", DATA_TRACE, "-o", "MNT/r.html"], "MNT/r.html"),
    "sql csv": (["sql", DATA_TRACE, "select * from events", "--format", "csv", "-o", "MNT/e.csv"], "MNT/e.csv"),
    "ingest": (["ingest", DATA_TRACE, "-o", "MNT/lake", "-j", "1"], "MNT/lake"),
    "augment": (["augment", DATA_TRACE, "MNT/aug.json"], "MNT/aug.json"),
    "stacks": (["stacks", DATA_TRACE, "-o", "MNT/st.txt"], "MNT/st.txt"),
}


@pytest.mark.parametrize("case", sorted(FULL))
def test_disk_full(tmp_path, case):
    argv, out = FULL[case]
    rc, err, left = _on_small_fs(tmp_path, argv)
    out = out.replace("MNT", str(tmp_path / "mnt"))
    assert (rc, err) == (2, f"tracecols: {out}: cannot write: {NO_SPACE}\n")
    assert left == []


def test_export_duckdb_on_a_full_disk(tmp_path):
    lake = tmp_path / "lake"
    assert cli("ingest", DATA_TRACE, "-o", lake, "-j", "1", "-q")[0] == 0
    rc, err, left = _on_small_fs(tmp_path, ["export", lake, "--duckdb", "MNT/x.duckdb"])
    assert (rc, err) == (2, f"tracecols: {tmp_path / 'mnt' / 'x.duckdb'}: cannot write: {NO_SPACE}\n")
    assert left == []


@pytest.mark.parametrize(
    "argv, out",
    [
        (["analyze", DATA_TRACE, "-o", "MNT/a"], "MNT/a"),
        (["ingest", DATA_TRACE, "-o", "MNT/lake", "-j", "1"], "MNT/lake"),
        (["sql", DATA_TRACE, "select 1", "-o", "MNT/s.json", "--format", "json"], "MNT/s.json"),
    ],
)
def test_read_only_file_system(tmp_path, argv, out):
    rc, err, left = _on_small_fs(tmp_path, argv, options="size=64k,ro")
    out = out.replace("MNT", str(tmp_path / "mnt"))
    assert (rc, err) == (2, f"tracecols: {out}: cannot write: {READ_ONLY}\n")
    assert left == []
