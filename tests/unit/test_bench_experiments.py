"""The monkeypatches of bench/experiments/ still reach the product (read with ``ast``; no
experiment is imported, since importing one runs it).

A script that assigns ``M.name = ...`` (``M`` a ``fisk_ls`` module it imported) changes the
product only if ``name`` is looked up at call time: as a global inside a function of ``M``, or
as ``M.name`` from a module that imported ``M``. A patch of a name the product no longer
calls changes nothing and measures nothing, silently. ``M.Class.name = ...`` needs ``.name``
to be read somewhere in the product. A replacement function must take the original's
parameters, by position and by name (or ``*args`` / ``**kwargs``), else the search crashes.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENTS = ROOT / "bench" / "experiments"
PRODUCT = ROOT / "fisk_ls"
Fn = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


@dataclass(frozen=True)
class Patch:
    script: str
    line: int
    module: str
    path: tuple[str, ...]
    """The attribute chain below the module: ("name",) or ("Class", "name")."""
    replacement: Fn | None
    """The function assigned, when it is a ``def`` of the script or a lambda."""

    def __str__(self) -> str:
        return f"{self.script}:{self.line} {self.module}.{'.'.join(self.path)}"


def _module_of(node: ast.ImportFrom | ast.Import, alias: ast.alias, here: str) -> str:
    """The module an import binds to its name (``here``: the importing module, for ``from .``)."""
    if isinstance(node, ast.Import):
        return alias.name
    base = node.module or ""
    if node.level:
        parts = here.split(".")[: -node.level]
        base = ".".join([*parts, base] if base else parts)
    return f"{base}.{alias.name}"


def _is_module(name: str) -> bool:
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


def _module_aliases(tree: ast.AST, here: str = "") -> dict[str, str]:
    """Local name -> fisk_ls module, for every import of a module anywhere in ``tree``."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                full = _module_of(node, alias, here)
                if isinstance(node, ast.Import) and alias.asname is None:
                    continue  # "import a.b" binds "a"; the scripts always name the module
                if full.startswith("fisk_ls.") and _is_module(full):
                    out[alias.asname or alias.name] = full
    return out


def _chain(node: ast.expr) -> list[str] | None:
    names: list[str] = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(names)]


