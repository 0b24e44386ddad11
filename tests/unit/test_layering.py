"""The core never imports an adapter's framework."""

from __future__ import annotations

import ast
from pathlib import Path

import fisk_ls.knowledge as core

FORBIDDEN = {"pygls", "lsprotocol", "click", "rich", "mcp", "fisk_ls.server", "fisk_ls.cli"}


def test_core_imports_no_adapter() -> None:
    for path in Path(core.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                assert top not in FORBIDDEN and name not in FORBIDDEN, f"{path.name} imports {name}"
