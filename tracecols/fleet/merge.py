"""Every rank on one timeline: the events of many traces as one Chrome-trace JSON file.

The traces come from a lake or from trace files opened together (anything with the shared
query interface, face.Face); each one's events are read a page at a time from its tables
(the lake's Parquet, or the traces' Arrow tables) and written as they come (store/trace_json).

- Processes: each (trace, pid) gets a pid of its own, in a block per trace, so ranks never
  collide; it is named `rank R · CPU`, `rank R · GPU D` (the pid its device's kernels sit on,
  or that the trace labels `GPU D`), `rank R · CPU (pid P)` for a second host process and
  `rank R · <name>` for a pid the trace writes as text (Kineto's `Spans`). The trace's own
  `process_name` / `process_sort_index` events are rewritten to say so, and one is added
  where a pid has none. Traces of unknown or repeated rank (runs of a lake) are named
  `trace T` (`trace T (rank R)`) instead.
- Each event copied keeps everything it had, and gets `"rank": R` in its args where the
  rank is known (and the event has no `rank` of its own): reading the file back, its events
  are its rank's by args as well as by process name.
- Flow and async ids (`id`) and the `correlation` of launches and device events are
  renumbered per trace: two ranks' flows never join, and read back, each kernel links to its
  own rank's launch.
- Clocks (`align`): 'base-time' shifts each trace by its `baseTimeNanoseconds` (its times are
  relative to it) onto the earliest one's; 'collective' shifts each trace so that the end of
  the first collective every trace ran (collective_skew with as many ranks as traces, the
  earliest) falls at the same time as on the first trace; 'none' keeps the times as written;
  'auto' takes 'base-time' when every trace has one, else 'collective' when such a call
  exists, else 'none'. The rule and each trace's offset are in the output's
  `tracecols_merge` metadata.
- Overlays: `critical-path` (each step's critical path, a process per rank), `queue-depth`
  (the queue length of every stream, as counters on its GPU), `memory-bw` (copy bandwidth
  per direction, counters on its GPU), `slow-steps` (the steps `step_outliers` calls slow, as
  slices named with their excess over the median step, on the rank's overlay process).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import QueryError, SourceIOError, Unsupported
from ..read.restore import restore_event, us
from ..store.trace_json import write_trace_json

if TYPE_CHECKING:
    import polars as pl
    import pyarrow as pa

ALIGN = ("auto", "base-time", "collective", "none")
OVERLAYS = ("critical-path", "queue-depth", "memory-bw", "slow-steps")
SLOW_TID = -2  # the slow steps' thread on the overlay process (the critical path's are its steps, -1 the whole trace)
_PAGE = 1 << 16  # events read and written at a time
_BLOCK = 1000  # pids per trace, at least
_GPU_LABEL = re.compile(r"^GPU (\d+)$")
_NOT_EVENT = ("trace_id", "rank", "cat", "end_ns")  # columns the events table adds to the trace's


class Tables(Protocol):
    """What the merge reads: tracecols.Trace and tracecols.Lake (face.Face)."""

    origin: str
    secrets_redacted: bool  # its rows come out with no secret in them

    @property
    def tables(self) -> list[str]: ...

    def sql(self, query: str) -> pl.DataFrame: ...

    def arrow(self, query: str) -> pa.Table: ...


@dataclass
class RankPlan:
    """One trace of the merge: its label, its offset and its processes."""

    trace_id: int
    rank: int | None
    label: str
    path: str
    base_time_ns: int | None
    distributed_info: dict[str, Any] | None
    offset_ns: int = 0
    pids: dict[Any, int] = field(default_factory=dict)  # the trace's pid (int, text or None) -> new pid
    names: dict[Any, str] = field(default_factory=dict)  # the trace's pid -> process name
    gpu_pids: dict[int, int] = field(default_factory=dict)  # device -> new pid
    overlay_pid: int = 0
    events: int = 0


@dataclass
class Alignment:
    rule: str  # 'baseTimeNanoseconds', 'collective end' or 'none'
    words: str  # the rule, said for a person
    collective: dict[str, Any] | None = None


@dataclass
class Merged:
    """What `merge` wrote."""

    path: str
    ranks: list[RankPlan]
    alignment: Alignment
    events: int
    overlays: dict[str, int]


def _plans(t: Tables) -> list[RankPlan]:
    rows = t.sql("""SELECT trace_id, rank, path, base_time_ns, distributed_info FROM traces
                    ORDER BY rank NULLS LAST, trace_id""").rows()
    if not rows:
        raise SourceIOError(t.origin, "holds no trace to merge")
    ranks = [r[1] for r in rows]
    by_rank = None not in ranks and len(set(ranks)) == len(ranks)
    plans = []
    for trace_id, rank, path, base, info in rows:
        label = f"rank {rank}" if by_rank else f"trace {trace_id}" + ("" if rank is None else f" (rank {rank})")
        plans.append(RankPlan(trace_id, rank, label, path, base, json.loads(info) if info else None))
    return plans


def _pid_key(pid: int | None, pid_str: str | None) -> Any:
    return pid_str if pid_str is not None else pid


def _quote(text: object) -> str:
    return "'" + str(text).replace("'", "''") + "'"


def _processes(t: Tables, plans: list[RankPlan]) -> None:
    """Give each trace's pids new ones, in a block per trace, and a process name."""
    devices: dict[int, dict[Any, int]] = {int(p.trace_id): {} for p in plans}  # trace -> {pid key: device}
    if "kernels" in t.tables:
        for trace_id, pid, pid_str, device in t.sql("""
                SELECT k.trace_id, e.pid, e.pid_str, min(k.device) FROM kernels k
                JOIN events e ON e.trace_id = k.trace_id AND e.uid = k.uid
                WHERE k.device IS NOT NULL GROUP BY ALL ORDER BY ALL""").rows():
            devices[trace_id].setdefault(_pid_key(pid, pid_str), int(device))
    for trace_id, pid, pid_str, labels in t.sql("""
            SELECT trace_id, pid, pid_str, json_extract_string(args, '$.labels') FROM events
            WHERE ph = 'M' AND name = 'process_labels' ORDER BY ALL""").rows():
        m = _GPU_LABEL.match(labels or "")
        if m:
            devices[trace_id].setdefault(_pid_key(pid, pid_str), int(m[1]))
    counts: dict[int, list[tuple[Any, Any, int]]] = {int(p.trace_id): [] for p in plans}
    for trace_id, pid, pid_str, n in t.sql("""SELECT trace_id, pid, pid_str, count(*) FILTER (WHERE ph <> 'M')
                                               FROM events GROUP BY ALL""").rows():
        counts[trace_id].append((pid, pid_str, n))
    found: dict[int, list[tuple[Any, str]]] = {}  # trace -> [(pid key, side)], in process order
    for trace_id, dev in devices.items():
        hosts = sorted(
            ((a, n) for a, b, n in counts[trace_id] if b is None and a is not None and a not in dev),
            key=lambda x: (-x[1], x[0]),
        )
        order = [(key, "CPU" if i == 0 else f"CPU (pid {key})") for i, (key, _) in enumerate(hosts)]
        order += [(key, f"GPU {d}") for key, d in sorted(dev.items(), key=lambda x: (x[1], str(x[0])))]
        named = {k for k, _ in order}
        others = {_pid_key(a, b) for a, b, _ in counts[trace_id]} - named
        order += [(k, "(no pid)" if k is None else str(k) or '""') for k in sorted(others, key=lambda k: (k is None, str(k)))]
        found[trace_id] = order
    block = _BLOCK
    while any(len(o) + 1 >= block for o in found.values()):
        block *= 10
    for i, p in enumerate(plans):
        base = (i + 1) * block
        for j, (key, side) in enumerate(found[int(p.trace_id)]):
            p.pids[key] = base + j
            p.names[key] = f"{p.label} · {side}"
            m = _GPU_LABEL.match(side)
            if m:
                p.gpu_pids.setdefault(int(m[1]), base + j)
        p.overlay_pid = base + block - 1


