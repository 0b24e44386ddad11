"""The editors' copies of the settings contract, generated from settings.schema.json.

VS Code (``editors/vscode/src/common/schema.generated.ts``) and Neovim
(``editors/neovim/lua/fisk/schema.lua``) validate settings and request arguments with the limits
and defaults of ``fisk_ls/knowledge/settings.schema.json`` (itself generated from
``fisk_ls/knowledge/settings_schema.py``). This script writes them from it, descriptions left
out; ``tests/unit/test_editor_contracts.py`` fails when a checked-in copy is stale.

    python scripts/editor_contracts.py --write    # regenerate both
    python scripts/editor_contracts.py --check    # exit 1 when one is stale
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SCHEMA = REPO / "fisk_ls/knowledge/settings.schema.json"
VSCODE = REPO / "editors/vscode/src/common/schema.generated.ts"
NEOVIM = REPO / "editors/neovim/lua/fisk/schema.lua"
HEADER = (
    "generated from fisk_ls/knowledge/settings.schema.json by scripts/editor_contracts.py"
    " — do not edit"
)

LUA_KEYWORDS = frozenset(
    {
        "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if",
        "in", "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while",
    }
)  # fmt: skip


def stripped(value: Any) -> Any:
    """The schema without descriptions (what the editors check against)."""
    if isinstance(value, dict):
        return {k: stripped(v) for k, v in value.items() if k != "description"}
    if isinstance(value, list):
        return [stripped(v) for v in value]
    return value


def contract(schema: dict[str, Any]) -> dict[str, Any]:
    """The settings (``properties``) and the request limits (``$defs``)."""
    return {"properties": stripped(schema["properties"]), "defs": stripped(schema.get("$defs", {}))}


def render_typescript(schema: dict[str, Any]) -> str:
    data = contract(schema)
    settings = json.dumps(data["properties"], indent=2, ensure_ascii=False)
    defs = json.dumps(data["defs"], indent=2, ensure_ascii=False)
    return (
        f"// {HEADER}.\n"
        "/** The `fisk` settings: type, limits and default (JSON Schema, no descriptions). */\n"
        f"export const SETTINGS = {settings} as const;\n\n"
        "/** Request limits and agent.yaml-only settings (the schema's `$defs`). */\n"
        f"export const DEFS = {defs} as const;\n"
    )


def _lua(value: Any, indent: str) -> str:
    inner = indent + "  "
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "vim.NIL"
    if isinstance(value, int | float):
        return json.dumps(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        if not value:
            return "{}"
        return "{ " + ", ".join(_lua(v, inner) for v in value) + " }"
    if not value:
        return "{}"
    lines = []
    for key, item in value.items():
        plain = re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key) and key not in LUA_KEYWORDS
        name = key if plain else f"[{json.dumps(key)}]"
        lines.append(f"{inner}{name} = {_lua(item, inner)},")
    return "{\n" + "\n".join(lines) + f"\n{indent}}}"


def render_lua(schema: dict[str, Any]) -> str:
    return (
        f"-- {HEADER}.\n"
        "-- properties: the `fisk` settings (type, limits, default); defs: request limits\n"
        f"return {_lua(contract(schema), '')}\n"
    )


def outputs() -> dict[Path, str]:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    return {VSCODE: render_typescript(schema), NEOVIM: render_lua(schema)}


def stale() -> list[Path]:
    return [
        path
        for path, text in outputs().items()
        if not path.is_file() or path.read_text(encoding="utf-8") != text
    ]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--write"]:
        for path, text in outputs().items():
            path.write_text(text, encoding="utf-8")
        return 0
    if args == ["--check"]:
        for path in stale():
            print(f"{path.relative_to(REPO)} is stale: python scripts/editor_contracts.py --write")
        return 1 if stale() else 0
    print("usage: python scripts/editor_contracts.py --write | --check", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