def _defs(tree: ast.Module) -> dict[int, dict[str, Fn]]:
    """id of each scope (the module, a function) -> the functions defined directly in it."""
    out: dict[int, dict[str, Fn]] = {}

    def visit(node: ast.AST, scope: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                out.setdefault(id(scope), {})[child.name] = child
                visit(child, child)
            else:
                visit(child, scope)

    visit(tree, tree)
    return out


def patches() -> Iterator[Patch]:
    for script in sorted(EXPERIMENTS.glob("*.py")):
        tree = ast.parse(script.read_text(encoding="utf-8"))
        yield from _patches_in(script.name, tree, _module_aliases(tree), _defs(tree), [tree])


def _patches_in(
    script: str,
    node: ast.AST,
    aliases: dict[str, str],
    defs: dict[int, dict[str, Fn]],
    stack: list[ast.AST],
) -> Iterator[Patch]:
    """The patches under ``node`` (``stack``: the scopes around it, innermost last)."""
    if isinstance(node, ast.Assign):
        for target in node.targets:
            pairs: list[tuple[ast.expr, ast.expr | None]] = [(target, node.value)]
            if isinstance(target, ast.Tuple):
                values = node.value.elts if isinstance(node.value, ast.Tuple) else []
                pairs = [
                    (t, values[i] if i < len(values) else None) for i, t in enumerate(target.elts)
                ]
            for t, value in pairs:
                chain = _chain(t) if isinstance(t, ast.Attribute) else None
                if chain is None or chain[0] not in aliases:
                    continue
                fn = _replacement(value, stack, defs)
                yield Patch(script, node.lineno, aliases[chain[0]], tuple(chain[1:]), fn)
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        stack = [*stack, node]
    for child in ast.iter_child_nodes(node):
        yield from _patches_in(script, child, aliases, defs, stack)


def _replacement(
    value: ast.expr | None, stack: list[ast.AST], defs: dict[int, dict[str, Fn]]
) -> Fn | None:
    if isinstance(value, ast.Lambda):
        return value
    if isinstance(value, ast.Name):
        for scope in reversed(stack):
            found = defs.get(id(scope), {}).get(value.id)
            if found is not None:
                return found
    return None


def _sources() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(PRODUCT.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        yield ".".join(parts), ast.parse(path.read_text(encoding="utf-8"))


SOURCES = dict(_sources())


def _read_in_functions(module: str, name: str) -> bool:
    """Whether a function of ``module`` reads the global ``name`` (default values, evaluated
    once at definition, do not count)."""
    tree = SOURCES[module]
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        body = fn.body if isinstance(fn.body, list) else [fn.body]
        for stmt in body:
            for n in ast.walk(stmt):
                if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load):
                    return True
    return False


def _read_as_attribute(module: str, name: str) -> bool:
    """Whether a product module reads ``X.name`` with ``X`` bound to ``module``."""
    for here, tree in SOURCES.items():
        init = (PRODUCT.parent / Path(*here.split("."))).is_dir()
        aliases = _module_aliases(tree, f"{here}.__init__" if init else here)
        for n in ast.walk(tree):
            if (
                isinstance(n, ast.Attribute)
                and n.attr == name
                and isinstance(n.value, ast.Name)
                and aliases.get(n.value.id) == module
            ):
                return True
    return False


def _any_attribute_read(name: str) -> bool:
    return any(
        isinstance(n, ast.Attribute) and n.attr == name and isinstance(n.ctx, ast.Load)
        for tree in SOURCES.values()
        for n in ast.walk(tree)
    )


ALL = list(patches())


def test_the_scripts_patch_something() -> None:
    assert len(ALL) > 20  # the walk finds the patches (a broken walk would pass every check)


@pytest.mark.parametrize("patch", ALL, ids=str)
def test_a_patch_names_what_the_product_reads(patch: Patch) -> None:
    owner: Any = importlib.import_module(patch.module)
    for part in patch.path[:-1]:
        owner = getattr(owner, part)
    name = patch.path[-1]
    assert hasattr(owner, name), f"{patch}: no such attribute"
    if len(patch.path) == 1:
        assert _read_in_functions(patch.module, name) or _read_as_attribute(patch.module, name), (
            f"{patch}: the product never reads {name} at call time, so the patch does nothing"
        )
    else:
        assert _any_attribute_read(name), f"{patch}: the product never reads .{name}"


def _accepts(fn: Fn, original: Any) -> list[str]:
    """The original's parameters that ``fn`` cannot take as the original does."""
    a = fn.args
    positional = [p.arg for p in [*a.posonlyargs, *a.args]]
    named = {p.arg for p in [*a.args, *a.kwonlyargs]}
    missing = []
    for i, (pname, p) in enumerate(inspect.signature(original).parameters.items()):
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and not (
            i < len(positional) or a.vararg
        ):
            missing.append(f"{pname} (position {i})")
        elif p.kind != p.POSITIONAL_ONLY and pname not in named and not a.kwarg:
            missing.append(f"{pname} (by name)")
    return missing


@pytest.mark.parametrize("patch", [p for p in ALL if p.replacement is not None], ids=str)
def test_a_replacement_takes_the_original_parameters(patch: Patch) -> None:
    owner: Any = importlib.import_module(patch.module)
    for part in patch.path:
        owner = getattr(owner, part, None)
    if not callable(owner):
        return  # a constant, or no such attribute (the test above says so)
    assert patch.replacement is not None
    missing = _accepts(patch.replacement, owner)
    assert not missing, f"{patch}: the replacement does not take {', '.join(missing)}"
