"""Read a rocprofiler-sdk (rocprofv3 `--output-format json`) file into RecordBatches of RAW_SCHEMA.

The file is one object, `{"rocprofiler-sdk-tool": [ITEM, …]}`, an ITEM per profiled process:
its tables (`metadata`, `agents`, `strings`, `kernel_symbols`, `code_objects`, …) and its
records, `buffer_records.<section>` and `callback_records.<section>`, each an array. Every
record becomes one Chrome-trace-like event dict, which batch.build_batches turns into the
same rows a Kineto trace gives, so everything downstream is shared:

  kernel_dispatch  "X", cat kernel, pid = GPU index, tid = hardware queue; name from kernel_symbols
  memory_copy      "X", cat gpu_memcpy on the GPU end of the copy (no queue: tid "memory copy")
  hip_api          "X", cat hip_runtime on the process's pid and the calling thread
  anything else    "X" (start and end), "i" (one timestamp) or "i" without time, cat = its section

A dispatch or copy links to the HIP call that launched it through the shared internal
correlation id (args `correlation`), as a Kineto kernel does to its launch. Timestamps are
integer ns and stay exact (handed over as decimal µs, never float). Every field of a record
but the two timestamps that became ts/dur is kept in args as written. Of the tables, those that
are objects (`metadata`, `strings`) stay in the trace's metadata and those that are lists
(`agents`, `kernel_symbols`, …) become "M" rows of `events` (cat rocprofv3, name = the table,
the row in args); GPU agents also become a Kineto-style `deviceProperties`. The file holds no
PyTorch ops, so there is no CPU op tree: the trace says so in its warnings.

The file is streamed (ijson), the tables as values and the records one by one; records that
come before the tables naming them are held until their ITEM ends.
"""

import gc
from collections.abc import Callable
from typing import Any

import ijson

from ..errors import Empty, Malformed
from ..progress import tracker
from .batch import build_batches
from .nesting import Bounded
from .restore import us
from .source import GZIP_ERRORS
from .toplevel import ijson_backend, one_line

TOP_KEY = "rocprofiler-sdk-tool"
FORM = "rocprofv3"
GROUPS = ("buffer_records", "callback_records")
_NEEDED = ("metadata", "agents", "strings", "kernel_symbols")  # what naming a record takes
_STARTS = ("start_map", "start_array")
_ENDS = ("end_map", "end_array")
_GPU = 2  # agents[].type: 1 CPU, 2 GPU
_VRAM_HEAPS = (1, 2)  # mem_banks[].heap_type: frame buffer, public and private
NO_OP_TREE = (
    "no CPU op tree: a rocprofv3 file records HIP/HSA calls and GPU work, not PyTorch ops, "
    "so op analyses are empty and kernels have no op_uid"
)
CHUNK = 1 << 16


def _handle(v):
    """rocprofiler ids are written as {"handle": n}."""
    return v.get("handle") if isinstance(v, dict) else v


def _int(v):
    return v if type(v) is int else None


def _get(table, key):
    """table[key], or None when absent or when the file put a list or object where an id goes."""
    try:
        return table.get(key)
    except TypeError:
        return None


class _Names:
    """What one ITEM's tables say about its records: operation names, kernel names, GPU indices, pid."""

    def __init__(self, meta):
        strings = meta.get("strings") if isinstance(meta.get("strings"), dict) else {}
        self.ops: dict[str, Any] = {g: strings.get(g) if isinstance(strings.get(g), list) else [] for g in GROUPS}
        self.kernels: dict[int, str] = {}
        for k in meta.get("kernel_symbols") or []:
            if isinstance(k, dict) and type(k.get("kernel_id")) is int:
                name = k.get("formatted_kernel_name") or k.get("demangled_kernel_name") or k.get("kernel_name")
                if isinstance(name, str):
                    self.kernels[k["kernel_id"]] = name
        self.gpus: dict[int, int] = {}  # agent handle -> GPU index (the HIP device id)
        for a in meta.get("agents") or []:
            if isinstance(a, dict) and a.get("type") == _GPU:
                idx = _int(a.get("gpu_index"))
                idx = idx if idx is not None and idx >= 0 else _int(a.get("logical_node_type_id"))
                if idx is not None and type(_handle(a.get("id"))) is int:
                    self.gpus[_handle(a.get("id"))] = idx
        md = meta.get("metadata") if isinstance(meta.get("metadata"), dict) else {}
        self.pid = _int(md.get("pid"))

    def operation(self, group, rec):
        """The name rocprofiler-sdk gives the record's (kind, operation), else None."""
        kind, op = rec.get("kind"), rec.get("operation")
        table = self.ops[group]
        if type(kind) is int and type(op) is int and 0 <= kind < len(table) and isinstance(table[kind], dict):
            ops = table[kind].get("operations")
            if isinstance(ops, list) and 0 <= op < len(ops) and isinstance(ops[op], str):
                return ops[op]
        return None