def _align(t: Tables, plans: list[RankPlan], align: str) -> Alignment:
    if align not in ALIGN:
        raise Unsupported("--align", f"{align!r}: expected one of {', '.join(ALIGN)}")
    if align in ("auto", "base-time") and all(p.base_time_ns is not None for p in plans):
        first = min(int(p.base_time_ns or 0) for p in plans)
        for p in plans:
            p.offset_ns = int(p.base_time_ns or 0) - first
        return Alignment("baseTimeNanoseconds", "each trace's times shifted by its baseTimeNanoseconds onto the earliest")
    if align == "base-time":
        missing = [p.label for p in plans if p.base_time_ns is None]
        some = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise Unsupported("--align", f"base-time: no baseTimeNanoseconds in the metadata of {some}")
    if align in ("auto", "collective"):
        found = _first_common_collective(t, plans)
        if found is not None:
            return found
        if align == "collective":
            raise Unsupported("--align", "collective: no collective call was found on every trace")
    return Alignment("none", "times as the traces wrote them")


def _first_common_collective(t: Tables, plans: list[RankPlan]) -> Alignment | None:
    if len(plans) < 2 or "collective_skew" not in t.tables:
        return None
    first = t.sql(f"""SELECT pg_key, collective, seq, paired_by FROM collective_skew
                      WHERE ranks = {len(plans)} ORDER BY first_start_ns, pg_key, collective, seq LIMIT 1""").rows()
    if not first:
        return None
    pg, coll, seq, how = first[0]
    ends = dict(
        t.sql(f"""SELECT trace_id, max(end_ns) FROM collectives
                  WHERE pg_key = {_quote(pg)} AND collective = {_quote(coll)} AND match_seq = {int(seq)}
                  GROUP BY trace_id""").rows()
    )
    if any(p.trace_id not in ends for p in plans):
        return None
    ref = int(ends[plans[0].trace_id])
    for p in plans:
        p.offset_ns = ref - int(ends[p.trace_id])
    what = {"process_group": pg, "collective": coll, "seq": int(seq), "paired_by": how}
    words = (
        f"the end of the first collective every trace ran ({coll} #{seq} of process group {pg}, paired by {how}) "
        f"put at the same time as on {plans[0].label}"
    )
    return Alignment("collective end", words, what)


