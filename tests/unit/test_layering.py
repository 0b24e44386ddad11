"""Dependencies point one way: the core imports no adapter or adapter framework, and the three
front ends (cli, lsp, agent) do not import each other except where one starts another."""

from __future__ import annotations

import ast
from pathlib import Path

import fisk_ls

PACKAGE = Path(fisk_ls.__file__).parent
FRAMEWORKS = {"pygls", "lsprotocol", "click", "rich", "mcp"}
ADAPTERS = {"cli", "lsp", "agent"}


def _imports(path: Path) -> list[str]:
    """Absolute names of the fisk_ls modules and third-party packages a file imports."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    package = list(parts if path.name == "__init__.py" else parts[:-1])
    out: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            out.append(module)
            out.extend(f"{module}.{a.name}" for a in node.names)
    return out


def test_core_imports_no_adapter() -> None:
    for path in (PACKAGE / "knowledge").rglob("*.py"):
        for name in _imports(path):
            top = name.split(".")[0]
            assert top not in FRAMEWORKS, f"{path} imports {name}"
            assert not any(name.startswith(f"fisk_ls.{a}") for a in ADAPTERS), f"{path}: {name}"


# Where one front end starts another: `fisk-ai lsp` and `fisk-ai mcp` (inside the command).
ALLOWED = {("cli", "lsp"), ("cli", "agent")}


def test_adapters_do_not_import_each_other() -> None:
    for adapter in ADAPTERS:
        for path in (PACKAGE / adapter).rglob("*.py"):
            for name in _imports(path):
                for other in ADAPTERS - {adapter}:
                    if name.startswith(f"fisk_ls.{other}") and (adapter, other) not in ALLOWED:
                        raise AssertionError(f"{path} imports {name}")


def test_language_server_features_do_not_import_their_wiring() -> None:
    for path in (PACKAGE / "lsp").rglob("*.py"):
        if path.name in ("wiring.py", "__main__.py"):
            continue
        assert not [n for n in _imports(path) if n.startswith("fisk_ls.lsp.wiring")], path
