"""Both readers over one file, for the differential tests: the compiled reader's table and the
Python reader's (the oracle), each sorted by uid."""

import pyarrow as pa

from tracecols.read import kineto, native
from tracecols.read.kineto import read_head
from tracecols.read.schema import RAW_SCHEMA
from tracecols.read.source import Source


def python_table(path):
    """The Python reader's, in small batches (every trace crosses batch boundaries)."""
    src = Source(path)
    form, _ = read_head(src)
    batches = []
    n, tail = kineto._read_events_python(src, form, batches.append, batch_size=2048)
    return _sorted(batches), n, tail


def native_table(path, threads=1, piece=None):
    """The compiled reader's, through read_events as the pipeline calls it (so that a file it stops
    on gets the Python reader's error)."""
    src = Source(path)
    form, _ = read_head(src)
    batches = []
    old = native.PIECE
    if piece:
        native.PIECE = piece
    try:
        assert native.usable(src)
        n, tail = kineto.read_events(src, form, batches.append, threads=threads)
    finally:
        native.PIECE = old
    return _sorted(batches), n, tail


def _sorted(batches):
    t = pa.Table.from_batches(batches, schema=RAW_SCHEMA)
    return t.sort_by("uid").combine_chunks()


def first_difference(a, b):
    """None when the two tables are equal, column by column and row by row; else where they differ."""
    if a.num_rows != b.num_rows:
        return f"{a.num_rows} rows against {b.num_rows}"
    for name in RAW_SCHEMA.names:
        x, y = a.column(name), b.column(name)
        if not x.equals(y):
            xs, ys = x.to_pylist(), y.to_pylist()
            i = next(i for i in range(len(xs)) if xs[i] != ys[i])
            return f"column {name}, uid {a.column('uid')[i]}: {xs[i]!r} against {ys[i]!r}"
    return None
