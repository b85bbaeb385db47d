"""Turn a list of parsed event dicts into one Arrow RecordBatch of RAW_SCHEMA.

Events of one kind share their key layout (a kernel always has the same args keys), so
a batch is split into groups by (event keys, args keys) and each group is converted by
pyarrow in C++ with a struct type of exactly the keys it has. Per group, not per event,
we then know which keys fall outside the schema (kept in `args`/`extra` as JSON text).

The struct types make pyarrow raise rather than coerce whenever a value would not
survive exactly: integers go through decimal128(38, 0) (a fraction, bool or string
raises), timestamps through decimal128(38, 3) (a sub-nanosecond fraction raises). When
a group raises, it is redone column by column and, where a column raises too, value by
value, with each value that does not fit kept verbatim in `args` / `extra`.
"""

from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import jsontext
from .schema import ARROW_KIND, PROMOTED, RAW_SCHEMA

_INT = pa.decimal128(38, 0)
_TIME = pa.decimal128(38, 3)
_FLOAT = pa.decimal128(38, 18)
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1

# Core fields: event key -> (column, kind). "id" kinds also fill a `<column>_str` column.
_CORE = {
    "ph": ("ph", "str"),
    "cat": ("cat_raw", "str"),
    "name": ("name", "str"),
    "pid": ("pid", "id"),
    "tid": ("tid", "id"),
    "ts": ("ts_ns", "time"),
    "dur": ("dur_ns", "time"),
    "id": ("flow_id", "id"),
    "bp": ("bp", "str"),
    "s": ("scope", "str"),
}
_PROMO = {key: (col, kind) for key, col, kind in PROMOTED}
# List elements go through float64, which is as strict as decimal128 for what JSON can hold
# (pyarrow raises on a Decimal and on an int beyond 2**53) and ~2.5x faster on shape lists.
# The one value it would take silently is a JSON true/false inside a shape list (as 1/0).
_EXACT = {
    "str": pa.string(),
    "id": _INT,
    "time": _TIME,
    "int": _INT,
    "float": _FLOAT,
    "strlist": pa.list_(pa.string()),
    "intlist": pa.list_(pa.float64()),
    "dims": pa.list_(pa.list_(pa.float64())),
}
# The struct fast path reads integers as int64, which rejects bools, strings and
# jsontext.Exact (the msgspec decoder's non-integers) but would truncate a plain Decimal (what
# ijson gives) silently: for events that may hold those, a second, float64 view of the same
# integer fields rejects Decimals (and ints beyond 2**53, which then take the exact decimal128 path).
_FAST = dict(_EXACT, id=pa.int64(), int=pa.int64())
_FINAL = dict(ARROW_KIND, id=pa.int64(), time=pa.int64())
_COLUMNS = [f.name for f in RAW_SCHEMA][1:]  # all but uid
_SMALL_GROUP = 32
_CONVERT_ERRORS = (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError, ValueError)


class _Overflow(Exception):
    pass


def _dec_to_int64(arr):
    """decimal128 array -> int64 array of its unscaled values; raises _Overflow beyond int64."""
    if len(arr) == 0:
        return pa.array([], pa.int64())
    words = np.frombuffer(arr.buffers()[1], dtype=np.int64)[2 * arr.offset : 2 * (arr.offset + len(arr))]
    lo, hi = words[0::2], words[1::2]
    if arr.null_count:
        valid = arr.is_valid().to_numpy(zero_copy_only=False)
        if np.any((hi != (lo >> 63)) & valid):
            raise _Overflow
        return pa.array(lo, pa.int64(), mask=~valid)
    if np.any(hi != (lo >> 63)):
        raise _Overflow
    return pa.array(lo, pa.int64())


def _finish(arr, kind):
    """Fast-path array -> the column's final Arrow type."""
    if kind in ("int", "id", "time"):
        return arr if arr.type == pa.int64() else _dec_to_int64(arr)
    if kind in ("intlist", "dims"):
        return arr.cast(ARROW_KIND[kind])  # exact: every element is an integer below 2**53
    return arr


_LISTS = ("strlist", "intlist", "dims")


