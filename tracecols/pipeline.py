"""The one ingest pipeline: trace files -> the base tables (and the sql/ views) of a store.

`ingest(paths)` reads traces that fit in memory straight into Arrow tables (read_tables)
and streams bigger ones into a (temporary) Parquet directory; `ingest(paths, out=DIR)`
always streams into DIR. `tracecols.open`, `analyze`, the fleet workers and the benchmarks
all come through here, and both ways build every derived table with the same
model.derive.derived_tables.

Streaming, into a Parquet directory in memory that does not grow with the trace:

The in-memory path (`read_tables`) holds the whole `events` table. Here the events go to
Parquet while the file is parsed (encoded on a second thread), and what comes after reads
back only what it needs:

  parse ──► events.parquet                 (row groups of ~256k events, zstd)
  events.parquet ──► host events sorted by thread and time (DuckDB, spilling to disk)
                 ──► slices.parquet        (built a part of whole trees at a time)
  events.parquet[device events, flows] + slices.parquet[launches, tree columns]
                 ──► kernels, fx_marks, traces, devices (.parquet)
                 ──► critical_path_edges   (of a small trace: beside the views below
                                            that do not read it)
  every sql/ view ──► <view>.parquet       (DuckDB streams each result to its file;
                                            later views read the file, not the view;
                                            a small trace's private helpers are tables
                                            of the database, not files)

The directory is the one `Trace.save` writes (same tables, same columns) and appears
atomically. Between stages freed memory is handed back (memory.py); docs/performance.md
has the measurements.
"""

import json
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from . import memory
from .engine.connection import Engine
from .engine.public import public_names
from .engine.specs import device_specs_table
from .errors import Malformed, SourceIOError, TraceError
from .model.base_tables import BASE_TABLES
from .model.cp_graph import sync_events
from .model.derive import TREE_COLUMNS, derived_tables, describe
from .model.events import events_table
from .model.traces import detect_rank
from .model.tree import build_slices
from .progress import tracker
from .read import native, split
from .read.kineto import read_events, read_head, read_trace
from .read.source import Source, hash_file, is_url
from .store import parquet
from .store.atomic import scratch_dir

EVENTS_SCHEMA = events_table([], 0, None).schema
DUCKDB_MB = 640  # DuckDB spills to disk beyond this rather than grow the process
DUCKDB_MEMORY = f"{DUCKDB_MB}MB"
# A big trace's tree and links stages take about 230-340 B an event (measured at 1 and 4 GB of
# JSON), so its views may have half of that before they spill: they still never set the run's
# peak, and spill far less (4 GB: 175 -> 119 s for the views stage, 1.0 -> 1.9 GB). Never more
# than a quarter of the machine's memory, whatever the number of traces read together.
VIEW_BYTES_PER_EVENT = 112


def _views_memory(events):
    """DuckDB's memory limit for the views of `events` events, as DuckDB writes sizes."""
    try:
        machine = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # no sysconf (Windows): no more than the default
        machine = 0
    return f"{max(DUCKDB_MB, min(events * VIEW_BYTES_PER_EVENT, machine // 4) >> 20)}MB"


# Bigger traces (JSON bytes; a .gz counts 8x its size) are streamed. Read into memory, a trace
# takes 5-8x its size at the peak (the events table, the tree and the links, all at once);
# streamed, no more than about 0.85 GB however big it is, and less than in memory at any size.
# Up to this size the in-memory peak stays below the streamed one of a big trace, and the
# repeated queries of `open` run on Arrow tables (docs/performance.md, "Memory of info and sql").
IN_MEMORY_BYTES = 64 << 20


def ingest(paths, out=None, keep_secrets=False, timings=None, views=False, captures=(), first_trace_id=0, parts=None):
    """Read trace files into a store: ({table name: Arrow table or Parquet path}, inputs, scratch).

    With `out`, or when the files are bigger than IN_MEMORY_BYTES, the traces are streamed
    into a Parquet directory (`out`, else a temporary one that lives as long as `scratch`,
    a tempfile.TemporaryDirectory), with the views named by `views` (ingest_to_dir); else
    they are read into memory. `captures`: capture.Capture objects for the graph replays.
    `first_trace_id`, `parts`: as for write_events (a lake's worker numbers its trace and
    may read it in one part only); streamed stores only."""
    if out is None and _fits_in_memory(paths):
        tables, inputs = read_tables(paths, timings, keep_secrets, captures)
        return tables, inputs, None
    scratch = None
    if out is None:
        scratch = scratch_dir()
        out = Path(scratch.name) / "out"
    ingest_to_dir(paths, out, keep_secrets, timings, views, captures, first_trace_id, parts)
    return parquet.table_files(out), parquet.read_manifest(out)["inputs"], scratch


