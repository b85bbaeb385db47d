"""`tracecols.open(...)` -> Trace: the tables of one or more trace files, queryable with SQL."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .engine.catalog import Engine
from .engine.public import is_public
from .errors import SourceIOError, Unsupported
from .face import Face
from .read.source import note_input
from .store import parquet

if TYPE_CHECKING:
    import pyarrow as pa

    from .lake import Lake
    from .navigate import TreeView


def reader() -> str:
    """Which reader reads trace files here: "native (compiled, N threads)", or "python (why)"."""
    from .read import native, split

    name = native.name()
    if name != "native":
        return name
    n = max(1, split.cpu_count() - 1)  # as the pipeline reads: a core left to its writer
    return f"native (compiled, {n} thread{'s' if n != 1 else ''})"


class Trace(Face):
    """The tables of one or more traces. `sql()` answers with polars, `table()` with Arrow."""

    _tree: TreeView | None = None

    def __init__(
        self,
        tables: dict[str, Any],
        inputs: list[dict[str, Any]],
        origin: str,
        redact: bool = False,
        secrets_redacted: bool = True,
        **engine_options: Any,
    ) -> None:
        """Usually made by `tracecols.open`. `tables`: {name: Arrow table or Parquet path(s)};
        `inputs`: the manifest's record of each input file."""
        self.inputs = inputs
        self.origin = origin
        # whether the tables hold no secret (model/secrets.py): read with redaction, or redacted here
        self.secrets_redacted = secrets_redacted or redact
        # engine_options: Engine's memory_limit and temp_dir (a streamed trace's, pipeline.query_options)
        self._engine = Engine(tables, origin=origin, redact=redact, clean=secrets_redacted, **engine_options)
        self._scratch: Any = None  # the temporary directory of a streamed trace, kept while the Trace lives

    @property
    def tree(self) -> TreeView:
        """Navigation of the host tree: subtree(uid), ancestors(uid), print_subtree(uid), print_parents(uid)."""
        from .navigate import TreeView

        if self._tree is None:
            self._tree = TreeView(self)
        return self._tree

    def save(self, out_dir: str | os.PathLike[str]) -> Path:
        """Write every public table and view (`tables`) as Parquet (zstd) plus _tracecols.json,
        atomically; returns the directory."""
        tables: dict[str, pa.Table] = {name: self.table(name) for name in self.tables}
        return parquet.write_dir(out_dir, tables, parquet.manifest(tables, self.inputs, secrets_redacted=self.secrets_redacted))

    def __repr__(self) -> str:
        return f"<tracecols.Trace {self.origin}: {', '.join(self.tables)}>"


def open(*paths: str | os.PathLike[str], keep_secrets: bool = False, capture: str | os.PathLike[str] | None = None) -> Trace:
    """Open trace files (local or fsspec URLs, .json or .json.gz), or a directory written by
    save() or `analyze -o`. A lake (written by `tracecols ingest`) is opened by `tracecols.Lake`.

    Secrets (tokens, passwords, keys, … in the metadata and in every string of the events; see
    model/secrets.py) are redacted in the tables, whatever was stored, unless `keep_secrets=True`.
    `capture`: a directory of graph
    capture traces (docs/graphs.md); graph-replayed kernels are then given to the ops that
    captured them.
    """
    if len(paths) == 1 and _is_lake(paths[0]):
        raise SourceIOError(paths[0], _LAKE)
    opened = open_any(*paths, keep_secrets=keep_secrets, capture=capture)
    if not isinstance(opened, Trace):  # a lake written there meanwhile
        opened.close()
        raise SourceIOError(opened.origin, _LAKE)
    return opened


_LAKE = "is a lake (written by tracecols ingest): open it with tracecols.Lake(path)"


def _is_lake(path: str | os.PathLike[str]) -> bool:
    manifest = parquet.read_manifest(path) if os.path.isdir(str(path)) else None
    return manifest is not None and manifest.get("layout") == "lake"


