"""Every script in bench/ is run by bench/run.sh: named in it, and reached from a step (run by a
step's command, or imported or run by a script a step reaches). What no step runs goes stale
unnoticed, so it is deleted instead (its results live on in bench/tuning.md and git history)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import report

BENCH = Path(__file__).resolve().parents[1]
RUN = (BENCH / "run.sh").read_text()
SCRIPTS = {p.stem: p for p in BENCH.glob("*.py")}


def commands(text: str) -> str:
    """run.sh without its comments (a ``#`` at a line's start or after a space)."""
    return "\n".join(re.sub(r"(^|\s)#.*", "", line) for line in text.splitlines())


def reached_from(name: str) -> set[str]:
    """The bench scripts ``name`` imports, or names as a file it runs (``"floor.py"``)."""
    tree = ast.parse(SCRIPTS[name].read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found |= {m.removesuffix(".py") for m in re.findall(r"\b\w+\.py\b", node.value)}
    return found & set(SCRIPTS) - {name}


def test_every_bench_script_is_named_in_run_sh() -> None:
    unnamed = sorted(n for n in SCRIPTS if f"bench/{n}.py" not in RUN)
    assert unnamed == [], "run these in bench/run.sh or delete them"


def test_every_bench_script_is_reached_from_a_step() -> None:
    reached = {n for n in SCRIPTS if f"bench/{n}.py" in commands(RUN)}
    todo = list(reached)
    while todo:
        for found in reached_from(todo.pop()) - reached:
            reached.add(found)
            todo.append(found)
    assert sorted(set(SCRIPTS) - reached) == []


def test_the_modules_run_sh_says_the_steps_import_are_the_ones_they_do() -> None:
    said = set(re.findall(r"bench/(\w+)\.py", RUN)) - set(
        re.findall(r"bench/(\w+)\.py", commands(RUN))
    )
    run_directly = set(re.findall(r"bench/(\w+)\.py", commands(RUN)))
    imported = set().union(*(reached_from(n) for n in run_directly)) - run_directly
    assert said == imported


def test_every_result_file_is_written_by_a_step_of_run_sh() -> None:
    """A result no step writes cannot be measured again, so its table would stay stale."""
    written = set(re.findall(r"^\s*measure(?:_quality)? (\S+\.json) ", RUN, re.M))
    read = {f for t in report.TABLES for f in t.files}
    assert read <= written, sorted(read - written)
