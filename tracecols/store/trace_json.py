"""Write a Chrome-trace JSON file from events given one at a time (the merged timeline).

The file is `{<header keys>, "traceEvents": [<events>]}`, written as the events come (never
held whole), through the one atomic output (gzip when the name ends in .gz) and, unless the
caller keeps them, through the same secret redaction as the augmented trace (augment.py).
Strings are escaped by the JSON encoder (read/jsontext.py), exact decimals kept.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from ..read import jsontext
from .atomic import atomic_output
from .redacting import RedactingFile

_FLUSH = 1 << 20  # characters gathered before a write


def write_trace_json(
    out_path: str | os.PathLike[str], header: dict[str, Any], events: Iterable[dict[str, Any]], keep_secrets: bool = False
) -> int:
    """Write `header`'s keys, then `events` as the event array, to `out_path`; returns the
    number of events. Nothing is left at `out_path` when the events' iterator raises."""
    n = 0
    with atomic_output(out_path) as f:
        sink: Any = f if keep_secrets else RedactingFile(f)
        head = "".join(jsontext.dumps(str(k)) + ":" + jsontext.dumps(v) + "," for k, v in header.items())
        sink.write(("{" + head + '"traceEvents":[').encode())
        parts: list[str] = []
        size = 0
        for e in events:
            text = jsontext.dumps(e)
            parts.append(text if n == 0 else "," + text)
            size += len(text) + 1
            n += 1
            if size >= _FLUSH:  # each piece ends between two events: the redactor sees whole tokens
                sink.write("".join(parts).encode("utf-8"))
                parts, size = [], 0
        parts.append("]}\n")
        sink.write("".join(parts).encode("utf-8"))
        if isinstance(sink, RedactingFile):
            sink.flush()
    return n