def open_any(
    *paths: str | os.PathLike[str],
    keep_secrets: bool = False,
    capture: str | os.PathLike[str] | None = None,
    run: str | None = None,
    fresh: bool = False,
) -> Trace | Lake:
    """What the commands open: `open`'s traces, or the Lake a lake directory holds (`run`: only
    its traces of that run; a source that is not a lake has no runs). `fresh`: the directory
    was written by this process (`analyze -o`), so its views are not checked for an older
    tracecols's columns (_outdated_views)."""
    if not paths:
        raise TypeError("tracecols.open() needs at least one path")
    if len(paths) == 1 and os.path.isdir(str(paths[0])):
        d = Path(paths[0])
        for f in [d, *d.iterdir()]:
            note_input(f)
        if capture is not None:
            raise SourceIOError(d, "is an ingested directory; pass capture= when opening the trace file itself")
        manifest = parquet.read_manifest(d)
        if manifest and manifest.get("layout") == "lake":  # written by `tracecols ingest`: many traces
            from .lake import Lake

            return Lake(d, keep_secrets=keep_secrets, run=run)
        if run is not None:
            raise Unsupported(d, f"is not a lake: it has no runs to choose {run!r} from")
        if manifest is None:
            raise SourceIOError(d, "is a directory without _tracecols.json (not a tracecols output)")
        # redacted on the way out: wholly if written with keep_secrets (or before events were
        # redacted), else only its small metadata tables
        stored = manifest.get("secrets_redacted") is True
        # an output written before the export policy may hold private helpers: computed again instead
        files = {n: f for n, f in parquet.table_files(d).items() if is_public(n)}
        outdated = set() if fresh else _outdated_views(files)
        files = {n: f for n, f in files.items() if n not in outdated}
        return Trace(files, manifest.get("inputs", []), origin=str(d), redact=not keep_secrets, secrets_redacted=stored)
    if run is not None:
        raise Unsupported(", ".join(str(p) for p in paths), f"is not a lake: it has no runs to choose {run!r} from")
    from .pipeline import ingest, query_options, read_captures  # here: opening a saved directory needs none of it

    captures = read_captures(capture, keep_secrets) if capture is not None else ()
    # a trace over IN_MEMORY_BYTES (pipeline/memory_or_disk.py) is streamed into a temporary
    # directory, which lives as long as the Trace (removed at exit, or on error, by its finaliser)
    # the critical path's edges, read in memory, are computed when a query first needs them
    tables, inputs, scratch = ingest([str(p) for p in paths], keep_secrets=keep_secrets, captures=captures, defer_path=True)
    t = Trace(
        tables,
        inputs,
        origin=", ".join(str(p) for p in paths),
        secrets_redacted=not keep_secrets,
        **query_options(tables, scratch),
    )
    t._scratch = scratch
    return t


def small_for_summary(*paths: str | os.PathLike[str]) -> bool:
    """Whether these trace files are small enough for `analyze` to read into memory for its
    summary (pipeline.SUMMARY_IN_MEMORY_BYTES), which `open` then does, rather than stream them."""
    from .pipeline import summary_fits_in_memory

    return summary_fits_in_memory([str(p) for p in paths])


def _outdated_views(files: dict[str, str]) -> set[str]:
    """The saved view files of an output written by an older tracecols: those whose columns are
    not the ones the view's sql/ header lists today (a column added since). They are left out,
    and each such view is computed again from the tables it reads."""
    import pyarrow.parquet as pq

    from .engine import sqlfiles

    texts = {name: text for name, (text, _) in sqlfiles.load_all().items()}
    out = set()
    for name, path in files.items():
        if name in texts:
            want = [c[0] for c in sqlfiles.columns(name, texts=texts)]
            if want and pq.read_schema(path).names != want:
                out.add(name)
    return out


def write(
    *paths: str | os.PathLike,
    out: str | os.PathLike,
    views: bool | list[str] = True,
    keep_secrets: bool = False,
    capture: str | os.PathLike | None = None,
) -> None:
    """Stream trace files into directory `out` (Parquet, memory bounded whatever their size), with
    every view, or only those named by `views` and the views they read; `open(out)` reads it."""
    from .pipeline import ingest, read_captures

    captures = read_captures(capture, keep_secrets) if capture is not None else ()
    ingest([str(p) for p in paths], out=out, views=views, captures=captures, keep_secrets=keep_secrets)
