"""The `events` table: raw batches plus trace_id, rank, normalised `cat` and `end_ns`; its strings
redacted (model/secrets.py) unless the caller keeps secrets."""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..read.schema import RAW_SCHEMA
from .categories import normalise_array
from .secrets import redact_table


def events_table(batches, trace_id, rank, keep_secrets=False):
    """Arrow table `events` from the reader's RecordBatches of one trace."""
    raw = pa.Table.from_batches(batches, schema=RAW_SCHEMA) if batches else RAW_SCHEMA.empty_table()
    if not keep_secrets:  # before `cat` is derived from cat_raw
        raw = redact_table(raw)
    n = raw.num_rows
    cat = normalise_array(raw.column("cat_raw")) if n else pa.array([], pa.string())
    end = pc.add(raw.column("ts_ns"), raw.column("dur_ns"))
    cols = [_constant(trace_id, n), _constant(rank, n)]
    names = ["trace_id", "rank"]
    for f in RAW_SCHEMA:
        if f.name == "cat_raw":
            cols.append(cat)
            names.append("cat")
        cols.append(raw.column(f.name))
        names.append(f.name)
        if f.name == "dur_ns":
            cols.append(end)
            names.append("end_ns")
    return pa.Table.from_arrays(cols, names=names)


def _constant(value, n):
    """An int32 column of `n` times `value` (null where None), built without a Python list."""
    if value is None:
        return pa.nulls(n, pa.int32())
    return pa.array(np.full(n, value, dtype=np.int32))
