"""Read a PyTorch Execution Trace (ET) into Arrow tables: et_nodes, et_inputs, et_outputs.

An ET is one JSON object: `schema`, `pid`, `time`, `start_ts`, `finish_ts` and `nodes`, a list of
operator nodes. Two node layouts exist in the wild and both are read here:

- schema 1.0.1 (2023): flat keys `id`, `name`, `parent`, `rf_id`, `fw_parent`, `seq_id`, `scope`,
  `tid`, `fw_tid`, `op_schema`, and parallel lists `inputs`/`input_shapes`/`input_types`,
  `outputs`/`output_shapes`/`output_types`;
- schema >= 1.0.2 (`1.0.3-chakra.0.0.4`, `1.1.0-…`, `1.1.1-…`): `id`, `name`, `ctrl_deps` (the
  parent), `inputs`/`outputs` as objects `{values, shapes, types[, strides]}`, and every other
  field as `attrs`, a list of `{name, type, value}`.

`nodes` is streamed with ijson (one node dict at a time); the top-level keys before it are read
by a short token walk and those after it from the bytes that follow the last node, as for
Kineto traces. Nothing of a node is dropped: fields without a column of their own go to the
`attrs` JSON text of `et_nodes`.
"""

import re
from typing import Any

import pyarrow as pa

from .. import memory
from ..errors import Malformed, NotATrace
from . import jsontext
from .kineto import item_stream, parse_tail
from .source import Source
from .toplevel import first_byte, ijson_backend, keys_before

# node fields with a column of their own (both layouts name them the same, as keys or attrs)
_INT_FIELDS = ("rf_id", "fw_parent", "seq_id", "scope", "tid", "fw_tid")
_STR_FIELDS = ("op_schema", "kernel_backend", "kernel_file")
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1
NODES_PER_PART = 4096  # nodes held as Python lists before they become Arrow

NODES_SCHEMA = pa.schema(
    [
        ("node_id", pa.int64()),
        ("name", pa.string()),
        ("parent_id", pa.int64()),
        ("rf_id", pa.int64()),
        ("tid", pa.int64()),
        ("fw_parent", pa.int64()),
        ("fw_tid", pa.int64()),
        ("seq_id", pa.int64()),
        ("scope", pa.int64()),
        ("op_schema", pa.string()),
        ("kernel_backend", pa.string()),
        ("kernel_file", pa.string()),
        ("n_inputs", pa.int32()),
        ("n_outputs", pa.int32()),
        ("input_types", pa.list_(pa.string())),
        ("output_types", pa.list_(pa.string())),
        ("attrs", pa.string()),
        ("pos", pa.int64()),
    ]
)

VALUES_SCHEMA = pa.schema(
    [
        ("node_id", pa.int64()),
        ("idx", pa.int32()),
        ("type", pa.string()),
        ("value", pa.string()),
        ("shape", pa.string()),
        ("stride", pa.string()),
        ("dims", pa.list_(pa.int64())),
        ("tensor_id", pa.int64()),
        ("storage_id", pa.int64()),
        ("storage_offset", pa.int64()),
        ("numel", pa.int64()),
        ("itemsize", pa.int64()),
        ("device", pa.string()),
    ]
)

_TENSOR = re.compile(r"^Tensor(\(|$)")


def _int(v):
    return v if type(v) is int and _I64_MIN <= v <= _I64_MAX else None


def _str(v):
    return v if type(v) is str else None


def _json(v):
    return None if v is None else jsontext.dumps(v)


class _Values:
    """Columns of et_inputs or et_outputs, filled node by node."""

    def __init__(self):
        self.cols: dict[str, list[Any]] = {f.name: [] for f in VALUES_SCHEMA}

    def add(self, node_id, values, shapes, types, strides):
        values = values if isinstance(values, list) else []
        shapes = shapes if isinstance(shapes, list) else []
        types = types if isinstance(types, list) else []
        strides = strides if isinstance(strides, list) else []
        n = max(len(values), len(shapes), len(types))
        c = self.cols
        for i in range(n):
            v: Any = values[i] if i < len(values) else None  # any JSON value
            s = shapes[i] if i < len(shapes) else None
            t = types[i] if i < len(types) else None
            st = strides[i] if i < len(strides) else None
            c["node_id"].append(node_id)
            c["idx"].append(i)
            c["type"].append(_str(t))
            c["value"].append(_json(v))
            c["shape"].append(_json(s))
            c["stride"].append(_json(st))
            flat = isinstance(s, list) and all(type(x) is int for x in s)
            c["dims"].append(s if flat and type(t) is str and _TENSOR.match(t) else None)
            tensor = (
                type(t) is str and _TENSOR.match(t) and isinstance(v, list) and len(v) == 6 and all(type(x) is int for x in v[:5])
            )
            for j, col in enumerate(("tensor_id", "storage_id", "storage_offset", "numel", "itemsize")):
                c[col].append(_int(v[j]) if tensor else None)
            c["device"].append(_str(v[5]) if tensor else None)
        return n

    def take(self):
        """The rows added since the last take, as a table; the lists start again empty."""
        t = pa.table([pa.array(self.cols[f.name], f.type) for f in VALUES_SCHEMA], schema=VALUES_SCHEMA)
        self.cols = {f.name: [] for f in VALUES_SCHEMA}
        return t