def read_columns(
    paths: list[str], columns: dict[str, tuple[str, ...]], keep_secrets: bool = False
) -> tuple[dict[str, pa.Table], list[dict]]:
    """Only `columns` ({table name: column names}) of the base tables of `paths`, as Arrow
    tables, plus the input descriptions: for a reader that needs a few columns of a few tables
    (the linker). Read as `ingest` reads: a big trace is streamed into a temporary store and
    only those columns read back; of a small one the rest is freed as soon as it is read."""
    tables, inputs, scratch = ingest(paths, keep_secrets=keep_secrets)
    try:
        out = {}
        for name, cols in columns.items():
            t = tables.pop(name)
            out[name] = _copied(t.select(list(cols))) if isinstance(t, pa.Table) else pq.read_table(t, columns=list(cols))
    finally:
        del tables
        if scratch is not None:
            scratch.cleanup()
    memory.release()
    return out, inputs


def _copied(table: pa.Table) -> pa.Table:
    """`table` in buffers of its own. The columns of a batch that came through Arrow's C data
    interface (the compiled reader's, polars') keep the whole batch alive, every other column too."""
    cols = [pa.chunked_array([pa.concat_arrays([c]) for c in col.chunks], col.type) for col in table.columns]
    return pa.table(cols, schema=table.schema)


def query_options(tables, scratch):
    """The Engine's bounds over what `ingest` returned: for a trace streamed into the temporary
    directory `scratch`, the DuckDB memory its views have in the pipeline, spilling inside that
    directory (gone with it); none for tables in memory (or no scratch)."""
    if scratch is None:
        return {}
    events = _events_in(tables["events"])
    return {"memory_limit": _views_memory(events), "temp_dir": Path(scratch.name) / "spill"}


def _input(info):
    """What a manifest records of one input file."""
    return {"path": info["path"], "size": info["size"], "sha256": info["sha256"]}


def _fits_in_memory(paths):
    total = 0
    for p in paths:
        if is_url(p) or not os.path.exists(str(p)):  # a URL is read as it comes; a missing file fails there
            continue
        src = Source(p)
        total += (src.size or 0) * (8 if src.gzip else 1)
    return total <= IN_MEMORY_BYTES


def read_tables(paths, timings=None, keep_secrets=False, captures=()):
    """Read trace files into the base tables in memory: {name: Arrow table}, plus the input
    descriptions (what `ingest` does for traces that fit; the linker and the capture merge
    want Arrow tables whatever the size). The events are read as write_events reads them
    (a file of some MB cut into one part per core), into memory instead of Parquet.

    Secrets in the metadata and the events are redacted (see model/secrets.py) unless `keep_secrets`.
    `captures`: capture.Capture objects the graph replays are matched to (read_captures).

    `timings`, when a dict, receives the seconds spent per stage (read, tree, links, …).
    """
    parts: dict[str, list[pa.Table]] = {name: [] for name in BASE_TABLES}
    inputs = []
    clock = _Clock(timings)
    for trace_id, path in enumerate(paths):
        events, [info] = _read_events([path], trace_id, keep_secrets, split.cpu_count())
        clock.lap("read")
        tracker().stage("building the op tree and the launch links")
        derived = derived_tables(events, [info], clock, captures=captures, events_schema=events.schema)
        grafted = derived.pop("events_grafted")
        parts["events"].append(pa.concat_tables([events, grafted]) if grafted.num_rows else events)
        for name, table in derived.items():
            parts[name].append(table)
        inputs.append(_input(info))
    tables = {name: pa.concat_tables(ts) if len(ts) > 1 else ts[0] for name, ts in parts.items()}
    return tables, inputs


CAPTURE_DETAILS = "execution_details.json"


