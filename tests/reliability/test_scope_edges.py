"""A search's scope reads alike from every front end: an absolute path inside the project root is
taken relative to it, one outside is refused as outside the project root, and a NUL byte in
``paths`` or ``tags`` is refused with a clear error (as agent.yaml refuses one)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fisk_ls.agent.tool import KnowledgeTool, ToolInputError
from fisk_ls.knowledge import Scope, SettingError, Settings, check_scope, check_tags, index_project
from tests.support.raw_lsp import RawClient, command


def test_the_core_takes_an_absolute_path_inside_the_root_and_refuses_nul(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "docs").mkdir(parents=True)
    inside = Scope.build([str(root / "docs")], root=root)
    assert inside is not None and inside.include == ("/docs",)
    assert Scope.build([str(root)], root=root) == Scope.build(["."])
    with pytest.raises(SettingError, match="outside the project root"):
        Scope.build([str(tmp_path / "elsewhere")], root=root)
    with pytest.raises(SettingError, match="is absolute"):
        Scope.build([str(root / "docs")])  # no root to be inside of
    nul: list[Callable[[], object]] = [
        lambda: check_scope(["docs\0x"]),
        lambda: check_tags(["a\0b"]),
    ]
    for bad in nul:
        with pytest.raises(SettingError, match="NUL byte"):
            bad()
    with pytest.raises(SettingError, match="NUL byte"):
        Scope.build(["docs\0x"])


def _cli(settings: Settings, *args: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-m", "fisk_ls.cli", "knowledge", "search", *args, "--json"],
        cwd=settings.project_root / "docs",
        env={**os.environ, "FISK_AI_STORE_DIR": str(settings.store_dir.parent)},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert "Traceback" not in out.stderr, out.stderr
    answer: dict[str, Any] = json.loads(out.stdout)
    return answer


def test_every_front_end_reads_a_scope_alike(settings: Settings, tmp_path: Path) -> None:
    root = settings.project_root
    (root / ".git").mkdir()  # so the CLI, run from docs/, finds the same project
    index_project(settings)
    inside, outside = str(root / "docs" / "ops"), str(tmp_path)

    cli_in = _cli(settings, "restart broker", "--path", inside)
    assert [h["path"] for h in cli_in["results"]] == ["docs/ops/runbook.md"], cli_in
    assert "outside the project root" in _cli(settings, "x", "--path", outside)["error"]

    tool = KnowledgeTool(settings)
    try:
        hits = tool.call({"query": "restart broker", "paths": [inside]})["results"]
        assert [h["citation"].split("#")[0] for h in hits] == ["docs/ops/runbook.md"]
        for raw, expected in (
            ({"query": "x", "paths": [outside]}, "outside the project root"),
            ({"query": "x", "paths": ["docs\0x"]}, "NUL byte"),
            ({"query": "x", "tags": ["a\0b"]}, "NUL byte"),
        ):
            with pytest.raises(ToolInputError, match=expected):
                tool.call(raw)
    finally:
        tool.close()

    client = RawClient(root, {**os.environ, "FISK_AI_STORE_DIR": str(settings.store_dir.parent)})
    try:
        init = client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "capabilities": {},
                "initializationOptions": {"watch": False},
            },
        )
        assert "result" in init, init
        client.notify("initialized", {})
        search = "fisk.knowledge.search"
        found = command(client, search, {"query": "restart broker", "paths": [inside]})
        cited = [r["citation"].split("#")[0] for r in found["result"]["results"]]
        assert cited == ["docs/ops/runbook.md"], found
        for args, expected in (
            ({"query": "x", "paths": [outside]}, "outside the project root"),
            ({"query": "x", "paths": ["docs\0x"]}, "NUL byte"),
            ({"query": "x", "tags": ["a\0b"]}, "NUL byte"),
        ):
            reply = command(client, search, args)
            assert reply["error"]["code"] == -32602 and expected in reply["error"]["message"]
    finally:
        client.close()
