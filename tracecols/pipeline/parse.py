"""Trace files parsed into the `events` table: in memory, or into a Parquet file while they are
parsed (store.parquet.BackgroundWriter encodes on a second thread). A local file of some MB is
cut between events and read by several processes (parse_parts.py) or, by the compiled reader,
on threads of its own."""

import contextlib
import functools
import os
import sys

import pyarrow as pa

from .. import memory
from ..model.derive import describe
from ..model.events import events_table
from ..model.traces import detect_rank
from ..read import native, split
from ..read.kineto import read_trace
from ..read.source import Source, is_url
from ..store import parquet
from ..store.atomic import scratch_dir
from .clock import Clock
from .parse_parts import PartFailed, read_parts, reading

EVENTS_SCHEMA = events_table([], 0, None).schema


def manifest_input(info: dict) -> dict:
    """What a manifest records of one input file."""
    return {"path": info["path"], "size": info["size"], "sha256": info["sha256"]}


def write_events(paths, path, keep_secrets=False, clock=None, first_trace_id=0, parts=None, held=None):
    """Parse `paths` into one `events` Parquet file at `path` (trace ids from `first_trace_id`).
    Returns one dict per trace: what read_trace returns, plus trace_id, rank, rank_source and
    parts (how many processes read the file). `held`: a held_events.HeldEvents, given every
    group of the table as it is written.

    A local file of some MB is cut between events and read by `parts` processes (default: one
    per core; 1 reads every file whole), which share its pieces out as they go (read/split.py);
    if any piece fails, everything is read again the ordinary way, which also gives any real
    error its true position.
    """
    clock = clock or Clock(None)
    parts = split.cpu_count() if parts is None else parts
    _, infos = read_events_into(paths, first_trace_id, keep_secrets, parts, path, held)
    memory.release()  # the parsed events' heap, before the tree needs it
    clock.lap("read")
    return infos


def read_events_into(paths, first_trace_id, keep_secrets, parts, path=None, held=None):
    """(the events of `paths`: an Arrow table, or None once written to Parquet at `path`; one
    info per trace), each file cut in `parts` parts where that is worth it; if a part fails,
    everything is read again whole. The events carry the rank the trace's head gives; where
    keys after the events change it (distributedInfo written last: rare), it is put right here.
    `held`: as for write_events."""

    def transform(batches, context: tuple[int, int | None]):
        table = events_table(batches, *context, keep_secrets)
        if held is not None:
            held.add(table)
        return table

    skips: dict[str | None, int] = {}  # a file's traceEvents arrays to pass over: all but its last (native.AnotherArray)

    def read(n):
        while True:
            if held is not None:
                held.clear()
            writer = parquet.BackgroundWriter(path, EVENTS_SCHEMA, transform)
            try:
                return _read_into(paths, first_trace_id, keep_secrets, n, writer, skips)
            except native.AnotherArray as again:
                skips[again.path] = again.skip
                print(
                    f"tracecols: {again.path}: more than one 'traceEvents' array; reading the last, "
                    "as JSON parsers keep the last of duplicate keys",
                    file=sys.stderr,
                )

    try:
        out, infos = read(parts)
    except PartFailed:
        out, infos = read(1)
    if any(i["rank"] != i["head_rank"] for i in infos):
        if path is None:
            out = _with_ranks(out, infos)
        else:
            import pyarrow.parquet as pq

            parquet.write_table(path, _with_ranks(pq.read_table(path), infos))
            if held is not None:
                held.drop()  # its ranks are the head's
    return out, infos


def _read_into(paths, first_trace_id, keep_secrets, parts, writer, skips=None):
    infos = []
    try:
        with contextlib.ExitStack() as stack:

            @functools.cache
            def scratch() -> str:  # the workers' directory, made when a file is first cut in parts
                return stack.enter_context(scratch_dir("tracecols-parts-"))

            for trace_id, p in enumerate(paths, start=first_trace_id):
                # the compiled reader reads a file on threads of its own, one core left to the
                # writer's thread (redaction and Parquet encoding, the slower of the two:
                # docs/performance.md); the Python reader in `parts` processes (split.py)
                threaded = native.usable(Source(p)) if parts > 1 and not is_url(p) and os.path.isfile(str(p)) else False
                skip = (skips or {}).get(str(p), 0)
                info = (parts > 1 and not threaded and read_parts(p, trace_id, writer, scratch, parts)) or _read_whole(
                    p, trace_id, writer, max(1, parts - 1) if threaded else 1, skip
                )
                infos.append(describe(info, trace_id, p, keep_secrets))
    except BaseException:
        writer.abort()
        raise
    return writer.close(), infos


def _read_whole(p, trace_id, writer, threads=1, skip=0):
    reading(p)

    def on_head(head):
        # the rank as far as the head tells; keys after the events may still change it
        writer.context = (trace_id, detect_rank(p, head)[0])

    try:
        info = read_trace(p, writer.put, on_head=on_head, threads=threads, skip=skip)
    except native.AnotherArray as again:
        again.path = str(p)
        raise
    writer.flush()  # the next trace's events get their own context
    info["head_rank"] = writer.context[1]
    info["parts"] = info.get("threads", 1)  # the compiled reader's threads; 1 for the Python reader
    return info


def _with_ranks(t, infos):
    ranks = {i["trace_id"]: i["rank"] for i in infos}
    col = pa.array([ranks[x] for x in t.column("trace_id").to_pylist()], pa.int32())
    return t.set_column(t.schema.get_field_index("rank"), "rank", col)