def _text_as_list(values, kind):
    """Whether pyarrow would take text among `values` as a list: it reads any sequence as one, so
    "ab" would become ["a", "b"] and "" an empty list. Inside a shape list only "" matters: any
    other text fails as a number, and that failure already sends the group to the per-value path."""
    types = set(map(type, values))
    return str in types or (kind == "dims" and list in types and any("" in v for v in values if type(v) is list))


def _fits(v, kind):
    """Whether value v survives exactly in a column of this kind (the slow path's test)."""
    t = type(v)
    if kind in ("int", "id"):
        return t is int and _I64_MIN <= v <= _I64_MAX
    if kind == "str":
        return t is str and jsontext.utf8(v)
    if kind == "time":
        return _ns(v) is not None
    if kind == "float":  # an integer too, as the fast path takes it: where an event's value
        # lands must not depend on the other events of its batch
        return (isinstance(v, Decimal) or t is int) and _converts(v, _FLOAT)
    if kind == "strlist":
        return t is list and all(type(x) is str and jsontext.utf8(x) for x in v)
    if kind == "intlist":
        return t is list and _ints53(v)
    if kind == "dims":
        if t is not list:
            return False
        for x in v:  # a loop, not all(): this runs for every shape of a group with one odd value
            if type(x) is not list or not _ints53(x):
                return False
        return True
    return False


def _ints53(v):
    for x in v:
        if type(x) is not int or not -(1 << 53) <= x <= (1 << 53):
            return False
    return True


def _ns(v):
    if type(v) is int:
        x = v * 1000
    elif isinstance(v, Decimal) and v.is_finite() and int(v.scaleb(3)) == v.scaleb(3):
        x = int(v.scaleb(3))
    else:
        return None
    return x if _I64_MIN <= x <= _I64_MAX else None


def _converts(v, typ):
    try:
        pa.array([v], typ)
        return True
    except _CONVERT_ERRORS:
        return False


def _column(values, kind, spill, key):
    """Exact column from Python values; a value that does not fit goes to spill[i][key]."""
    # decimal128(38, 0) would take a decimal with an integral value (1000.0) into an integer
    # column: the values are taken at once only when none is a decimal, so that where a value
    # lands never depends on the other values of its batch
    if (kind not in ("int", "id") or not any(isinstance(v, Decimal) for v in values)) and not (
        kind in _LISTS and _text_as_list(values, kind)
    ):
        try:
            return _finish(pa.array(values, _EXACT[kind]), kind)
        except _CONVERT_ERRORS + (_Overflow,):
            pass
    out = list(values)
    for i, v in enumerate(out):
        if v is not None and not _fits(v, kind):
            spill.setdefault(i, {})[key] = v
            out[i] = None
    if kind == "time":
        return pa.array([None if v is None else _ns(v) for v in out], pa.int64())
    return _finish(pa.array(out, _EXACT[kind]), kind)


_CANONICAL_INT = r"^(0|[1-9][0-9]{0,17})$"  # the decimal text of an int below 19 digits, as int() writes it


def _canonical_ints(text):
    """int64 of a string array where the text is a canonical decimal (_CANONICAL_INT), else null."""
    return pc.if_else(pc.match_substring_regex(text, _CANONICAL_INT), text, pa.scalar(None, pa.string())).cast(pa.int64())


def _id_strings(values, nums, spill, key):
    """pid/tid/id written as strings: keep the text; a canonical decimal string also gets its int."""
    strs = [v if type(v) is str and jsontext.utf8(v) else None for v in values]
    if not any(s is not None for s in strs):
        return nums, None
    for i, s in enumerate(strs):
        if s is not None:
            spill.get(i, {}).pop(key, None)
            if not spill.get(i, True):
                del spill[i]
    text = pa.array(strs, pa.string())
    return pc.if_else(text.is_valid(), _canonical_ints(text), nums), text


_struct_cache: dict = {}


def _struct(keys, table):
    """(fast struct type, float64 check struct type or None) for these keys of `table`."""
    t = _struct_cache.get((keys, id(table)))
    if t is None:
        ints = [k for k in keys if table[k][1] in ("int", "id")]
        t = _struct_cache[(keys, id(table))] = (
            pa.struct([(k, _FAST[table[k][1]]) for k in keys]),
            pa.struct([(k, pa.float64()) for k in ints]) if ints else None,
        )
    return t


