"""`tracecols.Lake(path)`: SQL over every rank of a lake, read in place by DuckDB.

Each base table is a view over `read_parquet([...the files the manifest lists...],
hive_partitioning = true)`: nothing is loaded until a query runs, DuckDB reads only the
columns and row groups the query needs, and a filter on `rank` skips whole files (the
`rank=R` directory). The sql/ analyses are views on top, as for a single trace.
"""

from __future__ import annotations

import os
from typing import Any

from .engine.catalog import Engine, Scan
from .engine.connect import sql_string
from .errors import SourceIOError
from .face import Face
from .store import lake as store


def _scan(paths: list[str]) -> Scan:
    return Scan(
        f"read_parquet({sql_string(paths)}, hive_partitioning = true, hive_types = {{'rank': INTEGER}}, union_by_name = true)"
    )


class Lake(Face):
    """A lake written by `tracecols ingest … -o LAKE`. `sql()` answers with polars, `table()` with Arrow."""

    def __init__(self, path: str | os.PathLike, keep_secrets: bool = False, run: str | None = None) -> None:
        """`run`: only the traces ingested with `--run RUN` (docs/fleet.md, Runs)."""
        self.keep_secrets = keep_secrets
        self.lfs = store.LakeFS(path)
        self.origin = self.lfs.root
        m = store.read_manifest(self.lfs)
        if m is None:
            raise SourceIOError(path, "has no _tracecols.json (not a tracecols lake)")
        if not m.get("traces"):
            raise SourceIOError(path, "is an empty lake: no trace has been committed to it yet")
        if run is not None:
            runs = sorted({t["run"] for t in m["traces"] if t.get("run") is not None})
            m = {**m, "traces": [t for t in m["traces"] if t.get("run") == run]}
            if not m["traces"]:
                raise SourceIOError(path, f"has no run {run!r}; its runs: {', '.join(runs) or 'none (ingested without --run)'}")
        self.manifest: dict[str, Any] = m
        self.inputs: list[dict[str, Any]] = m.get("inputs", [])
        # every trace ingested with redaction: nothing to redact on the way out
        self.secrets_redacted = all(t.get("secrets_redacted") is True for t in m["traces"])
        self._engine = Engine(
            self._scans(),
            self.origin,
            fs=self.lfs.fs if self.lfs.remote else None,
            redact=not keep_secrets,
            clean=self.secrets_redacted,
        )

    def _scans(self) -> dict[str, Scan]:
        out = {}
        for name in self.manifest["tables"]:
            paths = [self.lfs.path(t["files"][name]) for t in self.manifest["traces"] if name in t["files"]]
            if paths:
                out[name] = _scan(paths)
        return out

    @property
    def traces(self) -> list[dict[str, Any]]:
        """The manifest's record of each trace: trace_id, path, size, sha256, rank, files."""
        return list(self.manifest["traces"])

    @property
    def ranks(self) -> list[int]:
        """The ranks of the lake's traces, ascending (traces of no known rank left out)."""
        return sorted({t["rank"] for t in self.manifest["traces"] if t["rank"] is not None})

    def export_duckdb(self, out_path: str | os.PathLike[str], keep_secrets: bool | None = None) -> tuple[str, list[str]]:
        """Write a DuckDB database file of views over this lake (absolute file paths), atomically.

        Secrets are redacted unless `keep_secrets` (default: as this Lake was opened): the
        metadata tables (traces, devices) are stored in the file, redacted, and when a trace
        was ingested with secrets kept, so are the other tables' rows that hold one, which the
        views then read instead (Engine._redacted); so is the device peak table. Returns the
        file's path and the public tables and views it lists (engine/public.py)."""

        from .store.atomic import temp_sibling, writing

        if self.lfs.remote:
            raise SourceIOError(self.origin, "--duckdb export needs a local lake (the views name its files)")
        shown, out_path = str(out_path), os.path.abspath(str(out_path))
        tmp = str(temp_sibling(out_path))
        keep = self.keep_secrets if keep_secrets is None else keep_secrets
        try:
            with writing(shown):
                engine = Engine(self._scans(), self.origin, redact=not keep, clean=self.secrets_redacted, database=tmp)
                engine.con.close()
                os.replace(tmp, out_path)
        except BaseException:
            for p in (tmp, tmp + ".wal"):
                if os.path.exists(p):
                    os.unlink(p)
            raise
        return out_path, engine.public

    def __repr__(self) -> str:
        return f"<tracecols.Lake {self.origin}: {len(self.manifest['traces'])} traces, ranks {self.ranks}>"
