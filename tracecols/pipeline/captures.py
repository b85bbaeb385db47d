"""The capture traces of a graph-capture run (--capture): their events are grafted under the
graph launches of the trace they belong to (model/capture.py)."""

import json
from pathlib import Path

from ..errors import Malformed, SourceIOError
from .in_memory import read_tables

CAPTURE_DETAILS = "execution_details.json"


def read_captures(directory, keep_secrets=False):
    """The capture traces of a directory as capture.Capture objects, in the order matching
    tries them: those listed in its execution_details.json (file, batch_size, mode), else
    every trace file in it by name. A single trace file is taken as the one capture trace.
    Their events are grafted into the trace's: redacted alike unless `keep_secrets`."""
    from ..model.capture import Capture

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
