"""``also`` over MCP, through the SDK client against the real `fisk-ai mcp` process."""

from __future__ import annotations

from pathlib import Path

from fisk_ls.agent.tool import NAME
from tests.support.agent_strings import ALSO, QUESTION, write_site

from .conftest import error_text, index, outcome, stdio, write_config


async def test_the_schema_has_also_and_it_changes_what_a_paraphrase_finds(
    tmp_path: Path, store_base: Path
) -> None:
    root = write_site(tmp_path / "site")
    write_config(root)
    index(root)
    async with stdio(root) as client:
        (tool,) = (await client.list_tools()).tools
        also = tool.input_schema["properties"]["also"]
        assert also["maxItems"] == 4 and also["items"]["type"] == "string"
        assert "also" in (client.instructions or "")
        plain = outcome(await client.call_tool(NAME, {"query": QUESTION, "top_k": 1}))
        helped = outcome(
            await client.call_tool(NAME, {"query": QUESTION, "top_k": 1, "also": ALSO})
        )
        too_many = error_text(await client.call_tool(NAME, {"query": QUESTION, "also": ["x"] * 5}))
    assert plain["results"][0]["citation"].startswith("docs/display.md#")
    assert helped["results"][0]["citation"].startswith("docs/naming.md#")
    assert "also[0]" in helped["results"][0]["found_by"]
    assert too_many.startswith("invalid knowledge_search input") and "at most 4" in too_many
