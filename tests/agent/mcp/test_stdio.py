"""`fisk-ai mcp` over stdio: exposure, the tool's contract, budget, concurrency, freshness.

Reference checklist items ported as behaviours are marked with their numbers.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from fisk_ls.agent.tool import INPUT_SCHEMA, NAME, SYSTEM_NOTE

from .conftest import error_text, index, outcome, run_cli, stdio, text_of, write_config

FTS5_SYNTAX = (
    'backpressure "queue* ^full: (NEAR(a b) OR -x + y) AND NOT {col}: [z] '
    "' ; . , ! ? ~ & | < > = / \\ % $ # @ `"
)


def _stderr(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


async def test_allowlisted_tool_is_listed_with_annotations(kb: Path) -> None:  # 59, 64
    write_config(kb, builtins=[" knowledge_search ", "knowledge_search"])  # padded duplicate
    async with stdio(kb, "--config", str(kb / "agent.yaml")) as client:
        tools = (await client.list_tools()).tools
        assert [t.name for t in tools] == [NAME]
        tool = tools[0]
        assert tool.input_schema == INPUT_SCHEMA and "query" in tool.input_schema["properties"]
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is True
        assert tool.annotations.idempotent_hint is True
        assert tool.annotations.open_world_hint is False
        assert tool.annotations.destructive_hint is False
        assert client.instructions == SYSTEM_NOTE


@pytest.mark.parametrize(
    ("builtins", "enabled", "note"),
    [
        (None, True, "is not allowlisted"),  # enabled, no expose block
        ([], True, "is not allowlisted"),  # 68: empty allowlist
        (None, False, "knowledge is not enabled"),  # 52: knowledge disabled
    ],
)
async def test_not_allowlisted_serves_no_tools(
    kb: Path, tmp_path: Path, builtins: list[str] | None, enabled: bool, note: str
) -> None:
    write_config(kb, builtins=builtins, enabled=enabled)
    err = tmp_path / "err.txt"
    with err.open("w") as log:
        async with stdio(kb, errlog=log) as client:  # agent.yaml discovered in cwd
            assert (await client.list_tools()).tools == []
            assert client.instructions is None
            with pytest.raises(MCPError) as unknown:  # a protocol error, as the spec says
                await client.call_tool(NAME, {"query": "backpressure"})
            assert unknown.value.error.code == INVALID_PARAMS
            assert "Unknown tool: knowledge_search" in unknown.value.error.message
    assert note in _stderr(err)


async def test_zero_config_serves_no_tools_and_says_how(
    project: Path, store_base: Path, tmp_path: Path
) -> None:
    err = tmp_path / "err.txt"
    with err.open("w") as log:
        async with stdio(project, errlog=log) as client:
            assert (await client.list_tools()).tools == []
    text = _stderr(err)
    assert "no agent.yaml" in text and "builtins: [knowledge_search]" in text
    assert "enabled: true" in text


@pytest.mark.parametrize(
    ("builtins", "enabled", "message"),
    [
        (["memory_save"], True, "cannot be exposed over MCP"),  # 65: real, non-exposable
        (["knowledge_search", "frobnicate"], True, "cannot be exposed over MCP"),  # 66
        (["knowledge_search"], False, "knowledge is not enabled"),  # 67
    ],
)
def test_bad_allowlist_is_a_config_error(
    kb: Path, builtins: list[str], enabled: bool, message: str
) -> None:
    config = write_config(kb, builtins=builtins, enabled=enabled)
    proc = run_cli(kb, "mcp", "--config", str(config), timeout=30)
    assert proc.returncode != 0 and proc.stdout == ""
    assert message in proc.stderr and "knowledge_search" in proc.stderr
    assert "Traceback" not in proc.stderr


async def test_call_returns_citations_that_show_resolves(built: Path, tmp_path: Path) -> None:
    err = tmp_path / "err.txt"
    with err.open("w") as log:  # 58, 69
        async with stdio(built, "--config", str(built / "agent.yaml"), errlog=log) as client:
            res = outcome(await client.call_tool(NAME, {"query": "how does backpressure work?"}))
    async with stdio(built, "--config", str(built / "agent.yaml"), mode="legacy") as client:
        legacy = outcome(await client.call_tool(NAME, {"query": "backpressure", "top_k": 3}))
        legacy_ok = legacy["status"] == "ok" and 1 <= len(legacy["results"]) <= 3
    assert legacy_ok
    assert res["status"] == "ok" and res["tier"].startswith("lexical")
    assert list(res) == ["tier", "status", "results"]
    first = res["results"][0]
    assert first["citation"].startswith("docs/design.md#") and "backpressure" in first["content"]
    for hit in res["results"]:
        assert hit["content"].startswith("<<<untrusted reference data from ")
        shown = run_cli(built, "knowledge", "show", hit["citation"], "--json")
        assert shown.returncode == 0, shown.stderr
        chunk = json.loads(shown.stdout)
        assert chunk["citation"] == hit["citation"] and not chunk["stale"]
        assert hit["lines"] == f"{chunk['start_line']}-{chunk['end_line']}"
        assert hit.get("section", "") == chunk["section"]
        inner = hit["content"].split(">>>\n", 1)[1].rsplit("\n<<<", 1)[0]
        assert inner.strip() and inner.strip() in chunk["content"]
    assert 'Running knowledge_search("how does backpressure work?")' in _stderr(err)  # 54


BAD_ARGS: list[dict[str, object]] = [
    {},
    {"query": ""},
    {"query": "   "},
    {"query": 42},
    {"query": "q", "top_k": 0},
    {"query": "q", "top_k": 21},
    {"query": "q", "top_k": "3"},
    {"query": "q", "extra": True},
    {"query": "q" * 2001},
]


async def test_bad_arguments_are_one_line_tool_errors(built: Path) -> None:
    async with stdio(built) as client:
        for args in BAD_ARGS:
            text = error_text(await client.call_tool(NAME, args))
            assert text.startswith("invalid knowledge_search input"), args
        assert outcome(await client.call_tool(NAME, {"query": "retries"}))["status"] == "ok"


async def test_index_built_after_start_is_found_without_restart(kb: Path) -> None:  # 57
    async with stdio(kb) as client:
        before = outcome(await client.call_tool(NAME, {"query": "backpressure"}))
        assert before["status"] == "index_not_built" and before["results"] == []
        assert "fisk-ai knowledge index" in before["note"] and "lexical" in before["tier"]
        await anyio.to_thread.run_sync(index, kb)
        after = outcome(await client.call_tool(NAME, {"query": "backpressure"}))
        assert after["status"] == "ok" and after["results"]


async def test_budget_tiny_and_huge(built: Path) -> None:  # 55, 56
    query = {"query": "widget pipeline frames metrics", "top_k": 20}
    write_config(built, max_injected_tokens=1)
    async with stdio(built) as client:
        tiny = outcome(await client.call_tool(NAME, query))
    assert tiny["status"] == "ok" and tiny["results"] == []

    write_config(built, max_injected_tokens=150)
    async with stdio(built) as client:
        res = await client.call_tool(NAME, query)
        mid = outcome(res)
    assert len(text_of(res)) <= 150 * 4  # everything the model receives
    assert mid["results"] and mid["results"][-1].get("truncated") is True

    write_config(built, max_injected_tokens=1_000_000)
    async with stdio(built) as client:
        huge = outcome(await client.call_tool(NAME, query))
    assert len(huge["results"]) >= 8 and not any(r.get("truncated") for r in huge["results"])


async def test_sixteen_concurrent_calls_succeed(built: Path) -> None:  # 71
    queries = ["backpressure", "retries jitter", "restart broker", "widget frames"] * 4
    results: list[dict[str, object]] = []
    async with stdio(built) as client:

        async def one(q: str) -> None:
            results.append(outcome(await client.call_tool(NAME, {"query": q})))

        async with anyio.create_task_group() as tg:
            for q in queries:
                tg.start_soon(one, q)
    assert len(results) == 16 and all(r["status"] == "ok" and r["results"] for r in results)


async def test_fts5_syntax_never_errors(built: Path) -> None:
    async with stdio(built) as client:
        for query in (FTS5_SYNTAX, '"*^:()-+{}[]', "NEAR AND OR NOT", "'\"\"'", "a*", "-"):
            res = outcome(await client.call_tool(NAME, {"query": query}))
            assert res["status"] in {"ok", "no_terms", "index_empty"}, query
            if query == FTS5_SYNTAX:
                assert res["status"] == "ok" and res["results"]


async def test_tags_keep_a_call_to_tagged_pages(kb: Path) -> None:
    (kb / "docs" / "tagged.md").write_text(
        "---\ntitle: Tagged\ntags: [restarts]\n---\n\nHow to restart the tagged service.\n",
        encoding="utf-8",
    )
    index(kb)
    async with stdio(kb) as client:
        tools = (await client.list_tools()).tools
        assert tools[0].input_schema["properties"]["tags"]["maxItems"] == 16
        args = {"query": "restart", "tags": ["Restarts"]}
        tagged = outcome(await client.call_tool(NAME, args))
        assert [r["citation"].split("#")[0] for r in tagged["results"]] == ["docs/tagged.md"]
        args = {"query": "restart", "tags": ["restarts"], "paths": ["docs/ops"]}
        assert outcome(await client.call_tool(NAME, args))["results"] == []
        text = error_text(await client.call_tool(NAME, {"query": "q", "tags": ["x"] * 17}))
        assert text.startswith("invalid knowledge_search input") and "at most 16 tags" in text


async def test_paths_keep_a_call_to_them_and_traversal_is_refused(built: Path) -> None:
    async with stdio(built) as client:
        tools = (await client.list_tools()).tools
        assert tools[0].input_schema["properties"]["paths"]["type"] == "array"
        ops = outcome(await client.call_tool(NAME, {"query": "restart", "paths": ["docs/ops"]}))
        assert ops["status"] == "ok" and ops["results"]
        assert all(r["citation"].startswith("docs/ops/") for r in ops["results"])
        none = outcome(await client.call_tool(NAME, {"query": "restart", "paths": ["nowhere"]}))
        assert none["status"] == "ok" and none["results"] == []
        text = error_text(await client.call_tool(NAME, {"query": "q", "paths": ["../x"]}))
        assert text.startswith("invalid knowledge_search input") and "outside the project" in text
        args = {"query": "widget pipeline stage 1", "top_k": 1, "context": 1}
        (top,) = outcome(await client.call_tool(NAME, args))["results"]
        path, n = top["citation"].rsplit("#", 1)
        assert f"{path}#{int(n) + 1}" in [c["citation"] for c in top["context"]]