def read_captures(directory, keep_secrets=False):
    """The capture traces of a directory as capture.Capture objects, in the order matching
    tries them: those listed in its execution_details.json (file, batch_size, mode), else
    every trace file in it by name. A single trace file is taken as the one capture trace.
    Their events are grafted into the trace's: redacted alike unless `keep_secrets`."""
    from .model.capture import Capture

    d = Path(str(directory))
    if d.is_file():
        tables, _ = read_tables([str(d)], keep_secrets=keep_secrets)
        return [Capture(0, str(d), tables)]
    if not d.is_dir():
        raise SourceIOError(d, "does not exist (--capture wants the folder of graph capture traces, or one of them)")
    listed = d / CAPTURE_DETAILS
    if listed.exists():
        try:
            entries = json.loads(listed.read_text())
            items = [(d / e["file"], e.get("batch_size"), e.get("mode")) for e in entries]
        except (ValueError, TypeError, KeyError) as e:
            raise Malformed(listed, f"expected a JSON list of {{file, batch_size, mode}} objects ({e})") from None
    else:
        items = [
            (p, None, None)
            for p in sorted(d.iterdir())
            if p.is_file() and (p.name.endswith(".json") or p.name.endswith(".json.gz"))
        ]
    if not items:
        raise SourceIOError(d, "holds no capture traces (*.json, *.json.gz)")
    out = []
    for i, (path, batch, mode) in enumerate(items):
        if not path.exists():
            raise SourceIOError(path, f"is listed in {CAPTURE_DETAILS} but does not exist")
        tables, _ = read_tables([str(path)], keep_secrets=keep_secrets)
        out.append(Capture(i, str(path), tables, batch if type(batch) is int else None, mode if isinstance(mode, str) else None))
    return out


class _Clock:
    def __init__(self, into):
        self.into = into
        self.t = time.perf_counter()

    def lap(self, stage):
        now = time.perf_counter()
        self.add(stage, now - self.t)
        self.t = now

    def add(self, stage, seconds):
        """Count `seconds` to `stage` (a stage that ran beside the others: its own wall time)."""
        if self.into is not None:
            self.into[stage] = self.into.get(stage, 0.0) + seconds


def ingest_to_dir(paths, out_dir, keep_secrets=False, timings=None, views=True, captures=(), first_trace_id=0, parts=None):
    """Read trace files into `out_dir`: every base table and the sql/ views as Parquet, plus
    _tracecols.json. `views`: True for every view, False for none, or the names of those to
    write (with the views they read). `captures`: capture.Capture objects for the graph
    replays (read_captures). Returns the output path."""
    clock = _Clock(timings)
    with parquet.staged_dir(out_dir) as tmp, ThreadPoolExecutor(1) as beside:
        infos = write_events(paths, tmp / "events.parquet", keep_secrets, clock, first_trace_id, parts)
        tracker().stage("building the op tree and the launch links")
        # a small trace's critical path is computed beside the views that do not read it: they
        # leave a core idle part of the time, it is mostly numpy and polars (df_index_resolver,
        # both in the pipeline: 972-1050 -> 933-985 ms); a big one's would add its memory to theirs
        defer = bool(views) and _events_in(tmp / "events.parquet") <= WHOLE_RESULTS_EVENTS
        tables = derive_from_file(tmp / "events.parquet", infos, tmp / "slices.parquet", clock, captures, defer)
        later = {}
        if defer:
            path = tables.pop("critical_path_edges")
            later["critical_path_edges"] = beside.submit(_write_path, path, tmp / "critical_path_edges.parquet", clock)
        tracker().stage("writing the tables")
        for name in list(tables):
            parquet.write_table(tmp / f"{name}.parquet", tables.pop(name))
        clock.lap("parquet")
        memory.release()
        names = (
            _write_views(
                tmp,
                clock,
                None if timings is None else timings.setdefault("view_seconds", {}),
                None if views is True else views,
                split.cpu_count() if parts is None else parts,
                later,
            )
            if views
            else []
        )
        inputs = [_input(i) for i in infos]
        parquet.write_manifest(tmp, parquet.manifest(list(BASE_TABLES) + names, inputs, secrets_redacted=not keep_secrets))
        clock.lap("parquet")
    return Path(out_dir)


def _write_path(compute, path, clock):
    t = time.perf_counter()
    parquet.write_table(path, compute())
    clock.add("critical path", time.perf_counter() - t)


