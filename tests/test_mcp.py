"""`tracecols mcp` end to end: the server started as a subprocess, spoken to by the MCP SDK's own
client over stdio; every tool called, the resources read, and the refusals checked (a write, a
result over its row limit, an unknown source). Expected numbers come from the bundled trace's
JSON, not from the code under test."""

import gzip
import json
import sys
from pathlib import Path

import anyio
import pytest

mcp = pytest.importorskip("mcp")
from mcp import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BERT = ROOT / "data" / "bert_small_h100.pt.trace.json.gz"
RUNS = ROOT / "tests" / "data" / "runs"


def _kernels_in_json(path):
    with gzip.open(path, "rt") as f:
        return sum(1 for e in json.load(f)["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "kernel")


def _payload(result):
    """A tool's answer: its structured content, or the JSON of its text content."""
    if result.structured_content is not None:
        s = result.structured_content
        return s["result"] if set(s) == {"result"} else s
    return json.loads(result.content[0].text)


def _error_text(result):
    assert result.is_error
    return " ".join(c.text for c in result.content if hasattr(c, "text"))


async def _session_run(check):
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "tracecols", "mcp", str(BERT), str(RUNS / "base_a.pt.trace.json.gz"), str(RUNS / "tf32.pt.trace.json.gz")],
        cwd=str(ROOT),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await check(session)


def test_every_tool_and_resource_over_stdio():
    async def check(session):
        tools = {t.name for t in (await session.list_tools()).tools}
        assert tools >= {"list_sources", "list_views", "describe_view", "query", "summary", "compare"}

        sources = _payload(await session.call_tool("list_sources", {}))
        assert [s["label"] for s in sources] == [BERT.name, "base_a.pt.trace.json.gz", "tf32.pt.trace.json.gz"]
        assert [s["traces"] for s in sources] == [1, 1, 1]

        views = _payload(await session.call_tool("list_views", {}))
        by_name = {v["name"]: v for v in views}
        assert by_name["kernels"]["kind"] == "table" and by_name["kernel_stats"]["kind"] == "view"
        assert by_name["kernel_stats"]["answers"]
        assert not [n for n in by_name if n.startswith("_")]  # private helpers stay inside

        doc = _payload(await session.call_tool("describe_view", {"view": "kernel_stats"}))
        cols = {c["column"]: c for c in doc["columns"]}
        assert cols["sum_ns"]["unit"] == "ns"

        got = _payload(await session.call_tool("query", {"sql": "SELECT count(*) AS n FROM kernels WHERE cat = 'kernel'"}))
        assert got["rows"] == [{"n": _kernels_in_json(BERT)}] and got["truncated"] is False

        many = _payload(await session.call_tool("query", {"sql": "SELECT uid FROM events ORDER BY uid", "max_rows": 5}))
        assert [r["uid"] for r in many["rows"]] == [0, 1, 2, 3, 4] and many["truncated"] is True
        capped = _payload(await session.call_tool("query", {"sql": "SELECT uid FROM events", "max_rows": 10**9}))
        assert len(capped["rows"]) == 1000 and capped["truncated"] is True

        refused = await session.call_tool("query", {"sql": "COPY kernels TO '/tmp/tracecols-mcp-leak.csv'"})
        assert "COPY statements are refused" in _error_text(refused)
        assert not Path("/tmp/tracecols-mcp-leak.csv").exists()
        refused = await session.call_tool("query", {"sql": "ATTACH '/tmp/x.duckdb' AS x"})
        assert "refused" in _error_text(refused)
        unknown = await session.call_tool("query", {"sql": "SELECT 1", "source": "nope"})
        assert "no such source" in _error_text(unknown)

        head = _payload(await session.call_tool("summary", {"source": "base_a.pt.trace.json.gz"}))
        assert head["rows"][0]["steps"] == 24

        cmp = _payload(await session.call_tool("compare", {"a": "1", "b": "2", "top": 5}))
        steps = {r["metric"]: r for r in cmp["steps"]}
        assert steps["gpu_busy"]["significant"] is True and steps["gpu_busy"]["shift_pct"] < -50
        assert len(cmp["rows"]) == 5 and cmp["truncated"] is True
        assert cmp["rows"][0]["kind"] == "kernel_class" and cmp["rows"][0]["key"] == "gemm"

        assert "findings" in tools
        found = _payload(await session.call_tool("findings", {"source": "base_a.pt.trace.json.gz", "top": 2}))
        assert [(r["rule"], r["kind"]) for r in found["rows"]] == [("host_idle", "launch"), ("host_idle", "sync")]
        assert found["truncated"] is True
        raised = _payload(await session.call_tool("findings", {"source": "1", "thresholds": {"host_idle": 50}}))
        assert "host_idle" not in {r["rule"] for r in raised["rows"]}
        bad = await session.call_tool("findings", {"thresholds": {"nope": 1}})
        assert "no finding rule with a threshold named 'nope'" in _error_text(bad)

        res = await session.list_resources()
        assert "tracecols://schema" in {str(r.uri) for r in res.resources}
        schema = json.loads((await session.read_resource("tracecols://schema")).contents[0].text)
        assert schema["kernels"]["dur_ns"] == "int64" and "kernel_stats" in schema
        view = json.loads((await session.read_resource("tracecols://views/idle_gaps")).contents[0].text)
        assert view["view"] == "idle_gaps" and any(c["column"] == "gap_ns" for c in view["columns"])

    anyio.run(_session_run, check)
