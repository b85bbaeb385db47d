"""`tracecols mcp SOURCE…`: the traces, saved directories and lakes as a Model Context Protocol
server over stdio, for an agent to query.

Tools: the sources, the views with what each answers, a view's columns and units, read-only SQL,
the summary, the findings (where this version has them) and a comparison of two sources.
Resources: the schema of the tables and every view's header. Every answer is bounded: rows
(MAX_ROWS at most), text per cell (CELL_CHARS) and the whole answer (ANSWER_CHARS), each cut
said so in the answer. Secrets stay redacted (no --keep-secrets here), SQL is read-only (the
same refusals as `tracecols sql`) and stopped after QUERY_SECONDS, and no tool writes a file.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from typing import Any

from ..errors import TraceError, Unsupported
from ..face import Face
from ..trace import open_any
from .sources import expand

MAX_ROWS = 1000
DEFAULT_ROWS = 100
CELL_CHARS = 2000
ANSWER_CHARS = 200_000
QUERY_SECONDS = 30.0


def _cell(v: Any) -> Any:
    if isinstance(v, str) and len(v) > CELL_CHARS:
        return v[:CELL_CHARS] + f"… ({len(v) - CELL_CHARS} more characters)"
    if isinstance(v, (list, tuple)):
        return [_cell(x) for x in v]
    if isinstance(v, dict):
        return {k: _cell(x) for k, x in v.items()}
    return v


def _bounded(rows: list[dict[str, Any]], truncated: bool, **extra: Any) -> dict[str, Any]:
    """{rows, truncated, …}: the rows with long texts cut, fewer rows if the answer would
    exceed ANSWER_CHARS."""
    rows = [_cell(r) for r in rows]
    answer = {**extra, "rows": rows, "truncated": truncated}
    while rows and len(json.dumps(answer, default=str)) > ANSWER_CHARS:
        rows = rows[: len(rows) // 2]
        answer = {**extra, "rows": rows, "truncated": True}
    return json.loads(json.dumps(answer, default=str))  # Decimal, datetime …: as text


class Sources:
    """The opened sources, by label (their position and name: '0', 'trace.json.gz', …)."""

    def __init__(self, items: list[str]) -> None:
        self.faces: dict[str, Face] = {}
        self.paths: dict[str, str] = {}
        for i, item in enumerate(items):
            label = os.path.basename(item.rstrip("/")) or item
            if label in self.faces:
                label = f"{label}#{i}"
            self.faces[label] = open_any(*expand([item], command="mcp"))
            self.paths[label] = item

    def get(self, source: str | None) -> Face:
        if source is None or source == "":
            return next(iter(self.faces.values()))
        if source in self.faces:
            return self.faces[source]
        if source.isdigit() and int(source) < len(self.faces):
            return list(self.faces.values())[int(source)]
        raise Unsupported(source, f"no such source; the sources are {', '.join(self.faces)}")


def _said(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` with tracecols' one-line errors handed to the agent as the tool's error (the SDK shows
    only a generic message for any other exception)."""
    from mcp.server.mcpserver.exceptions import ToolError

    @functools.wraps(fn)
    def tool(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except TraceError as e:
            raise ToolError(e.line()) from None

    return tool


def build(sources: Sources) -> Any:
    """The MCP server over `sources` (an mcp.server.mcpserver.MCPServer, not yet running)."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer(
        "tracecols",
        instructions=(
            "PyTorch profiler traces as SQL tables and views (DuckDB). Start with list_views and "
            "describe_view; times are int64 ns unless a column says otherwise. Every source has the same "
            "tables; a lake holds many traces (trace_id, rank)."
        ),
    )

    _tools(server, sources)
    _resources(server, sources)
    return server


def _tools(server: Any, sources: Sources) -> None:
    @server.tool()
    @_said
    def list_sources() -> list[dict[str, Any]]:
        """The sources this server was started on: label, path, and how many traces each holds."""
        out = []
        for label, face in sources.faces.items():
            out.append({"label": label, "path": sources.paths[label], "traces": face.frame("traces").height})
        return out

    @server.tool()
    @_said
    def list_views(source: str | None = None) -> list[dict[str, Any]]:
        """Every public table and view of a source, with what each view answers."""
        face = sources.get(source)
        views = set(face.views)
        return [
            {"name": n, "kind": "view" if n in views else "table", "answers": face.answers(n) if n in views else None}
            for n in face.tables
        ]

    @server.tool()
    @_said
    def describe_view(view: str, source: str | None = None) -> dict[str, Any]:
        """A view's columns: name, DuckDB type, unit (ns, µs, bytes, %, …) and meaning."""
        face = sources.get(source)
        return {"view": view, "answers": face.answers(view), "columns": face.describe(view).to_dicts()}

    @server.tool()
    @_said
    def query(sql: str, source: str | None = None, max_rows: int = DEFAULT_ROWS) -> dict[str, Any]:
        """Run read-only DuckDB SQL over a source's tables and views. At most max_rows rows
        (1000 at most) come back; statements that could write are refused; a query is stopped
        after 30 s."""
        face = sources.get(source)
        n = max(1, min(int(max_rows), MAX_ROWS))
        table, more = face.query(sql, n, QUERY_SECONDS)
        return _bounded(table.to_pylist(), more, columns=table.column_names)

    @server.tool()
    @_said
    def summary(source: str | None = None) -> dict[str, Any]:
        """One line per trace: span, steps, mean step time, GPU busy %, what no CPU op accounts
        for, and the reader's warnings (the `headline` view)."""
        head = sources.get(source).frame("headline").sort("trace_id")
        return _bounded(head.head(MAX_ROWS).to_dicts(), head.height > MAX_ROWS, columns=head.columns)

    @server.tool()
    @_said
    def findings(source: str | None = None, top: int = 20, thresholds: dict[str, float] | None = None) -> dict[str, Any]:
        """What to fix first: the ranked findings with the time at stake (ns and % of the GPU span),
        evidence and remedy. thresholds: {rule: value} instead of the rules' defaults."""
        f = sources.get(source).findings(thresholds or None)
        n = max(1, min(int(top), MAX_ROWS))
        return _bounded(f.head(n).to_dicts(), f.height > n, columns=f.columns)

    @server.tool()
    @_said
    def compare(a: str, b: str, top: int = 20) -> dict[str, Any]:
        """What changed from source a to source b: the step metrics and the changes beyond noise
        (kernel classes, ops, kernels), per profiler step, with shift, 95 % interval and q-value."""
        from .. import gate

        res = sources.get(a).compare(sources.get(b), ("step", "kernel_class", "op", "kernel"))
        n = max(1, min(int(top), MAX_ROWS))
        beyond = gate.beyond_noise(res)
        keep = beyond.columns[2:]  # the per-step means, the shift, its interval, q and the verdict
        steps = res["step"].select("metric", "steps_a", "steps_b", *keep).to_dicts()
        return _bounded(beyond.head(n).to_dicts(), beyond.height > n, steps=steps)


def _resources(server: Any, sources: Sources) -> None:
    @server.resource("tracecols://schema", mime_type="application/json")
    def schema() -> str:
        """The tables and views of the first source: each column's name and type."""
        face = sources.get(None)
        return json.dumps({name: {f.name: str(f.type) for f in face.schema(name)} for name in face.tables})

    @server.resource("tracecols://views/{view}", mime_type="application/json")
    def view_doc(view: str) -> str:
        """A view's header: what it answers and its columns with types, units and meaning."""
        face = sources.get(None)
        return json.dumps({"view": view, "answers": face.answers(view), "columns": face.describe(view).to_dicts()})


def mcp(args: Any) -> int:
    try:
        import mcp.server.mcpserver  # noqa: F401
    except ImportError:
        raise Unsupported("mcp", "tracecols mcp needs the MCP SDK: pip install 'tracecols[mcp]'") from None
    server = build(Sources(args.sources))
    print(f"tracecols mcp: serving {len(args.sources)} source(s) over stdio", file=sys.stderr)
    server.run("stdio")
    return 0


def register(sub: Any) -> None:
    s = sub.add_parser("mcp", help="serve traces, saved directories or lakes to an agent (Model Context Protocol, stdio)")
    s.add_argument("sources", nargs="+", metavar="SOURCE", help="a trace, a quoted glob of traces, a saved directory or a lake")
    s.set_defaults(func=mcp)
