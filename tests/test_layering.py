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


def test_no_import_circles() -> None:
    """Module-level imports inside fisk_ls form no cycle (imports inside functions and under
    TYPE_CHECKING are the deliberate, lazy exceptions)."""
    modules: dict[str, Path] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps: set[str] = set()
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    module = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    module = node.module or ""
                for alias in node.names:
                    full = f"{module}.{alias.name}"
                    deps.add(full if full in modules else module)
            elif isinstance(node, ast.Import):
                deps.update(alias.name for alias in node.names)
        graph[name] = {d for d in deps if d in modules and d != name}
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> None:
        if node in path:
            raise AssertionError("import circle: " + " -> ".join([*path[path.index(node) :], node]))
        if node in done:
            return
        for dep in sorted(graph[node]):
            visit(dep, [*path, node])
        done.add(node)

    for name in sorted(graph):
        visit(name, [])


def _front_end_problems(path: Path) -> list[str]:
    """What a front-end file imports from the core other than the facade's exports, and apsw;
    every import counts: at module level, under TYPE_CHECKING and inside functions."""
    import fisk_ls.knowledge as facade

    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    package = list(parts if path.name == "__init__.py" else parts[:-1])
    where = path.relative_to(PACKAGE)
    out: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "apsw" or alias.name.startswith("fisk_ls.knowledge"):
                    out.append(f"{where}:{node.lineno}: import {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            if module.split(".")[0] == "apsw" or module.startswith("fisk_ls.knowledge."):
                out.append(f"{where}:{node.lineno}: from {module} import ...")
            elif module == "fisk_ls.knowledge":
                out.extend(
                    f"{where}:{node.lineno}: {a.name} is not exported by fisk_ls.knowledge"
                    for a in node.names
                    if a.name not in facade.__all__
                )
    return out


def test_front_ends_import_only_the_facade() -> None:
    """The front ends import the core only through ``fisk_ls.knowledge`` (its ``__all__``):
    no core module, types included, and no apsw (the core converts SQLite errors itself)."""
    bad = [p for a in ADAPTERS for f in (PACKAGE / a).rglob("*.py") for p in _front_end_problems(f)]
    assert not bad, "front ends reach into the core:\n" + "\n".join(sorted(bad))


def test_facade_exports_resolve() -> None:
    """Every name in the facade's ``__all__`` loads (a lazy entry naming a wrong module fails
    here, not in a front end at run time)."""
    import fisk_ls.knowledge as facade

    for name in facade.__all__:
        assert getattr(facade, name) is not None, name
