"""The lake layout: one hive-partitioned Parquet directory for many traces.

    LAKE/_tracecols.json                          the manifest (the commit point)
    LAKE/<table>/rank=<R>/t<trace_id>-<sha12>.parquet
    LAKE/<table>/rank=__HIVE_DEFAULT_PARTITION__/…  traces whose rank is unknown

A trace's files are written first (each under a temporary name, renamed into place), then
the manifest is replaced atomically with one that lists them: a reader that goes by the
manifest sees each trace whole or not at all. Files no manifest lists (left by a run that was
killed between the two steps) are deleted by the next ingest. The root may be a local path or
an fsspec URL (`memory://`, `s3://`, …); on object stores every object is written in one PUT.

Writers: one ingest at a time. On a local path an ingest holds `LakeLock` (flock on
LAKE/_tracecols.lock) from before it reads the manifest until its last commit; readers take no
lock. On URLs there is no lock: `Committer` re-reads the manifest before each commit and stops
the run if another writer changed it.
"""

import json
import os
import socket
import time

from ..errors import SourceIOError, TraceError
from ..read.source import is_url
from .atomic import temp_sibling

try:
    import fcntl
except ImportError:  # not POSIX: no lock, as on URLs
    fcntl = None  # type: ignore[assignment]

MANIFEST = "_tracecols.json"
LOCK = "_tracecols.lock"
LAYOUT = "lake"
NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"  # hive's name for a null partition value; DuckDB and pyarrow read it as NULL


def partition(rank):
    return f"rank={NULL_PARTITION if rank is None else int(rank)}"


def file_name(trace_id, sha256):
    return f"t{int(trace_id):06d}-{(sha256 or 'nohash')[:12]}.parquet"


class LakeFS:
    """File operations on the lake root, local or fsspec."""

    def __init__(self, root):
        self.root = str(root).rstrip("/") if is_url(root) else os.path.abspath(str(root))
        self.remote = is_url(self.root)
        if self.remote:
            import fsspec

            self.fs, self._base = fsspec.core.url_to_fs(self.root)
            self._proto = self.root.split("://", 1)[0]

    def path(self, rel):
        """Path or URL of a file of the lake, as DuckDB and fsspec accept it."""
        return f"{self.root}/{rel}"

    def _p(self, rel):
        return f"{self._base}/{rel}" if rel else self._base

    def exists(self, rel=""):
        if self.remote:
            return self.fs.exists(self._p(rel))
        return os.path.exists(os.path.join(self.root, rel))

    def read_text(self, rel):
        if self.remote:
            with self.fs.open(self._p(rel), "rb") as f:
                return f.read().decode()
        with open(os.path.join(self.root, rel), encoding="utf-8") as f:
            return f.read()

    def write_bytes(self, rel, data):
        """Atomic replace: a temporary name in the same directory, then a rename."""
        if self.remote:
            parent = os.path.dirname(self._p(rel))
            self.fs.makedirs(parent, exist_ok=True)
            self.fs.pipe_file(self._p(rel), data)  # one PUT: whole or absent
            return
        full = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        tmp = str(temp_sibling(full))
        try:
            with open(tmp, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, full)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    def remove(self, rel):
        try:
            if self.remote:
                self.fs.rm(self._p(rel))
            else:
                os.unlink(os.path.join(self.root, rel))
        except FileNotFoundError:
            pass

    def listdir(self):
        """Names directly under the root (empty if it does not exist)."""
        if not self.exists():
            return []
        if self.remote:
            return [os.path.basename(p.rstrip("/")) for p in self.fs.ls(self._base, detail=False)]
        return os.listdir(self.root)

    def files_under(self, top):
        """Relative paths of every file below root/top, temporary ones included."""
        if self.remote:
            base = self._p(top)
            if not self.fs.exists(base):
                return []
            return [f"{top}/{p[len(base) :].lstrip('/')}" for p in self.fs.find(base)]
        out = []
        for d, _, files in os.walk(os.path.join(self.root, top)):
            rel = os.path.relpath(d, self.root)
            out += [f"{rel}/{f}".replace(os.sep, "/") for f in files]
        return out

    def remove_empty_dirs(self, top):
        if self.remote:
            return
        for d, dirs, files in os.walk(os.path.join(self.root, top), topdown=False):
            if not dirs and not files and d != os.path.join(self.root, top):
                try:
                    os.rmdir(d)
                except OSError:
                    pass


