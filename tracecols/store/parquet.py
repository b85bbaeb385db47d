"""Write a set of tables as one Parquet directory, atomically: readers see all of it or none."""
import json
import os
import shutil
import uuid
from pathlib import Path

import pyarrow.parquet as pq

from ..errors import SourceIOError

MANIFEST = "_tracecols.json"


def write_dir(out_dir, tables, manifest):
    """Write {name: Arrow table} as out_dir/<name>.parquet (zstd) plus the manifest JSON.

    Everything goes to a hidden sibling directory first and is renamed into place at the
    end, so an interrupted run never leaves a half-written output. An existing output is
    replaced only if it is a tracecols directory (has the manifest).
    """
    out = Path(out_dir)
    if out.exists() and not (out / MANIFEST).exists() and any(out.iterdir()):
        raise SourceIOError(out, "exists and is not a tracecols output directory; refusing to overwrite it")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.tmp-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        for name, table in tables.items():
            pq.write_table(table, tmp / f"{name}.parquet", compression="zstd")
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2, default=str) + "\n")
        if out.exists():
            old = out.parent / f".{out.name}.old-{uuid.uuid4().hex[:8]}"
            os.rename(out, old)
            os.rename(tmp, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def read_manifest(path):
    p = Path(path) / MANIFEST
    return json.loads(p.read_text()) if p.exists() else None


def table_files(path):
    """{table name: parquet path} of a tracecols output directory."""
    return {f.stem: str(f) for f in sorted(Path(path).glob("*.parquet"))}
