"""The editors' generated copies of the settings contract are fresh (scripts/editor_contracts.py)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parents[1] / "scripts/editor_contracts.py"


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


def test_package_json_states_the_schema_limits() -> None:
    generator = load()
    assert generator.manifest_check() == [], "edit editors/vscode/package.json to match"


def test_package_json_drift_is_named() -> None:
    generator = load()
    schema = json.loads(generator.SCHEMA.read_text(encoding="utf-8"))
    manifest = json.loads(generator.MANIFEST.read_text(encoding="utf-8"))
    settings = manifest["contributes"]["configuration"]["properties"]
    settings["fisk.topK"]["maximum"] = 50
    settings["fisk.embeddings.queryTimeout"]["markdownDescription"] = "Seconds (0.05–90)."
    settings["fisk.embeddings.timeout"]["default"] = 10
    del settings["fisk.exclude"]
    tool = manifest["contributes"]["languageModelTools"][0]["inputSchema"]["properties"]
    tool["also"]["maxItems"] = 5
    tool["query"]["maxLength"] = 4000
    assert generator.manifest_problems(schema, manifest) == [
        "fisk.exclude: a server setting missing from contributes.configuration",
        "fisk.topK: maximum is 50, the schema says 20",
        "fisk.embeddings.timeout: default is 10, the schema says 30.0",
        "fisk.embeddings.queryTimeout: markdownDescription says 0.05–90, the schema says 0.05–60",
        "languageModelTools fisk_knowledge_search: query: maxLength is 4000, the schema says 2000",
        "languageModelTools fisk_knowledge_search: also: maxItems is 5, the schema says 4",
    ]
    # A deliberate default difference is not one (VS Code keeps workspace symbols off).
    assert (
        settings["fisk.workspaceSymbols"]["default"]
        != schema["properties"]["workspaceSymbols"]["default"]
    )