def _timed(rec, ev, consumed):
    """Set ts/dur (or ts alone) of event `ev` from the record's integer ns timestamps."""
    start, end = rec.get("start_timestamp"), rec.get("end_timestamp")
    if type(start) is int and type(end) is int:
        ev["ph"], ev["ts"], ev["dur"] = "X", us(start), us(end - start)
        consumed |= {"start_timestamp", "end_timestamp"}
    elif type(rec.get("timestamp")) is int:
        ev["ph"], ev["ts"], ev["s"] = "i", us(rec["timestamp"]), "t"
        consumed.add("timestamp")
    else:
        ev["ph"] = "i"


def _linked(rec):
    """Promoted args of the correlation ids: internal -> correlation; external (0 = none) -> External id."""
    corr = rec.get("correlation_id")
    out = {}
    if isinstance(corr, dict):
        if _int(corr.get("internal")) is not None:
            out["correlation"] = corr["internal"]
        if _int(corr.get("external")):
            out["External id"] = corr["external"]
    return out


def _workgroups(grid, block):
    """Workgroups per dimension (CUDA's grid): HSA's grid_size counts work-items."""
    if type(grid) is not list or type(block) is not list or len(grid) != len(block):
        return None
    if not all(type(g) is int and type(b) is int and b > 0 for g, b in zip(grid, block)):
        return None
    return [-(-g // b) for g, b in zip(grid, block)]


def _xyz(v):
    return [v.get(d) for d in "xyz"] if isinstance(v, dict) else None


def event(names, group, section, rec):
    """The event dict of one record (see the module docstring)."""
    if not isinstance(rec, dict):
        return {"ph": "i", "cat": section, "name": section, "pid": names.pid, "args": {"record": rec}}
    consumed: set[str] = set()
    ev = {"ph": None, "cat": section, "name": names.operation(group, rec) or section}
    _timed(rec, ev, consumed)
    args = _linked(rec)
    if group == "buffer_records" and section == "kernel_dispatch":
        info: Any = rec.get("dispatch_info") if isinstance(rec.get("dispatch_info"), dict) else {}
        dev = _get(names.gpus, _handle(info.get("agent_id")))
        queue = _handle(info.get("queue_id"))
        kid = info.get("kernel_id")
        ev.update(
            cat="kernel",
            name=_get(names.kernels, kid) or f"kernel_id {kid}",
            pid=dev if dev is not None else _handle(info.get("agent_id")),
            tid=queue,
        )
        block = _xyz(info.get("workgroup_size"))
        grid = _workgroups(_xyz(info.get("grid_size")), block)
        args.update(device=dev, stream=queue, grid=grid, block=block)
    elif group == "buffer_records" and section == "memory_copy":
        src, dst = _handle(rec.get("src_agent_id")), _handle(rec.get("dst_agent_id"))
        dev = _get(names.gpus, dst)
        dev = _get(names.gpus, src) if dev is None else dev
        ev.update(cat="gpu_memcpy", pid=dev if dev is not None else dst, tid="memory copy")
        args["device"] = dev
    else:
        if section == "hip_api":
            ev["cat"] = "hip_runtime"
        ev.update(pid=names.pid, tid=rec.get("thread_id"))
    args.update((k, v) for k, v in rec.items() if k not in consumed)
    ev["args"] = {k: v for k, v in args.items() if v is not None}
    return {k: v for k, v in ev.items() if v is not None}


def device_properties(items):
    """Kineto-style deviceProperties of the GPU agents (the devices table reads it)."""
    out: dict[int, dict[str, Any]] = {}
    for meta in items:
        names = _Names(meta)
        for a in meta.get("agents") or []:
            idx = _get(names.gpus, _handle(a.get("id"))) if isinstance(a, dict) and a.get("type") == _GPU else None
            if idx is None:
                continue
            vram: list[Any] = [
                m.get("size_in_bytes")
                for m in a.get("mem_banks") or []
                if isinstance(m, dict) and m.get("heap_type") in _VRAM_HEAPS
            ]
            props = {
                "id": idx,
                "name": a.get("product_name") or a.get("name"),
                "numSms": a.get("cu_count"),
                "warpSize": a.get("wave_front_size"),
                "maxThreadsPerBlock": a.get("workgroup_max_size"),
                "totalGlobalMem": sum(vram) if vram and all(type(v) is int for v in vram) else None,
                "gfxName": a.get("name"),
            }
            out.setdefault(idx, {k: v for k, v in props.items() if v is not None})
    return [out[i] for i in sorted(out)]


class _Reader:
    """The parse: ijson events in, event dicts out to `emit`; every other value kept as written."""

    def __init__(self, emit, path):
        self.emit, self.path = emit, path
        self.top: dict[str, Any] = {}  # top-level keys other than TOP_KEY
        self.items: list[dict[str, Any]] = []  # each ITEM's tables
        self.tool_is_array = False
        self.n_records = 0
        self.builder: Any = None  # an ijson.ObjectBuilder while a value is being built
        self.done: Callable[[Any], None] | None = None
        self.want: Callable[[Any], None] | None = None
        self.depth = 0
        self.item: dict[str, Any] | None = None
        self.names: _Names | None = None
        self.pending: list[tuple[str | None, str | None, Any]] = []  # records met before the tables that name them
        self.group: str | None = None
        self.section: str | None = None

    def run(self, parse):
        item_prefix = TOP_KEY + ".item"
        for prefix, ev, value in parse:
            if self.builder is not None:
                self.builder.event(ev, value)
                self.depth += (ev in _STARTS) - (ev in _ENDS)
                if self.depth == 0:
                    self._done()
            elif self.want is not None:  # the first event of a value to keep whole
                self._start(ev, value, self.want)
                self.want = None
            elif prefix == "":
                if ev == "map_key" and value != TOP_KEY:
                    self.want = self._keep(self.top, value)
            elif prefix == TOP_KEY:
                if ev == "start_array":
                    self.tool_is_array = True
                elif ev != "end_array":
                    self._start(ev, value, self._keep(self.top, TOP_KEY))
            elif prefix == item_prefix:
                self._item_event(ev, value)
            elif self.group is not None and prefix == f"{item_prefix}.{self.group}":
                if ev == "map_key":
                    self.section = value
                elif ev not in ("start_map", "end_map"):  # a group that is not an object: kept
                    self._start(ev, value, self._keep(self.item, self.group))
            elif self.group is not None and prefix == f"{item_prefix}.{self.group}.{self.section}":
                if ev not in ("start_array", "end_array"):  # a section that is not an array: kept
                    assert self.item is not None  # a group's prefix is met inside an ITEM only
                    self._start(ev, value, self._keep(self.item.setdefault(self.group, {}), self.section))
            elif self.group is not None and prefix == f"{item_prefix}.{self.group}.{self.section}.item":
                self._start(ev, value, self._record)
            else:  # every value is either a table kept whole or a record: nothing else is left
                raise Malformed(self.path, f"unexpected JSON at '{prefix}' in a rocprofv3 file")

    def _item_event(self, ev, value):
        if ev == "start_map":
            self.item, self.names, self.pending = {}, None, []
            self.items.append(self.item)
        elif ev == "map_key":
            self.group = value if value in GROUPS else None
            if self.group is None:
                self.want = self._table(value)
        elif ev == "end_map":
            names = _Names(self.item)
            for group, section, rec in self.pending:
                self.emit(event(names, group, section, rec))
            self.item = self.names = self.group = None
            self.pending = []
        else:  # an ITEM that is not an object: kept as written
            self._start(ev, value, lambda v: self.items.append({"item": v}))

    def _record(self, rec):
        self.n_records += 1
        assert self.item is not None  # records are met inside an ITEM only
        if self.pending or not all(k in self.item for k in _NEEDED):
            self.pending.append((self.group, self.section, rec))
            return
        if self.names is None:
            self.names = _Names(self.item)
        self.emit(event(self.names, self.group, self.section, rec))

    def _start(self, ev, value, done):
        self.builder, self.done = ijson.ObjectBuilder(), done
        self.builder.event(ev, value)
        self.depth = int(ev in _STARTS)
        if self.depth == 0:
            self._done()

    def _done(self):
        value, done = self.builder.value, self.done
        self.builder = self.done = None
        assert done is not None  # set with the builder
        done(value)

    def _table(self, key):
        """Where a table of the ITEM goes: kept for naming the records; a list table's rows are
        also events ("M", cat rocprofv3, named after the table, the row in args), so that the
        big ones (kernel_symbols: 18 MB in a 37 MB file) are columns of `events`, not metadata."""
        item = self.item
        assert item is not None  # a table's key is met inside an ITEM only

        def put(v):
            item[key] = v
            if isinstance(v, list):
                md: Any = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
                pid = _int(md.get("pid"))
                for row in v:
                    ev = {
                        "ph": "M",
                        "cat": FORM,
                        "name": key,
                        "pid": pid,
                        "args": row if isinstance(row, dict) else {"value": row},
                    }
                    self.emit({k: x for k, x in ev.items() if x is not None})

        return put

    @staticmethod
    def _keep(into, key):
        def put(v):
            into[key] = v

        return put


def read_trace(src, on_batch, batch_size, on_head=None):
    """Read rocprofv3 JSON `src` (a read.source.Source); the dict read.kineto.read_trace returns,
    plus `warnings` (lines for traces.warnings)."""
    if on_head is not None:
        on_head({})  # no rank in a rocprofv3 file: the file name may still say it
    held: list[dict[str, Any]] = []
    uid = 0
    progress = tracker()

    def flush():
        nonlocal held, uid
        for b in build_batches(held, uid):
            on_batch(b)
        progress.events(len(held))
        uid += len(held)
        held = []

    def emit(ev):
        held.append(ev)
        if len(held) >= batch_size:
            flush()

    reader = _Reader(emit, src.path)
    gc_was = gc.isenabled()
    gc.disable()  # the parse makes many small dicts: the cyclic GC would walk them again and again
    try:
        with src.stream(hashed=True) as raw:
            f = Bounded(raw, src.path)
            try:
                reader.run(ijson_backend().parse(f, buf_size=CHUNK))
            except ijson.JSONError as e:
                msg = one_line(e)
                if "premature EOF" in msg or "incomplete" in msg.lower():
                    msg = "unexpected end of file (truncated rocprofv3 file?)"
                raise src.fault(msg, offset=f.offset) from None
            except GZIP_ERRORS as e:
                raise src.gzip_error(e, offset=f.offset) from None
            if held:
                flush()
    finally:
        if gc_was:
            gc.enable()
    if not reader.tool_is_array:
        raise Malformed(src.path, f"'{TOP_KEY}' is not an array of per-process objects (rocprofv3 JSON has one)")
    if reader.n_records == 0:
        raise Empty(src.path, "no records: the rocprofv3 file's buffer and callback records are all empty")
    meta = dict(reader.top)
    meta[TOP_KEY] = [{k: v for k, v in item.items() if not isinstance(v, list)} for item in reader.items]
    devices = device_properties(reader.items)
    if devices:
        meta["deviceProperties"] = devices
    return {
        "path": src.path,
        "form": FORM,
        "metadata": meta,
        "n_events": uid,
        "sha256": src.sha256,
        "size": src.read_size,
        "gzip": src.gzip,
        "warnings": [NO_OP_TREE],
    }