def write_events(paths, path, keep_secrets=False, clock=None, first_trace_id=0, parts=None):
    """Parse `paths` into one `events` Parquet file at `path` (trace ids from `first_trace_id`).
    Returns one dict per trace: what read_trace returns, plus trace_id, rank, rank_source and
    parts (how many processes read the file).

    A local file of some MB is cut between events and read by `parts` processes (default: one
    per core; 1 reads every file whole), which share its pieces out as they go (read/split.py);
    if any piece fails, everything is read again the ordinary way, which also gives any real
    error its true position.
    """
    clock = clock or _Clock(None)
    parts = split.cpu_count() if parts is None else parts
    _, infos = _read_events(paths, first_trace_id, keep_secrets, parts, path)
    memory.release()  # the parsed events' heap, before the tree needs it
    clock.lap("read")
    return infos


class _PartFailed(Exception):
    pass


def _read_events(paths, first_trace_id, keep_secrets, parts, path=None):
    """(the events of `paths`: an Arrow table, or None once written to Parquet at `path`; one
    info per trace), each file cut in `parts` parts where that is worth it; if a part fails,
    everything is read again whole. The events carry the rank the trace's head gives; where
    keys after the events change it (distributedInfo written last: rare), it is put right here."""

    def transform(batches, context: tuple[int, int | None]):
        return events_table(batches, *context, keep_secrets)

    skips: dict[str | None, int] = {}  # a file's traceEvents arrays to pass over: all but its last (native.AnotherArray)

    def read(n):
        while True:
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
    except _PartFailed:
        out, infos = read(1)
    if any(i["rank"] != i["head_rank"] for i in infos):
        if path is None:
            out = _with_ranks(out, infos)
        else:
            parquet.write_table(path, _with_ranks(pq.read_table(path), infos))
    return out, infos


def _read_into(paths, first_trace_id, keep_secrets, parts, writer, skips=None):
    infos = []
    try:
        with scratch_dir("tracecols-parts-") as scratch:
            for trace_id, p in enumerate(paths, start=first_trace_id):
                # the compiled reader reads a file on threads of its own, one core left to the
                # writer's thread (redaction and Parquet encoding, the slower of the two:
                # docs/performance.md); the Python reader in `parts` processes (split.py)
                threaded = native.usable(Source(p)) if parts > 1 and not is_url(p) and os.path.isfile(str(p)) else False
                skip = (skips or {}).get(str(p), 0)
                info = (parts > 1 and not threaded and _read_parts(p, trace_id, writer, scratch, parts)) or _read_whole(
                    p, trace_id, writer, max(1, parts - 1) if threaded else 1, skip
                )
                infos.append(describe(info, trace_id, p, keep_secrets))
    except BaseException:
        writer.abort()
        raise
    return writer.close(), infos


def _read_whole(p, trace_id, writer, threads=1, skip=0):
    _reading(p)

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


def _read_parts(p, trace_id, writer, scratch, parts):
    """Read one file with `parts` processes (split.py: this one and parts - 1 workers, sharing
    its pieces out as they go); None if it is not worth cutting."""
    src = Source(p)
    if not split.worth_cutting(src):
        return None
    form, head = read_head(src)  # before inflating: a file that is no trace fails here, at once
    if form not in ("object", "array"):  # not a Chrome-trace event array (rocprofv3): read whole
        return None
    data = digest = inflated = None
    if src.gzip:
        inflated = split.inflate(src)
        if inflated is None:
            return None
        data, digest = inflated
    # as many pieces as balance the processes, else one each (a file of a few huge events)
    planned = (split.FORK and split.plan(src, form, parts * split.PIECES_PER_PROCESS, data)) or split.plan(src, form, parts, data)
    if planned is None:
        return None
    pieces, tail = planned
    _reading(p, len(data) if data is not None else src.size, parts)
    rank = detect_rank(p, head)[0]
    writer.context = (trace_id, rank)
    claims = split.Claims(len(pieces))
    i = claims.front()  # the first piece, with the file's head, is this process's
    writer.wait_idle()  # a worker may be a fork: of a process whose other thread holds no lock
    procs = split.start_workers(pieces, claims, scratch, parts - 1)
    with ThreadPoolExecutor(1) as hashing:
        hashed = hashing.submit(hash_file, src.path) if digest is None else None
        try:
            t0 = time.perf_counter()
            n = 0
            while i is not None:  # this process's pieces come first, in order: written as they are read
                count, _ = read_events(pieces[i], form if i == 0 else "array", _shifted(writer.put, n))
                n += count
                i = claims.front()
            writer.flush()  # encoded while the workers finish, not after them
            # the workers end about when this process does: one that takes far longer is stuck
            timeout = 60 + 20 * (time.perf_counter() - t0)
            done = sorted(x for proc in procs for x in split.finish_worker(proc, scratch, timeout))
            # every piece is parsed: the inflated file goes before their events are read back
            del data, inflated, planned, pieces
            for _, count, f in done:
                for b in split.shifted_batches(f, n):
                    writer.put(b)
                n += count
        except (TraceError, split.PartError) as e:
            raise _PartFailed() from e
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
    writer.flush()
    size, sha = digest if hashed is None else hashed.result()  # type: ignore[misc]  # hashed is None only where digest is set
    meta = dict(head)
    meta.update(tail)
    return {
        "path": src.path,
        "form": form,
        "metadata": meta,
        "n_events": n,
        "sha256": sha,
        "size": size,
        "gzip": src.gzip,
        "head_rank": rank,
        "parts": parts,
    }


