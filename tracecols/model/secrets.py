"""Redaction of secrets in trace metadata.

Trace writers copy parts of the environment into the trace's top-level metadata (an
`HF_TOKEN`, cloud keys, database passwords). Wherever metadata leaves the process — the
`traces.metadata` / `traces.distributed_info` / `devices.properties` columns, Parquet
outputs and lakes, `info`, `sql`, the DuckDB export — the value of every key that looks
like a secret is replaced by REDACTED, unless the caller asks to keep secrets.

A key looks like a secret when, case-insensitively, it contains one of SECRET_WORDS
(`HF_TOKEN`, `db_password`, `AWS_SECRET_ACCESS_KEY`, `GITHUB_AUTH`, `OPENAI_API_KEY`,
`ssh_private_key`, `credentials` …), or ends in `_key`/`-key` or is exactly `key`
(`AWS_ACCESS_KEY`, `encryption-key`). Harmless keys such as `record_shapes`,
`cupti_version`, `keyboard` or `monkey` are kept. The whole value under a secret key is
replaced, whatever its type (a dict of credentials goes as one). Keys are never removed,
so a reader still sees that the trace carried, say, an `HF_TOKEN`.
"""
import json
import re

import pyarrow as pa

REDACTED = "<redacted>"
SECRET_WORDS = ("token", "secret", "passw", "api_key", "apikey", "private_key", "credential",
                "auth", "cookie", "session_key", "access_key")
_SECRET_KEY = re.compile("|".join(re.escape(w) for w in SECRET_WORDS) + r"|(?:^|[_\-.])key$", re.IGNORECASE)

# the columns that carry trace metadata, per table
METADATA_COLUMNS = {"traces": ("metadata", "distributed_info"), "devices": ("properties",)}


def is_secret_key(key):
    return isinstance(key, str) and _SECRET_KEY.search(key) is not None


def redact(obj):
    """A copy of `obj` (JSON-like) with the value of every secret-looking key replaced by REDACTED."""
    if isinstance(obj, dict):
        return {k: (REDACTED if is_secret_key(k) and obj[k] is not None else redact(v)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [redact(v) for v in obj]
    return obj


def count_redacted(obj):
    """How many values redact() replaces in obj."""
    if isinstance(obj, dict):
        return sum(1 if is_secret_key(k) and v is not None else count_redacted(v) for k, v in obj.items())
    if isinstance(obj, list):
        return sum(count_redacted(v) for v in obj)
    return 0


def redact_json_text(text):
    """redact() of a JSON text column value; text that is not JSON is kept only if it holds no secret key."""
    if text is None:
        return None
    try:
        obj = json.loads(text)
    except ValueError:
        return text if not _SECRET_KEY.search(text) else REDACTED
    if not count_redacted(obj):
        return text  # unchanged, byte for byte
    return json.dumps(redact(obj), ensure_ascii=False, separators=(",", ":"))


def redact_table(name, table):
    """The Arrow table `name` with its metadata columns redacted (other tables are returned as they are)."""
    cols = METADATA_COLUMNS.get(name, ())
    for c in cols:
        i = table.schema.get_field_index(c)
        if i < 0:
            continue
        values = [redact_json_text(v) for v in table.column(i).to_pylist()]
        table = table.set_column(i, table.schema.field(i), pa.array(values, table.schema.field(i).type))
    return table