def read_manifest(lfs):
    """The lake manifest, or None if the root has none. Raises if the root holds something else."""
    if lfs.exists(MANIFEST):
        return _parse_manifest(lfs, lfs.read_text(MANIFEST))
    return None


def _parse_manifest(lfs, text):
    m = json.loads(text)
    if m.get("layout") != LAYOUT:
        raise SourceIOError(lfs.root, "is a single-trace tracecols output (tracecols.open reads it), not a lake")
    return m


def check_writable(lfs, tables):
    """A root without a manifest may be written only if absent/empty or holding leftovers of ours."""
    if lfs.exists(MANIFEST):
        return
    stray = [n for n in lfs.listdir() if n not in tables and n != LOCK and not n.startswith(".")]
    if stray:
        raise SourceIOError(
            lfs.root, f"exists and is not a tracecols lake; refusing to write into it (found {', '.join(sorted(stray)[:3])})"
        )


def _manifest_text(manifest):
    return json.dumps(manifest, indent=1, sort_keys=True, default=str) + "\n"


def write_manifest(lfs, manifest):
    lfs.write_bytes(MANIFEST, _manifest_text(manifest).encode())


def referenced(manifest):
    return {rel for t in manifest.get("traces", []) for rel in t["files"].values()}


def sweep(lfs, manifest, tables, present=None):
    """Delete files under the table directories that the manifest does not list.

    `present`, if a set, receives the listed files that exist (to find traces missing some)."""
    keep = referenced(manifest) if manifest else set()
    removed = []
    for name in tables:
        for rel in lfs.files_under(name):
            if rel not in keep:
                lfs.remove(rel)
                removed.append(rel)
            elif present is not None:
                present.add(rel)
        lfs.remove_empty_dirs(name)
    for n in lfs.listdir():  # a manifest rewrite that was cut short
        if n.startswith(f".{MANIFEST}.tmp-"):
            lfs.remove(n)
            removed.append(n)
    return removed


class LakeBusy(TraceError):
    """Another ingest is writing the lake."""

    kind = "lake busy"