def _shifted(put, offset):
    """`put` of batches whose uids are `offset` on (those of a piece count from 0)."""
    if offset == 0:
        return put
    return lambda b: put(split.shift_uids(b, offset))


def _reading(path, size=None, parts=1):
    """Tell the progress line a file is being read (by `parts` processes, this one among them:
    its bytes, `parts` times over, stand for all of them; about, as they share the pieces out)."""
    if size is None and not is_url(path):
        size = os.path.getsize(path) if os.path.isfile(path) else None
    tracker().stage(f"reading {os.path.basename(str(path))}", total_bytes=size, scale=parts)


def _with_ranks(t, infos):
    ranks = {i["trace_id"]: i["rank"] for i in infos}
    col = pa.array([ranks[x] for x in t.column("trace_id").to_pylist()], pa.int32())
    return t.set_column(t.schema.get_field_index("rank"), "rank", col)


def derive_from_file(events_path, infos, slices_path, clock=None, captures=(), defer_path=False):
    """model.derive.derived_tables over the events file written by write_events, with the
    slices written to `slices_path`; returns the other derived tables. Nodes grafted under
    graph launches (model/capture.py) are added to both files.

    A file of more than IN_MEMORY_EVENTS events is scanned lazily (each step reads only the
    rows and columns it needs) and its slices are built part by part (write_slices); a
    smaller one is read once, which is faster than a dozen scans and a sort on disk."""
    clock = clock or _Clock(None)
    if not _small(_events_in(events_path)):
        write_slices(events_path, slices_path)
        ev = pl.scan_parquet(events_path)
    else:
        ev = pl.read_parquet(events_path, columns=TREE_COLUMNS).lazy()
        parquet.write_table(slices_path, build_slices(ev))
    memory.release()
    clock.lap("tree")
    # the small file's frame holds TREE_COLUMNS only: the sync events' args are read here
    tables = derived_tables(
        ev,
        infos,
        clock,
        slices=pl.scan_parquet(slices_path),
        captures=captures,
        events_schema=EVENTS_SCHEMA,
        syncs=sync_events(pl.scan_parquet(events_path)),
        defer_path=defer_path,
    )
    grafted = tables.pop("events_grafted")
    if "slices" in tables:
        parquet.write_table(slices_path, tables.pop("slices"))
    if grafted.num_rows:
        parquet.append_rows(events_path, grafted)
    return tables


IN_MEMORY_EVENTS = 1 << 20  # about 0.5 GB at the peak of the tree and links stages


def _events_in(events_path):
    """How many events the events file holds (from its footer)."""
    return pq.ParquetFile(events_path).metadata.num_rows


def _small(events):
    """Whether `events` events are few enough to be derived in memory (and to have their views
    written two at a time)."""
    return events <= IN_MEMORY_EVENTS


SLICE_ROWS = 1 << 20  # slices built at once (about 0.5 GB at the peak of a part)

