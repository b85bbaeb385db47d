"""The lake layout: one hive-partitioned Parquet directory for many traces.

    LAKE/_tracecols.json                          the manifest (the commit point)
    LAKE/<table>/rank=<R>/t<trace_id>-<sha12>.parquet
    LAKE/<table>/rank=__HIVE_DEFAULT_PARTITION__/…  traces whose rank is unknown

A trace's files are written first (each under a temporary name, renamed into place), then
the manifest is replaced atomically with one that lists them: a reader that goes by the
manifest sees each trace whole or not at all. Files no manifest lists (left by a run that was
killed between the two steps) are deleted by the next ingest. The root may be a local path or
an fsspec URL (`memory://`, `s3://`, …); on object stores every object is written in one PUT.
"""
import io
import json
import os
import uuid

import pyarrow.parquet as pq

from ..errors import SourceIOError
from ..read.source import is_url

MANIFEST = "_tracecols.json"
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
        tmp = os.path.join(os.path.dirname(full), f".{os.path.basename(full)}.tmp-{uuid.uuid4().hex[:8]}")
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

    def write_parquet(self, rel, table):
        if self.remote:
            buf = io.BytesIO()
            pq.write_table(table, buf, compression="zstd")
            self.write_bytes(rel, buf.getvalue())
            return
        full = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        tmp = os.path.join(os.path.dirname(full), f".{os.path.basename(full)}.tmp-{uuid.uuid4().hex[:8]}")
        try:
            pq.write_table(table, tmp, compression="zstd")
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
            return [f"{top}/{p[len(base):].lstrip('/')}" for p in self.fs.find(base)]
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
        m = json.loads(lfs.read_text(MANIFEST))
        if m.get("layout") != LAYOUT:
            raise SourceIOError(lfs.root, "is a single-trace tracecols output (tracecols.open reads it), not a lake")
        return m
    return None


def check_writable(lfs, tables):
    """A root without a manifest may be written only if absent/empty or holding leftovers of ours."""
    if lfs.exists(MANIFEST):
        return
    stray = [n for n in lfs.listdir() if n not in tables and not n.startswith(".")]
    if stray:
        raise SourceIOError(lfs.root, "exists and is not a tracecols lake; refusing to write into it "
                                      f"(found {', '.join(sorted(stray)[:3])})")


def write_manifest(lfs, manifest):
    lfs.write_bytes(MANIFEST, (json.dumps(manifest, indent=1, sort_keys=True, default=str) + "\n").encode())


def referenced(manifest):
    return {rel for t in manifest.get("traces", []) for rel in t["files"].values()}


def sweep(lfs, manifest, tables):
    """Delete files under the table directories that the manifest does not list."""
    keep = referenced(manifest) if manifest else set()
    removed = []
    for name in tables:
        for rel in lfs.files_under(name):
            if rel not in keep:
                lfs.remove(rel)
                removed.append(rel)
        lfs.remove_empty_dirs(name)
    for n in lfs.listdir():  # a manifest rewrite that was cut short
        if n.startswith(f".{MANIFEST}.tmp-"):
            lfs.remove(n)
            removed.append(n)
    return removed
