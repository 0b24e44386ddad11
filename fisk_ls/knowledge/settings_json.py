"""The settings contract (``settings_schema.py``) as JSON Schema: ``settings.schema.json``.

``python -m fisk_ls.knowledge.settings_schema --write`` (or ``-m fisk_ls.knowledge.settings_json``)
regenerates the file; ``--check`` exits 1 when it is stale.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from .settings_schema import (
    AGENT_ONLY,
    ALSO,
    EDITOR_SETTINGS,
    EMBEDDINGS,
    EMBEDDINGS_RULE,
    EXPANSION,
    EXPANSION_RULE,
    QUERY,
    SCOPE,
    SHOW_CONTEXT,
    TAGS,
    TOOL_CONTEXT,
)

SCHEMA_FILE = Path(__file__).with_name("settings.schema.json")


def json_schema() -> dict[str, Any]:
    """The editors' ``fisk`` settings object as JSON Schema (draft 2020-12), camelCase names."""
    props: dict[str, Any] = {s.wire: s.json_schema() for s in EDITOR_SETTINGS}
    props["embeddings"] = {
        "type": "object",
        "description": "The optional vector tier; without it search is lexical (BM25) only.",
        "properties": {s.wire: s.json_schema() for s in EMBEDDINGS},
        **EMBEDDINGS_RULE,
    }
    props["expansion"] = {
        "type": "object",
        "description": "Question expansion: a language model writes extra search strings for a "
        "person's question (palette and picker searches, CLI --expand).",
        "properties": {s.wire: s.json_schema() for s in EXPANSION},
        **EXPANSION_RULE,
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "fisk-ls settings",
        "description": (
            "The language server's `fisk` settings (initializationOptions and "
            "workspace/configuration). Generated from fisk_ls/knowledge/settings_schema.py; "
            "do not edit by hand. $defs holds the request limits and agent.yaml-only settings."
        ),
        "type": "object",
        "properties": props,
        "$defs": {
            "query": QUERY.json_schema(),
            "also": ALSO.json_schema(),
            "scope": SCOPE.json_schema(),
            "tags": TAGS.json_schema(),
            "showContext": SHOW_CONTEXT.json_schema(),
            "toolContext": TOOL_CONTEXT.json_schema(),
            **{s.wire: s.json_schema() for s in AGENT_ONLY},
        },
    }


def render_schema() -> str:
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``--write`` regenerates settings.schema.json; ``--check`` exits 1 when it is stale."""
    args = sys.argv[1:] if argv is None else argv
    text = render_schema()
    if args == ["--write"]:
        SCHEMA_FILE.write_text(text, encoding="utf-8")
        return 0
    if args == ["--check"]:
        stale = not SCHEMA_FILE.is_file() or SCHEMA_FILE.read_text(encoding="utf-8") != text
        if stale:
            print(f"{SCHEMA_FILE} is stale: python -m fisk_ls.knowledge.settings_schema --write")
        return 1 if stale else 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