class LakeLock:
    """Exclusive lock of a local lake for one ingest run: `flock` on LAKE/_tracecols.lock.

    The kernel drops a flock when its holder exits, however it exits (SIGKILL included): a lock
    is never stale, and the file a killed holder leaves is simply locked again by the next
    ingest. The holder writes "PID HOST" into the file (for the waiting message) and deletes
    the file before letting go; a waiter that wins the lock on the deleted file sees that the
    path now names another file (or none) and starts over, so two runs never both hold it.
    Readers (`tc.Lake`, `tracecols sql`) never take it. On URLs, and where there is no
    `fcntl`, there is no lock (`held` stays False): see `Committer`.

    timeout: None waits for as long as it takes, 0 fails at once; on giving up, `LakeBusy`.
    on_wait(line) is told once that the run is waiting, and by whom.
    """

    POLL = 0.1

    def __init__(self, lfs, timeout=None, on_wait=None):
        self.lfs, self.timeout, self.on_wait = lfs, timeout, on_wait
        self.available = fcntl is not None and not lfs.remote
        self.path = None if lfs.remote else os.path.join(lfs.root, LOCK)
        self.fd = None
        self.created_root = False
        self.unsupported = None  # why the file system could not lock, if it could not

    @property
    def held(self):
        return self.fd is not None

    def holder(self):
        """(pid, host) written by the current holder, or None if unknown."""
        assert self.path is not None  # asked only while acquiring, on a local root
        try:
            with open(self.path, encoding="utf-8", errors="replace") as f:
                words = f.read().split()
        except OSError:
            return None
        return (words[0], words[1] if len(words) > 1 else "") if words else None

    def _who(self, holder):
        if holder is None:
            return "pid unknown"
        pid, host = holder
        return f"pid {pid}" if not host or host == socket.gethostname() else f"pid {pid} on {host}"

    def acquire(self):
        if not self.available or self.held:
            return self
        assert self.path is not None  # available only on a local root
        t0 = time.monotonic()
        told = False
        while True:
            if not os.path.isdir(self.lfs.root):
                os.makedirs(self.lfs.root, exist_ok=True)
                self.created_root = True
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
            except FileNotFoundError:  # the root went away in between (a holder removed it, empty)
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                holder = self.holder()
                waited = time.monotonic() - t0
                if self.timeout is not None and waited >= self.timeout:
                    raise LakeBusy(
                        self.lfs.root,
                        f"another ingest ({self._who(holder)}) is writing into it "
                        f"(it holds {LOCK}); gave up after {waited:.1f} s",
                    ) from None
                if not told and self.on_wait is not None and (holder is not None or waited > 1):
                    self.on_wait(f"waiting for another ingest into {self.lfs.root} ({self._who(holder)})")
                    told = True
                time.sleep(self.POLL)
                continue
            except OSError as e:  # a file system without flock (ENOLCK, EOPNOTSUPP, …): no lock, as on URLs
                os.close(fd)
                try:
                    os.unlink(self.path)
                except OSError:
                    pass
                self.available, self.unsupported = False, f"{type(e).__name__}: {e.strerror or e}"
                return self
            try:
                st, mine = os.stat(self.path), os.fstat(fd)
                same = (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino)
            except FileNotFoundError:
                same = False
            if not same:  # locked a file its last holder had deleted: try again on the current one
                os.close(fd)
                continue
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()} {socket.gethostname()}\n".encode(), 0)
            self.fd = fd
            return self

    def release(self):
        if self.fd is None:
            return
        assert self.path is not None  # held only on a local root
        try:
            os.unlink(self.path)  # while still holding it: see the class docstring
        except OSError:
            pass
        if self.created_root:  # leave no empty directory behind (a run that found nothing to commit)
            try:
                os.rmdir(self.lfs.root)
            except OSError:
                pass
        os.close(self.fd)  # lets go of the lock
        self.fd = None

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()


class Committer:
    """Writes the manifest for a run (the commit), starting from the one it read.

    With `verify` (a lake without `LakeLock`: URLs), each commit first re-reads the manifest and
    stops the run with `LakeBusy` if it is no longer the one this run read or last wrote:
    another ingest committed meanwhile, and writing now would drop its traces (the manifest
    update is read-modify-write) or hand out its trace_ids again. Object stores have no
    compare-and-swap that fsspec offers everywhere, so two commits within the same few
    milliseconds can still race; see docs/fleet.md.
    """

    def __init__(self, lfs, verify):
        self.lfs, self.verify = lfs, verify
        self.text = self._read()
        self.manifest = None if self.text is None else _parse_manifest(lfs, self.text)

    def _read(self):
        try:
            return self.lfs.read_text(MANIFEST)
        except FileNotFoundError:
            return None

    def changed(self):
        """Whether someone else has written the manifest since this run read or wrote it."""
        return self._read() != self.text

    def commit(self, manifest):
        if self.verify and self.changed():
            raise LakeBusy(
                self.lfs.root,
                "another ingest committed to this lake while this one ran (concurrent "
                "ingests into a URL are not supported); stopped, keeping what this "
                "run had committed; run ingest again once the other has finished",
            )
        text = _manifest_text(manifest)
        self.lfs.write_bytes(MANIFEST, text.encode())
        self.text = text
