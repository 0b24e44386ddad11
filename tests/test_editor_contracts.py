"""VS Code's package.json states the settings contract's limits (scripts/editor_contracts.py);
the editors hold no copy of them besides."""

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


def test_no_editor_holds_a_copy_of_the_contract() -> None:
    """The server is the one validator: no generated copy of the limits in the editors' code."""
    generator = load()
    assert generator.main(["--check"]) == 0
    for name in (
        "editors/vscode/src/common/schema.generated.ts",
        "editors/neovim/lua/fisk/schema.lua",
    ):
        assert not (generator.REPO / name).exists(), name
    for source in [
        *(generator.REPO / "editors/vscode/src/common").glob("*.ts"),
        *(generator.REPO / "editors/neovim/lua").rglob("*.lua"),
    ]:
        text = source.read_text(encoding="utf-8")
        assert "schema.generated" not in text and "fisk.schema" not in text, source


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