def _convert(dicts, keys, table, spill, checked):
    """({column: array}, fast) for `keys` (all in `table`) of `dicts`; exact, spilling what does not fit.
    `fast` is False when some value needed the per-value path. `checked`: the integer fields
    are checked against plain Decimals too (events that ijson parsed)."""
    try:
        fast, check = _struct(keys, table)
        for k in keys:
            kind = table[k][1]
            if kind in _LISTS and _text_as_list([d.get(k) for d in dicts], kind):
                raise TypeError(k)  # the per-value path spills it
        st = pa.array(dicts, type=fast)
        if check is not None and checked:
            pa.array(dicts, type=check)
        return {table[k][0]: _finish(st.field(k), table[k][1]) for k in keys}, True
    except _CONVERT_ERRORS + (_Overflow,):
        return {table[k][0]: _column([d.get(k) for d in dicts], table[k][1], spill, k) for k in keys}, False


def _text_ids(evs, key):
    """A pid/tid/id field a group writes as text in every event (2021 traces write every tid so):
    {column: int64, column_str: its text}, the int where the text is a canonical decimal below
    19 digits, as _id_strings gives it; None when some value is not a string."""
    try:
        strs = pa.array([e[key] for e in evs], pa.string())
    except _CONVERT_ERRORS:
        return None
    if strs.null_count:  # a JSON null is kept as such by the other path
        return None
    col = _CORE[key][0]
    return {col: _canonical_ints(strs), col + "_str": strs}


def _group_columns(evs, ekeys, akeys, mixed, checked):
    """All columns but uid for one group of events, as {name: array}; plus spilled JSON."""
    n = len(evs)
    # spilled JSON values by row: {row: {key: value}}
    extra: dict[int, dict[str, Any]] = {}
    rest: dict[int, dict[str, Any]] = {}
    core_keys = tuple(k for k in ekeys if k in _CORE)
    text = {}
    if not mixed:  # one layout: a field that is text in the first event is text in all, or no faster path
        for k in core_keys:
            if _CORE[k][1] == "id" and type(evs[0][k]) is str:
                found = _text_ids(evs, k)
                if found is not None:
                    text.update(found)
        if text:
            core_keys = tuple(k for k in core_keys if _CORE[k][0] not in text)
    cols, exact = _convert(evs, core_keys, _CORE, extra, checked)
    if mixed:
        _in_event_order(extra, evs)
    cols.update(text)
    for key, (col, kind) in _CORE.items():
        if kind == "id" and col in cols and not exact and col not in text:
            cols[col], strs = _id_strings([e.get(key) for e in evs], cols[col], extra, key)
            if strs is not None:
                cols[col + "_str"] = strs
    args = [e.get("args") for e in evs]
    if akeys is not None:
        for i, a in enumerate(args):
            if type(a) is not dict:  # kept in extra below, in its place among the event's keys
                args[i] = {}
            elif not a:  # "args": {} is kept as such, so that it round-trips
                rest[i] = {}
        promo_keys = tuple(k for k in akeys if k in _PROMO)
        cols.update(_convert(args, promo_keys, _PROMO, rest, checked)[0])
        if mixed:
            _in_event_order(rest, args)
            for i, a in enumerate(args):
                for k in a:  # in the trace's order (a set difference's order changes run to run)
                    if k not in _PROMO:
                        rest.setdefault(i, {})[k] = a[k]
                for k, v in a.items():
                    if v is None and k in _PROMO:
                        rest.setdefault(i, {})[k] = None
        else:
            others = [k for k in akeys if k not in _PROMO]
            if others:
                for i, a in enumerate(args):
                    r = rest.setdefault(i, {})
                    for k in others:
                        r[k] = a[k]
            for k in promo_keys:  # a null from the fast path was a JSON null in the trace
                col = cols[_PROMO[k][0]]
                if col.null_count:
                    for row in np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False)):
                        if args[row][k] is None:
                            rest.setdefault(int(row), {})[k] = None
    if mixed:
        for i, e in enumerate(evs):
            for k in e:
                if k not in _CORE and (k != "args" or type(e[k]) is not dict):
                    extra.setdefault(i, {})[k] = e[k]
    else:
        others = [k for k in ekeys if k not in _CORE and (k != "args" or akeys is None)]
        if others:
            for i, e in enumerate(evs):
                d = extra.setdefault(i, {})
                for k in others:
                    d[k] = e[k]
    cols["args"] = _json_column(rest, n)
    cols["extra"] = _json_column(extra, n)
    return [cols[c] if c in cols else null_column(RAW_SCHEMA.field(c).type, n) for c in _COLUMNS]