def _columns(t: Tables) -> str:
    names = [n for n in t.arrow("SELECT * FROM events LIMIT 0").schema.names if n not in _NOT_EVENT]
    return ", ".join(f'"{n}"' for n in names)


class _Ids:
    """New flow / async ids and correlations: one per value of the trace in hand (`seen` is
    emptied between traces), from one counter, so that no two traces share one. Keyed by the
    value alone, a launch's correlation and its ac2g flow (Kineto gives both the same number)
    stay equal, and flows of two categories that shared a number still differ by category."""

    def __init__(self) -> None:
        self.next = 1
        self.seen: dict[Any, int] = {}

    def new(self, old: Any) -> int:
        got = self.seen.get(old)
        if got is None:
            got = self.seen[old] = self.next
            self.next += 1
        return got


def _rank_events(t: Tables, p: RankPlan, columns: str, ids: _Ids) -> Iterator[dict[str, Any]]:
    tid = int(p.trace_id)
    where = f"trace_id = {tid}" + ("" if p.rank is None else f" AND rank = {int(p.rank)}")  # a lake skips other ranks' files
    top = t.sql(f"SELECT max(uid) AS m FROM events WHERE {where}")["m"][0]
    ids.seen = {}
    if top is None:
        return
    for start in range(0, int(top) + 1, _PAGE):
        rows = t.arrow(
            f"SELECT {columns} FROM events WHERE {where} AND uid >= {start} AND uid < {start + _PAGE} ORDER BY uid"
        ).to_pylist()
        for row in rows:
            yield _event(row, p, ids)
            p.events += 1


def _event(row: dict[str, Any], p: RankPlan, ids: _Ids) -> dict[str, Any]:
    e = restore_event(row)
    key = _pid_key(row["pid"], row["pid_str"])
    if key not in p.pids:  # the tables changed while the merge read them
        raise QueryError(p.path, f"an event's pid {key!r} is not among the trace's processes")
    e["pid"] = p.pids[key]
    if row["ts_ns"] is not None:
        e["ts"] = us(row["ts_ns"] + p.offset_ns)
    if "id" in e:
        e["id"] = ids.new(e["id"])
    args = e.get("args")
    if not isinstance(args, dict):
        args = e["args"] = {}
    if row["correlation"] is not None:
        args["correlation"] = ids.new(row["correlation"])
    if e.get("ph") == "M":
        if e.get("name") == "process_name":
            args["name"] = p.names[key]
        elif e.get("name") == "process_sort_index":
            args["sort_index"] = e["pid"]
    if p.rank is not None:
        args.setdefault("rank", p.rank)
    return e


