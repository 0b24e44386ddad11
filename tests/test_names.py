"""One word per idea: no class name is defined twice in fisk_ls (nested classes included), so a
name read anywhere in the code means one thing."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import fisk_ls

PACKAGE = Path(fisk_ls.__file__).parent


def class_names(root: Path) -> dict[str, list[str]]:
    """Each class name defined under ``root`` → where (``path:line``), in file order."""
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.ClassDef):
                where[node.name].append(f"{path.relative_to(root.parent)}:{node.lineno}")
    return where


def test_no_class_name_is_defined_twice() -> None:
    twice = {name: places for name, places in class_names(PACKAGE).items() if len(places) > 1}
    assert not twice, twice


def test_the_check_sees_nested_and_repeated_classes(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "a.py").write_text("class Outer:\n    class Inner:\n        pass\n")
    (pkg / "b.py").write_text("def f():\n    class Inner:\n        pass\n")
    assert class_names(pkg) == {"Outer": ["pkg/a.py:1"], "Inner": ["pkg/a.py:2", "pkg/b.py:2"]}


def test_front_ends_name_statuses_only_through_status() -> None:
    """A soft outcome's wire value is written once, in the core's ``Status``: no string of one
    stands in the front ends' code (a dict key such as doctor's ``"ok"`` is another idea)."""
    from fisk_ls.knowledge import Status

    values = {s.value for s in Status}
    found = []
    for front in ("cli", "lsp", "agent"):
        for path in sorted((PACKAGE / front).rglob("*.py")):
            tree = ast.parse(path.read_text())
            keys = {id(k) for d in ast.walk(tree) if isinstance(d, ast.Dict) for k in d.keys}
            found += [
                f"{path.relative_to(PACKAGE)}:{node.lineno} {node.value!r}"
                for node in ast.walk(tree)
                if isinstance(node, ast.Constant) and node.value in values and id(node) not in keys
            ]
    assert not found, found