def _node_row(node, pos, rows, ins, outs):
    """Append one node dict to the column lists."""
    rest = dict(node)
    node_id = _int(rest.pop("id", None))
    name = rest.pop("name", None)
    fields = {}
    if "attrs" in rest and isinstance(rest["attrs"], list):  # >= 1.0.2: fields as typed attrs
        kept = []
        for a in rest.pop("attrs"):
            if isinstance(a, dict) and a.get("name") in _INT_FIELDS + _STR_FIELDS and a["name"] not in fields:
                fields[a["name"]] = a.get("value")
            else:
                kept.append(a)
        if kept:
            rest["attrs"] = kept
        parent = rest.pop("ctrl_deps", None)
        i = rest.pop("inputs", None)
        o = rest.pop("outputs", None)
        i = i if isinstance(i, dict) else {}
        o = o if isinstance(o, dict) else {}
        n_in = ins.add(node_id, i.get("values"), i.get("shapes"), i.get("types"), i.get("strides"))
        n_out = outs.add(node_id, o.get("values"), o.get("shapes"), o.get("types"), o.get("strides"))
        in_types, out_types = i.get("types"), o.get("types")
        for side, d in (("inputs", i), ("outputs", o)):
            extra = {k: v for k, v in d.items() if k not in ("values", "shapes", "types", "strides")}
            if extra:
                rest[side] = extra
    else:  # 1.0.1: flat keys
        for k in _INT_FIELDS + _STR_FIELDS:
            if k in rest:
                fields[k] = rest.pop(k)
        parent = rest.pop("parent", rest.pop("ctrl_deps", None))
        n_in = ins.add(
            node_id,
            rest.pop("inputs", None),
            rest.pop("input_shapes", None),
            rest.pop("input_types", None),
            rest.pop("input_strides", None),
        )
        n_out = outs.add(
            node_id,
            rest.pop("outputs", None),
            rest.pop("output_shapes", None),
            rest.pop("output_types", None),
            rest.pop("output_strides", None),
        )
        in_types = node.get("input_types")
        out_types = node.get("output_types")
    rows["node_id"].append(node_id)
    rows["name"].append(_str(name))
    rows["parent_id"].append(_int(parent))
    for k in _INT_FIELDS:
        v = fields.get(k)
        rows[k].append(_int(v))
        if v is not None and _int(v) is None:
            rest.setdefault("_unparsed", {})[k] = v
    for k in _STR_FIELDS:
        rows[k].append(_str(fields.get(k)))
    rows["n_inputs"].append(n_in)
    rows["n_outputs"].append(n_out)
    rows["input_types"].append(
        [t if type(t) is str else jsontext.dumps(t) for t in in_types] if isinstance(in_types, list) else None
    )
    rows["output_types"].append(
        [t if type(t) is str else jsontext.dumps(t) for t in out_types] if isinstance(out_types, list) else None
    )
    if name is not None and type(name) is not str:
        rest["name"] = name
    rows["attrs"].append(_json(rest) if rest else None)
    rows["pos"].append(pos)


def _head(src):
    """Top-level keys before `nodes`; raises NotATrace when the file is not an ET."""
    if first_byte(src) != b"{":
        raise NotATrace(src.path, "not a PyTorch Execution Trace (not a JSON object)")

    def kineto(key, meta):
        if key == "traceEvents":
            raise NotATrace(src.path, "it is a Kineto trace (has 'traceEvents'), not an Execution Trace; pass it as --kineto")

    try:
        return keys_before(src, "nodes", ijson_backend(), on_key=kineto)
    except NotATrace as e:
        if "no 'nodes'" in e.message:
            raise NotATrace(src.path, "not a PyTorch Execution Trace: " + e.message) from None
        raise


def check_execution_trace(path: str) -> None:
    """Raise what read_execution_trace would for a file that is no ET (or cannot be read), from
    its first keys only: for a caller that reads something long before it."""
    _head(Source(path))


def read_execution_trace(path):
    """Read an ET file. Returns {"meta": top-level keys, "nodes", "inputs", "outputs": Arrow tables,
    "path", "size", "sha256"}."""
    src = Source(path)
    meta = _head(src)
    rows: dict[str, list[Any]] = {f.name: [] for f in NODES_SCHEMA}
    ins, outs = _Values(), _Values()
    parts: dict[str, list[pa.Table]] = {"nodes": [], "inputs": [], "outputs": []}

    def flush():
        # the Python lists of a few thousand nodes at a time: as Arrow, a node and its values take
        # a fraction of what they take as Python objects
        parts["nodes"].append(pa.table([pa.array(rows[f.name], f.type) for f in NODES_SCHEMA], schema=NODES_SCHEMA))
        for r in rows.values():
            r.clear()
        parts["inputs"].append(ins.take())
        parts["outputs"].append(outs.take())

    n = 0
    with item_stream(src, "nodes.item", "Execution Trace") as items:
        for node in items:
            if not isinstance(node, dict):
                raise Malformed(src.path, f"node {n} is not a JSON object", offset=items.offset)
            _node_row(node, n, rows, ins, outs)
            n += 1
            if n % NODES_PER_PART == 0:
                flush()
    if n:
        tail = parse_tail(items.tap.tail_bytes()) or {}
        meta.update({k: v for k, v in tail.items() if k != "nodes"})
    flush()
    # one table at a time, its parts freed as it is combined: not every table twice at once
    tables = {k: pa.concat_tables(parts.pop(k)).combine_chunks() for k in list(parts)}
    memory.release()  # the parsed nodes' heap and the parts, before the caller needs it
    return {
        "meta": meta,
        **tables,
        "path": src.path,
        "size": src.read_size,
        "sha256": src.sha256,
    }