def _meta(pid: int, name: str) -> list[dict[str, Any]]:
    return [
        {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": name}},
        {"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0, "args": {"sort_index": pid}},
    ]


def _added_names(t: Tables, plans: list[RankPlan]) -> Iterator[dict[str, Any]]:
    """process_name and process_sort_index events for the pids whose trace has none (its own
    were rewritten on the way)."""
    have: set[tuple[int, Any, str]] = {
        (trace_id, _pid_key(pid, pid_str), name)
        for trace_id, pid, pid_str, name in t.sql("""SELECT DISTINCT trace_id, pid, pid_str, name FROM events
                 WHERE ph = 'M' AND name IN ('process_name', 'process_sort_index')""").rows()
    }
    for p in plans:
        for key, pid in p.pids.items():
            for e in _meta(pid, p.names[key]):
                if (p.trace_id, key, e["name"]) not in have:
                    yield e


def _overlay_events(
    t: Tables, plans: list[RankPlan], overlays: tuple[str, ...], counts: dict[str, int]
) -> Iterator[dict[str, Any]]:
    for name in overlays:
        counts[name] = 0
    for p in plans:
        tid = int(p.trace_id)
        named = False  # the overlay process's name, given once
        if "critical-path" in overlays and "critical_path" in t.tables:
            rows = t.sql(f"""SELECT coalesce(step, -1), kind, name, cat, bound_by, uid, ts_ns, end_ns FROM critical_path
                             WHERE trace_id = {tid} AND end_ns > ts_ns ORDER BY step, seq""").rows()
            if rows:
                yield from _meta(p.overlay_pid, f"{p.label} · critical path")
                named = True
            for step in sorted({r[0] for r in rows}):  # a thread per step
                name = "whole trace" if step == -1 else f"ProfilerStep#{step}"
                yield {"ph": "M", "name": "thread_name", "pid": p.overlay_pid, "tid": step, "args": {"name": name}}
            for step, kind, name, cat, bound, uid, ts, end in rows:
                yield {
                    "ph": "X",
                    "cat": "critical_path",
                    "name": name or kind,
                    "pid": p.overlay_pid,
                    "tid": step,
                    "ts": us(ts + p.offset_ns),
                    "dur": us(end - ts),
                    "args": {"kind": kind, "bound_by": bound, "uid": uid, "cat": cat},
                }
                counts["critical-path"] += 1
        if "queue-depth" in overlays and "queue_depth" in t.tables:
            rows = t.sql(f"""SELECT device, stream, ts_ns, arg_max(queue_depth, (delta, uid)) FROM queue_depth
                             WHERE trace_id = {tid} GROUP BY device, stream, ts_ns ORDER BY device, stream, ts_ns""").rows()
            for device, stream, ts, depth in rows:
                if device in p.gpu_pids:
                    yield {
                        "ph": "C",
                        "name": f"stream {stream} queue",
                        "pid": p.gpu_pids[device],
                        "ts": us(ts + p.offset_ns),
                        "args": {"length": depth},
                    }
                    counts["queue-depth"] += 1
        if "slow-steps" in overlays and "step_outliers" in t.tables:
            rows = t.sql(f"""SELECT step, name, ts_ns, dur_ns, excess_ns, z FROM step_outliers
                             WHERE trace_id = {tid} AND slow ORDER BY ts_ns, uid""").rows()
            if rows and not named:
                yield from _meta(p.overlay_pid, f"{p.label} · slow steps")
            if rows:
                yield {"ph": "M", "name": "thread_name", "pid": p.overlay_pid, "tid": SLOW_TID, "args": {"name": "slow steps"}}
            for step, name, ts, dur, excess, z in rows:
                yield {
                    "ph": "X",
                    "cat": "tracecols_slow_step",
                    "name": f"slow step {step}: +{excess / 1e6:.3f} ms over the median",
                    "pid": p.overlay_pid,
                    "tid": SLOW_TID,
                    "ts": us(ts + p.offset_ns),
                    "dur": us(dur),
                    "args": {"step": name, "excess_ns": excess, "z": z},
                }
                counts["slow-steps"] += 1
        if "memory-bw" in overlays and "memcpy_bandwidth" in t.tables:
            rows = t.sql(f"""SELECT device, direction, ts_ns, bytes_per_s FROM memcpy_bandwidth
                             WHERE trace_id = {tid} ORDER BY device, direction, ts_ns""").rows()
            for device, direction, ts, rate in rows:
                if device in p.gpu_pids:
                    yield {
                        "ph": "C",
                        "name": "memset" if direction == "memset" else f"memcpy {direction}",
                        "pid": p.gpu_pids[device],
                        "ts": us(ts + p.offset_ns),
                        "args": {"GB/s": rate / 1e9},
                    }
                    counts["memory-bw"] += 1


def _header(t: Tables, plans: list[RankPlan], alignment: Alignment, overlays: tuple[str, ...]) -> dict[str, Any]:
    first = t.sql(f"SELECT metadata FROM traces WHERE trace_id = {int(plans[0].trace_id)}").item()
    meta = json.loads(first) if first else {}
    head: dict[str, Any] = {"schemaVersion": meta.get("schemaVersion", 1)}
    if "deviceProperties" in meta:
        head["deviceProperties"] = meta["deviceProperties"]
    if alignment.rule == "baseTimeNanoseconds":
        head["baseTimeNanoseconds"] = min(int(p.base_time_ns or 0) for p in plans)
    infos = [p.distributed_info for p in plans if p.distributed_info]
    common = {k: v for k, v in (infos[0] if infos else {}).items() if k != "rank" and all(i.get(k) == v for i in infos)}
    if common:
        head["distributedInfo"] = common  # what the ranks share; each one's whole record is below
    head["displayTimeUnit"] = "ms"
    head["tracecols_merge"] = {
        "alignment": {"rule": alignment.rule, "words": alignment.words, "collective": alignment.collective},
        "overlays": list(overlays),
        "ranks": [
            {
                "label": p.label,
                "rank": p.rank,
                "trace_id": p.trace_id,
                "trace": p.path,
                "offset_ns": p.offset_ns,
                "baseTimeNanoseconds": p.base_time_ns,
                "distributedInfo": p.distributed_info,
                "processes": {str(pid): p.names[key] for key, pid in p.pids.items()},
            }
            for p in plans
        ],
    }
    return head


def check_overlays(overlays: tuple[str, ...]) -> None:
    """Unsupported for a name that is no overlay (before any trace is read)."""
    bad = [o for o in overlays if o not in OVERLAYS]
    if bad:
        raise Unsupported("--overlay", f"{bad[0]!r}: expected some of {', '.join(OVERLAYS)}")


def merge(
    t: Tables,
    out: str | os.PathLike[str],
    align: str = "auto",
    overlays: tuple[str, ...] = (),
    keep_secrets: bool = False,
) -> Merged:
    """Write every trace of `t` (a Trace of several files, or a Lake) to `out` as one
    Chrome-trace JSON file (gzip when the name ends in .gz), atomically; see the module's
    docstring for the processes, ids, clocks and overlays. Secrets are redacted unless
    `keep_secrets`: `t`'s rows are when it was opened so; where it was opened keeping them,
    the written text goes through the redactor (model/secrets.py)."""
    check_overlays(overlays)
    plans = _plans(t)
    _processes(t, plans)
    alignment = _align(t, plans, align)
    header = _header(t, plans, alignment, overlays)
    columns = _columns(t)
    counts: dict[str, int] = {}

    def events() -> Iterator[dict[str, Any]]:
        ids = _Ids()
        for p in plans:
            yield from _rank_events(t, p, columns, ids)
        yield from _added_names(t, plans)
        yield from _overlay_events(t, plans, overlays, counts)

    # rows read with redaction hold no secret: the text is redacted again only where they may
    # (a Lake redacts what it reads unless opened with keep_secrets; a Trace says secrets_redacted)
    clean = keep_secrets or not getattr(t, "keep_secrets", True) or bool(getattr(t, "secrets_redacted", False))
    n = write_trace_json(out, header, events(), keep_secrets=clean)
    return Merged(str(out), plans, alignment, n, counts)
