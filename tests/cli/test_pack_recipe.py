"""docs/packs.md's CI recipe runs as written: the shell recipe builds a pack in a git checkout,
the GitHub Actions workflow runs exactly those commands, and a teammate's copy adopts the pack
(with one file changed) as the page says."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO, write_docs

PAGE = REPO / "docs" / "packs.md"


def blocks(kind: str) -> list[str]:
    text = PAGE.read_text(encoding="utf-8")
    return [m.group(1) for m in re.finditer(rf"^```{kind}\n(.*?)^```", text, re.M | re.S)]


def recipe() -> list[str]:
    """The commands of the first shell block (the shell recipe)."""
    return [line.strip() for line in blocks("sh")[0].splitlines() if line.strip()]


def workflow() -> dict[str, object]:
    loaded: dict[str, object] = yaml.safe_load(blocks("yaml")[0])
    return loaded


def test_the_workflow_runs_the_shell_recipe() -> None:
    steps = workflow()["jobs"]["pack"]["steps"]  # type: ignore[index]
    runs = [s["run"].strip() for s in steps if "fisk-ai" in s.get("run", "")]
    assert runs == recipe()
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-artifact"))
    assert upload["with"]["path"] == "knowledge.pack.gz"
    assert workflow()[True]["push"]["branches"] == ["main"]  # type: ignore[index]  # YAML 1.1 "on"


def _sh(cwd: Path, command: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, (command, proc.stdout, proc.stderr)
    return proc


@pytest.mark.skipif(shutil.which("git") is None, reason="the recipe reads the commit with git")
def test_the_recipe_builds_a_pack_a_teammate_adopts(tmp_path: Path, store_base: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "fisk-ai").write_text(
        f'#!/bin/sh\nexec "{sys.executable}" -m fisk_ls.cli "$@"\n', encoding="utf-8"
    )
    (bin_dir / "fisk-ai").chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(REPO),
        "GIT_CONFIG_GLOBAL": str(tmp_path / "no-gitconfig"),
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    ci = tmp_path / "ci"
    ci.mkdir()
    write_docs(ci)
    (ci / "agent.yaml").write_text("harness:\n  knowledge:\n    enabled: true\n")
    git = ["git", "-c", "user.name=ci", "-c", "user.email=ci@example.com"]
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "docs"]):
        subprocess.run([*git, *args], cwd=ci, env=env, check=True)
    for command in recipe():
        _sh(ci, command, env)
    pack = ci / "knowledge.pack.gz"
    assert pack.is_file()
    again = tmp_path / "again.pack.gz"
    _sh(ci, f"{recipe()[-1].rsplit(' ', 1)[0]} {again}", env)
    assert again.read_bytes() == pack.read_bytes()  # the same commit gives the same pack

    mate = tmp_path / "mate"
    shutil.copytree(ci, mate, ignore=shutil.ignore_patterns("knowledge", ".git"))
    (mate / "notes.txt").write_text("Edited notes about zeppelins.\n", encoding="utf-8")
    adopt = next(line for line in blocks("sh")[1].splitlines() if line.strip())
    done = _sh(mate, adopt + " --json", env)
    assert '"adopted": {"documents": ' in done.stdout and '"differ": 1' in done.stdout
    found = _sh(mate, "fisk-ai knowledge search zeppelins --json", env)
    assert "notes.txt#0" in found.stdout


def test_a_refused_pack_is_one_line_and_the_index_keeps_answering(
    tmp_path: Path, store_base: Path
) -> None:
    import apsw

    from tests.support.cli import js, run

    root = tmp_path / "docs-project"
    root.mkdir()
    write_docs(root)
    (root / ".git").mkdir()
    run(root, "knowledge", "index")
    run(root, "knowledge", "pack", str(tmp_path / "good.pack"))
    hostile = tmp_path / "trigger.pack"
    shutil.copy(tmp_path / "good.pack", hostile)
    conn = apsw.Connection(str(hostile))
    conn.execute("CREATE TRIGGER t AFTER INSERT ON texts BEGIN SELECT 1; END")
    conn.close()
    before = js(root, "search", "backpressure")
    refused = run(root, "knowledge", "index", "--from", str(hostile), ok=1)
    errors = [line for line in refused.stderr.splitlines() if not line.startswith("lexical:")]
    assert len(errors) == 1 and "unknown trigger 't'" in errors[0], refused.stderr
    assert js(root, "search", "backpressure") == before
    adopted = js(root, "index", "--from", str(tmp_path / "good.pack"))
    assert adopted["adopted"]["current"] == adopted["files"]
