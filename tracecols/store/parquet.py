"""Write a set of tables as one Parquet directory, atomically: readers see all of it or none."""

import json
import os
import queue
import shutil
import threading
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa

from ..errors import OutputError
from .atomic import atomic_output, check_not_input, old_sibling, prepare_parent, temp_sibling, write_failure, writing

MANIFEST = "_tracecols.json"
COMPRESSION = "zstd"


@contextmanager
def staged_dir(out_dir):
    """A hidden sibling directory to write into; renamed to `out_dir` when the block ends
    without an exception, deleted otherwise, so an interrupted run never leaves a
    half-written output. An existing output is replaced only if it is a tracecols
    directory (has the manifest)."""
    out = Path(out_dir)
    prepare_parent(out, want_dir=True)
    if out.exists() and not (out / MANIFEST).exists() and any(out.iterdir()):
        raise OutputError(out, "exists and is not a tracecols output directory; refusing to overwrite it")
    tmp = temp_sibling(out)
    try:
        tmp.mkdir()
    except OSError as e:
        raise write_failure(out, e) or OutputError(out, e.strerror) from None
    try:
        with writing(out):
            yield tmp
            check_not_input(out, holds=True)  # inputs opened meanwhile count too
            if out.exists():
                old = old_sibling(out)
                os.rename(out, old)
                os.rename(tmp, out)
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def versions():
    """What every manifest says of the code that wrote it."""
    from ..version import SCHEMA_VERSION, __version__

    return {"tracecols_version": __version__, "schema_version": SCHEMA_VERSION}


def manifest(tables, inputs=(), **extra):
    """The _tracecols.json of an output: the versions, its inputs, its tables, and `extra`."""
    return {**versions(), "inputs": list(inputs), "tables": sorted(tables), **extra}


def write_manifest(directory, manifest):
    (Path(directory) / MANIFEST).write_text(json.dumps(manifest, indent=2, default=str) + "\n")


def writer(where, schema):
    """The one Parquet writer of every output: zstd, and dictionary pages for text columns only.
    pyarrow's default tries a dictionary for every column; on the int64 columns of a trace (ids,
    ns) it fills, is thrown away and costs a third of the write for nothing (docs/performance.md,
    "Dictionary pages for text columns only")."""
    text = [f.name for f in schema if _is_text(f.type)]
    import pyarrow.parquet as pq  # here: a command that writes no file does without it (ssl, the cloud filesystems)

    return pq.ParquetWriter(where, schema, compression=COMPRESSION, use_dictionary=text)


def _is_text(t):
    return (
        pa.types.is_string(t)
        or pa.types.is_large_string(t)
        or pa.types.is_string_view(t)
        or pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
        or pa.types.is_dictionary(t)
    )


def write_table(path, table):
    with writer(path, table.schema) as w:
        w.write_table(table)


def append_rows(path, table):
    """Rewrite the Parquet file at `path` with `table`'s rows after its own, then rename it
    into place (Parquet files cannot grow in place)."""
    import pyarrow.parquet as pq

    src = pq.ParquetFile(path)
    with atomic_output(path) as f, writer(f, src.schema_arrow) as w:
        for i in range(src.num_row_groups):
            w.write_table(src.read_row_group(i))
        w.write_table(table.cast(src.schema_arrow))


def write_dir(out_dir, tables, manifest):
    """Write {name: Arrow table} as out_dir/<name>.parquet (zstd) plus the manifest JSON, atomically."""
    with staged_dir(out_dir) as tmp:
        for name, table in tables.items():
            write_table(tmp / f"{name}.parquet", table)
        write_manifest(tmp, manifest)
    return Path(out_dir)


class BackgroundWriter:
    """One Parquet file fed with record batches, encoded and compressed on a second thread;
    with `path` None, one Arrow table in memory, which close() returns (the same groups
    and transform: what a trace that fits in memory is read into).

    Parquet encoding and zstd run in C++ without the GIL, so they overlap with the
    (GIL-bound) JSON parser feeding `put`. Batches are gathered into row groups of about
    `group_rows` rows; `transform(list of batches) -> Arrow table` runs on the writer
    thread too, with the `context` that was set when the group was queued. A group is queued
    once the writer has written the one before it, which bounds the memory held: the group
    being written and the one being gathered.
    """

    def __init__(self, path, schema, transform=None, group_rows=1 << 18):
        self.schema = schema
        self.transform = transform or (lambda batches, context: pa.Table.from_batches(batches, schema=schema))
        self.context = None
        self.group_rows = group_rows
        self._pending, self._rows = [], 0
        self._queue: queue.Queue = queue.Queue(maxsize=2)
        self._error = None
        self._writer = writer(path, schema) if path is not None else None
        self._tables = []  # the groups, when kept in memory
        self._thread = threading.Thread(target=self._run, name="parquet-writer", daemon=True)
        self._thread.start()

    def put(self, batch):
        self._pending.append(batch)
        self._rows += batch.num_rows
        if self._rows >= self.group_rows:
            # the compiled reader outruns the encoder: one group built while one is written,
            # never more: groups waiting beside the one built would add to the peak
            self.flush(wait=True)

    def flush(self, wait=False):
        """Queue what is pending as one row group; with `wait`, first let the writer finish
        what it has (a feeder faster than the writer, such as a part read back from disk,
        would otherwise keep three groups waiting beside the one being built)."""
        if self._error is not None:
            raise self._error
        if self._pending:
            if wait:
                self._queue.join()
            self._queue.put((self.context, self._pending))
            self._pending, self._rows = [], 0

    def wait_idle(self):
        """Return once the writer thread has written everything queued (it then only waits
        for the next group, holding nothing): before a fork, say."""
        self._queue.join()

    def _run(self):
        while True:
            item = self._queue.get()
            try:
                if item is None:
                    return
                if self._error is not None:
                    continue  # drain: the feeder learns of the error at its next flush
                table = self.transform(item[1], item[0]).cast(self.schema)
                item = None
                if self._writer is None:
                    self._tables.append(table)
                else:
                    self._writer.write_table(table, row_group_size=max(table.num_rows, 1))
            except BaseException as e:  # noqa: BLE001 - re-raised on the feeding thread
                self._error = e
            finally:
                self._queue.task_done()

    def abort(self):
        """Stop without writing what is pending (the caller deletes the file)."""
        self._pending = []
        self._error = self._error or RuntimeError("aborted")
        self._stop()

    def close(self):
        """Write what is left and close the file (in memory: the table); raises whatever the
        writer thread raised."""
        try:
            self.flush()
        finally:
            self._stop()
        if self._error is not None:
            raise self._error
        if self._writer is None:
            return pa.concat_tables(self._tables) if self._tables else self.schema.empty_table()
        return None

    def _stop(self):
        self._queue.put(None)
        self._thread.join()
        if self._writer is not None:
            self._writer.close()


def read_manifest(path):
    p = Path(path) / MANIFEST
    return json.loads(p.read_text()) if p.exists() else None


def table_files(path):
    """{table name: parquet path} of a tracecols output directory."""
    return {f.stem: str(f) for f in sorted(Path(path).glob("*.parquet"))}
