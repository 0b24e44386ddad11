"""knowledge_search's ``also``: the schema tells the agent what to send, the tool fuses it, old
clients that send only ``query`` keep working, and the limits are one-line input errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fisk_ls.agent.tool import (
    DESCRIPTION,
    INPUT_SCHEMA,
    SYSTEM_NOTE,
    KnowledgeTool,
    ToolInputError,
    parse_args,
    trace,
)
from fisk_ls.knowledge import index_project, resolve_settings
from tests.support.agent_strings import ALSO, QUESTION, write_site


def test_schema_and_description_say_what_to_send() -> None:
    also = INPUT_SCHEMA["properties"]["also"]
    assert also["type"] == "array" and also["maxItems"] == 4
    assert also["items"] == {"type": "string", "maxLength": 2000}
    assert INPUT_SCHEMA["required"] == ["query"]
    for text in (DESCRIPTION, SYSTEM_NOTE):
        assert "`also`" in text and "keyword" in text and "hypothetical answer" in text
        assert "rephras" in text
    assert '"also": [' in DESCRIPTION  # the one-line example


def test_arguments() -> None:
    assert parse_args({"query": "q"}).also == ()
    assert parse_args({"query": "q", "also": ["a", " ", "b"]}).also == ("a", "b")
    assert trace({"query": "q", "also": ["a", "b"]}) == 'knowledge_search("q", also=2)'
    cases: list[tuple[dict[str, Any], str]] = [
        ({"query": "q", "also": ["a"] * 5}, "at most 4 strings"),
        ({"query": "q", "also": "a"}, "expected a list"),
        ({"query": "q", "also": ["a" * 2001]}, "at most 2,000 characters"),
        ({"query": "q", "also": [3]}, "expected a list"),
    ]
    for bad, message in cases:
        with pytest.raises(ToolInputError, match=message):
            parse_args(bad)


def test_also_changes_what_a_paraphrase_finds(tmp_path: Path, store_base: Path) -> None:
    root = write_site(tmp_path / "site")
    settings = resolve_settings(cwd=root, store_base=store_base, discover=False)
    index_project(settings)
    tool = KnowledgeTool(settings)
    try:
        old = tool.call({"query": QUESTION, "top_k": 2})  # an old client: query only
        assert old["results"][0]["citation"].startswith("docs/display.md#")
        assert "found_by" not in old["results"][0]
        new = tool.call({"query": QUESTION, "top_k": 2, "also": ALSO})
        first = new["results"][0]
        assert first["citation"].startswith("docs/naming.md#")
        assert "also[0]" in first["found_by"]
    finally:
        tool.close()
