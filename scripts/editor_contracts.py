"""VS Code's ``package.json`` against the settings contract (settings.schema.json).

The language server is the one validator of its settings (``fisk_ls/lsp/options.py``): the
editors send them as set and show its message. VS Code's ``package.json`` states the limits only
for its settings editor and the language model tool (``contributes.configuration`` and
``languageModelTools[].inputSchema``, with ranges such as "1–20" in their descriptions); this
script compares them with ``fisk_ls/knowledge/settings.schema.json`` (generated from
``fisk_ls/knowledge/settings_schema.py``) and names every difference, to be fixed there by hand.
``tests/test_editor_contracts.py`` fails when they disagree.

    python scripts/editor_contracts.py --check    # exit 1 when package.json differs
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SCHEMA = REPO / "fisk_ls/knowledge/settings.schema.json"
MANIFEST = REPO / "editors/vscode/package.json"
# What a contributed setting and the schema must agree on (descriptions and scopes are VS Code's).
LIMIT_KEYS = ("type", "minimum", "maximum", "maxLength", "maxItems", "enum")
# Deliberate default differences, with the reason.
OWN_DEFAULTS = {
    "fisk.workspaceSymbols": "off in VS Code, so code symbols are not mixed with docs",
    "fisk.expansion.provider": "the editor's own language model in VS Code, which has one",
}
# "1–20", "0.05–60": a range a description states.
RANGE = re.compile(r"(\d+(?:\.\d+)?)\s*[–-]\s*(\d+(?:\.\d+)?)")


def _limits(prop: dict[str, Any]) -> dict[str, Any]:
    out = {key: prop[key] for key in LIMIT_KEYS if key in prop}
    if isinstance(prop.get("items"), dict):
        out["items"] = _limits(prop["items"])
    return out


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _compare(name: str, mine: dict[str, Any], server: dict[str, Any], default: bool) -> list[str]:
    """Differences between a package.json property and the schema's, one line each."""
    problems = []
    have, want = _limits(mine), _limits(server)
    for key in sorted(set(have) | set(want)):
        if (mine_value := have.get(key)) != (value := want.get(key)):
            problems.append(f"{name}: {key} is {mine_value!r}, the schema says {value!r}")
    if default and "default" in server and mine.get("default") != server["default"]:
        problems.append(
            f"{name}: default is {mine.get('default')!r}, the schema says {server['default']!r}"
        )
    if "minimum" in server and "maximum" in server:
        stated = f"{_number(server['minimum'])}–{_number(server['maximum'])}"
        for field in ("markdownDescription", "description"):
            for low, high in RANGE.findall(str(mine.get(field, ""))):
                if f"{_number(float(low))}–{_number(float(high))}" != stated:
                    problems.append(f"{name}: {field} says {low}–{high}, the schema says {stated}")
    return problems


def manifest_problems(schema: dict[str, Any], manifest: dict[str, Any]) -> list[str]:
    """Where package.json's settings or the language model tool's input schema differ from
    ``schema`` (every server setting must be contributed, as ``fisk.<name>``)."""
    contributed = manifest["contributes"]["configuration"]["properties"]
    server: dict[str, dict[str, Any]] = {}
    for key, prop in schema["properties"].items():
        if prop.get("type") == "object":
            server.update({f"fisk.{key}.{k}": v for k, v in prop.get("properties", {}).items()})
        else:
            server[f"fisk.{key}"] = prop
    problems = []
    for name, prop in server.items():
        if name not in contributed:
            problems.append(f"{name}: a server setting missing from contributes.configuration")
        else:
            problems += _compare(name, contributed[name], prop, default=name not in OWN_DEFAULTS)
    defs = schema.get("$defs", {})
    request = {"topK": schema["properties"]["topK"], "query": defs["query"], "also": defs["also"]}
    for tool in manifest["contributes"].get("languageModelTools", []):
        inputs = tool.get("inputSchema", {}).get("properties", {})
        for key, prop in request.items():
            name = f"languageModelTools {tool['name']}: {key}"
            if key not in inputs:
                problems.append(f"{name}: missing from the input schema")
            else:
                problems += _compare(name, inputs[key], prop, default=False)
    return problems


def manifest_check() -> list[str]:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    return manifest_problems(schema, manifest)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--check"]:
        problems = manifest_check()
        for problem in problems:
            print(f"{MANIFEST.relative_to(REPO)}: {problem} (edit it to match)")
        return 1 if problems else 0
    print("usage: python scripts/editor_contracts.py --check", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