# The host complete events (what host_slices_frame keeps, with dur clipped as the tree takes
# it) in thread order, sorted by DuckDB, which spills to disk rather than hold them all.
_HOST_SLICES_SQL = """
SELECT trace_id, rank, uid, ph, cat, name, pid, tid, pid_str, tid_str, ts_ns,
       greatest(coalesce(dur_ns, 0), 0) AS dur_ns, correlation, external_id
FROM read_parquet({events}) AS e
WHERE ph = 'X' AND ts_ns IS NOT NULL AND (cat IS NULL OR cat NOT IN ({device_cats}))
  AND NOT EXISTS (SELECT 1 FROM device_pids AS d WHERE d.trace_id = e.trace_id
                  AND d.pid IS NOT DISTINCT FROM e.pid AND d.pid_str IS NOT DISTINCT FROM e.pid_str)
ORDER BY trace_id NULLS LAST, pid NULLS LAST, pid_str NULLS LAST, tid NULLS LAST, tid_str NULLS LAST,
         ts_ns, dur_ns DESC, uid
"""


def write_slices(events_path, out_path, chunk_rows=SLICE_ROWS):
    """The slices table of an events file, built part by part (tree.slices_in_chunks) into
    `out_path`: memory holds one part, whatever the length of the trace."""
    from .engine.connection import connect
    from .model.categories import DEVICE_CATS
    from .model.tree import SLICES_SCHEMA, device_pids, slices_in_chunks

    def quoted(x):
        return "'" + str(x).replace("'", "''") + "'"

    scratch = tempfile.mkdtemp(prefix=".tracecols-sort-", dir=os.path.dirname(os.path.abspath(out_path)))
    try:
        host = os.path.join(scratch, "host.parquet")
        con = connect(config={"memory_limit": DUCKDB_MEMORY, "temp_directory": scratch})
        con.register("device_pids", device_pids(pl.scan_parquet(events_path)).to_arrow())
        sql = _HOST_SLICES_SQL.format(events=quoted(events_path), device_cats=", ".join(quoted(c) for c in DEVICE_CATS))
        con.execute(f"COPY ({sql}) TO {quoted(host)} (FORMAT parquet)")
        con.close()
        frames = (pl.from_arrow(b) for b in pq.ParquetFile(host).iter_batches(batch_size=1 << 17))
        with parquet.writer(out_path, SLICES_SCHEMA) as w:
            for part in slices_in_chunks(frames, chunk_rows):
                w.write_table(part)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


# Up to this many events (every real trace of the corpus), the views are small queries, most of
# their time DuckDB's own per-query work: each result is computed whole before it is written
# (one binding of its query instead of two) and they run one per core, each on one DuckDB
# thread. On two cores, against two at a time with both threads each and streamed results,
# the views stage of real traces of 87k-216k events is 15-25 % faster; at 500k events
# (synthetic) it is even, at 1M 5 % slower with 50-70 MB more at the peak (the copy of bigger
# results costs more than the binding saves).
WHOLE_RESULTS_EVENTS = 1 << 18


def _write_views(tmp, clock, view_seconds=None, only=None, cores=1, later=None):
    # a file, not an Arrow table: the view threads' cursors do not see registered tables
    parquet.write_table(tmp / "device_specs.parquet", device_specs_table())
    events = _events_in(tmp / "events.parquet")
    whole = events <= WHOLE_RESULTS_EVENTS
    later = later or {}  # {base table: Future of its file}
    engine = Engine(
        {**parquet.table_files(tmp), **{n: str(tmp / f"{n}.parquet") for n in later}},
        later=set(later),
        origin=str(tmp),
        memory_limit=_views_memory(events),
        temp_dir=tmp / ".spill",
        query_threads=1 if whole else None,
    )
    # from there up to 1M events, two views at a time still pay (docs/performance.md); on bigger
    # traces they gain no time, DuckDB keeps every core busy, and a second result adds to the peak
    tracker().stage("analyses", total_items=len(engine.views))
    workers = max(1, cores) if whole else 2 if _small(events) else 1
    written = engine.materialise_all_to(
        Path(tmp), parquet.writer, threads=workers, view_seconds=view_seconds, only=only, whole=whole, later=later
    )
    engine.con.close()
    shutil.rmtree(tmp / ".spill", ignore_errors=True)
    # private helpers over a big trace were files only for the views that read them, all written now
    for name in set(written) - set(public_names(written)):
        (tmp / f"{name}.parquet").unlink()
    clock.lap("views")
    return ["device_specs", *public_names(written)]
