"""The editors' generated copies of the settings contract are fresh (scripts/editor_contracts.py)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parents[2] / "scripts/editor_contracts.py"


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("editor_contracts", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_editor_contracts_are_fresh() -> None:
    generator = load()
    assert generator.stale() == [], "stale: python scripts/editor_contracts.py --write"
    assert generator.main(["--check"]) == 0
    for path in (generator.VSCODE, generator.NEOVIM):
        first = path.read_text(encoding="utf-8").splitlines()[0]
        assert "generated from fisk_ls/knowledge/settings.schema.json" in first
        assert "do not edit" in first


def test_generated_contract_has_every_limit_without_descriptions() -> None:
    generator = load()
    schema = json.loads(generator.SCHEMA.read_text(encoding="utf-8"))
    data = generator.contract(schema)
    assert data["properties"]["topK"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 20,
        "default": 5,
    }
    assert data["defs"]["query"] == {"type": "string", "maxLength": 2000}
    assert "description" not in json.dumps(data)
    lua = generator.render_lua(schema)
    assert '["if"] = {' in lua and '["then"] = {' in lua, "Lua keywords are quoted keys"
