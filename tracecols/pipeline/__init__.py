"""The one ingest pipeline: trace files -> the base tables (and the sql/ views) of a store.

`ingest(paths)` (memory_or_disk.py) reads traces that fit in memory straight into Arrow
tables (in_memory.read_tables) and streams bigger ones into a (temporary) Parquet directory;
`ingest(paths, out=DIR)` always streams into DIR (to_directory.ingest_to_dir).
`tracecols.open`, `analyze`, the fleet workers and the benchmarks all come through here, and
both ways build every derived table with the same model.derive.derived_tables.

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

A trace of up to IN_MEMORY_EVENTS events (streamed_tables.py) is derived in memory instead: the
columns the tree, the links and the critical path read are kept as the events are written
(held_events.py), its slices stay in memory after they are written (on a thread, beside the
links), and nothing is read back.

parse.py parses (parse_parts.py: one file by several processes), streamed_tables.py builds the
derived tables from the events file, views_to_files.py writes the views. The directory is the
one `Trace.save` writes (same tables, same columns) and appears atomically. Between stages
freed memory is handed back (memory.py); docs/performance.md has the measurements.
"""

from .captures import read_captures
from .in_memory import read_tables
from .memory_or_disk import ingest, read_columns, summary_fits_in_memory
from .parse import write_events
from .streamed_tables import derive_from_file, write_slices
from .to_directory import ingest_to_dir
from .views_to_files import query_options

__all__ = [
    "derive_from_file",
    "ingest",
    "ingest_to_dir",
    "query_options",
    "read_captures",
    "read_columns",
    "read_tables",
    "summary_fits_in_memory",
    "write_events",
    "write_slices",
]