def _in_event_order(spilled, dicts):
    """Put each event's values that did not fit (taken column by column, in the order of a mixed
    group's keys) in the order of its own keys: what its text is never depends on its batch."""
    for i, d in spilled.items():
        if len(d) > 1:
            spilled[i] = {k: d[k] for k in dicts[i] if k in d}


def _json_column(by_index, n):
    if not by_index:
        return null_column(pa.string(), n)
    out = [None] * n
    for i, d in by_index.items():
        out[i] = jsontext.dumps(d)
    return pa.array(out, pa.string())


def build_batches(events, uid0, checked=True):
    """RecordBatches of RAW_SCHEMA for `events` (a list of parsed dicts), uids from uid0.

    One batch per group of events with the same key layout (small groups share one), so
    that the columns a group does not use are all-null and cost no memory (see null_column);
    rows are therefore grouped by kind, not in uid order. `checked`: the events may hold
    plain Decimals (see _convert); False for msgspec's, whose non-integers are jsontext.Exact.
    """
    groups: dict[tuple[tuple[str, ...], tuple[str, ...] | None], list[int]] = {}
    for i, e in enumerate(events):  # a plain loop: faster than map/zip/numpy grouping (measured)
        a = e.get("args")
        sig = (tuple(e), tuple(a) if type(a) is dict else None)
        g = groups.get(sig)
        if g is None:
            groups[sig] = [i]
        else:
            g.append(i)
    out, misc = [], []
    for (ekeys, akeys), idx in groups.items():
        if len(idx) < _SMALL_GROUP and len(groups) > 1:
            misc.extend(idx)
            continue
        out.append(_batch([events[i] for i in idx], idx, uid0, ekeys, akeys, False, checked))
    if misc:
        misc.sort()
        evs = [events[i] for i in misc]
        ekeys = tuple(dict.fromkeys(k for e in evs for k in e))
        akeys = tuple(dict.fromkeys(k for e in evs if type(e.get("args")) is dict for k in e["args"]))
        out.append(_batch(evs, misc, uid0, ekeys, akeys, True, checked))
    return out


def _batch(evs, idx, uid0, ekeys, akeys, mixed, checked):
    uid = pa.array(np.asarray(idx, dtype=np.int64) + uid0)
    return pa.RecordBatch.from_arrays([uid] + _group_columns(evs, ekeys, akeys, mixed, checked), schema=RAW_SCHEMA)


_zeros = pa.py_buffer(b"")


def _zero_buffer(nbytes):
    """A shared, read-only buffer of zeros at least `nbytes` long (grown on demand)."""
    global _zeros
    if _zeros.size < nbytes:
        _zeros = pa.py_buffer(bytes(max(nbytes, 2 * _zeros.size)))
    return _zeros


def null_column(typ, n):
    """An all-null array whose buffers all point into one shared zero buffer: no memory per column."""
    if pa.types.is_string(typ):
        return pa.Array.from_buffers(
            typ, n, [_zero_buffer((n + 7) // 8), _zero_buffer(4 * (n + 1)), _zero_buffer(0)], null_count=n
        )
    if pa.types.is_list(typ):
        child = null_column(typ.value_type, 0)
        return pa.Array.from_buffers(
            typ, n, [_zero_buffer((n + 7) // 8), _zero_buffer(4 * (n + 1))], null_count=n, children=[child]
        )
    width = typ.bit_width // 8
    return pa.Array.from_buffers(typ, n, [_zero_buffer((n + 7) // 8), _zero_buffer(width * n)], null_count=n)
