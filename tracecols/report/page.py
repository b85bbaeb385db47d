"""What every section of the report shares: the source, its traces and how the page names them,
and the sections drawn so far."""

from typing import TYPE_CHECKING

from . import section_data
from .labels import html_text as _e
from .labels import trace_labels

if TYPE_CHECKING:
    from ..face import Face


class Page:
    def __init__(self, src: "Face", is_lake: bool) -> None:
        self.src, self.lake, self.names = src, is_lake, set(src.tables)
        self.sections: list[str] = []
        self.traces = section_data.traces(src) if "traces" in self.names else []
        self.labels = trace_labels([(t["trace_id"], t["path"], t["rank"]) for t in self.traces], is_lake)

    def has(self, *names: str) -> bool:
        return all(n in self.names for n in names)

    def scope(self, r: dict) -> str:
        """Which trace and GPU a row is about: `rank 3 · GPU 0`, `train_a · GPU 0`, `GPU 0`."""
        trace = self.labels.get(r["trace_id"], f"trace {r['trace_id']}")
        parts = [trace] if trace else []
        if r.get("device") is not None:
            parts.append(f"GPU {r['device']}")
        return " · ".join(parts) or f"trace {r['trace_id']}"

    def add(self, sid: str, title: str, *parts: str) -> None:
        self.sections.append(f'<section id="{sid}"><h2>{_e(title)}</h2>{"".join(parts)}</section>')
