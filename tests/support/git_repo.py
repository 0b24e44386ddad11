"""Real git repositories for the ignore-rule tests: a private global config (no user settings
leak in), files written with a line naming them, git run in the repository.

Registered as a plugin (``pytest_plugins`` in tests/conftest.py), so ``git_env`` is a fixture
everywhere.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

GIT = shutil.which("git")
needs_git = pytest.mark.skipif(GIT is None, reason="git is not installed")


def git(repo: Path, *args: str, stdin: str | None = None, check: bool = True) -> str:
    """git's output for ``args`` run in ``repo`` (CalledProcessError when it fails and
    ``check``: ``check-ignore`` exits 1 when no path is ignored)."""
    return subprocess.run(
        ["git", *args], cwd=repo, check=check, capture_output=True, text=True, input=stdin
    ).stdout


def touch(root: Path, *rels: str) -> None:
    """Write each file (a markdown line naming it), making its folders."""
    for rel in rels:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {rel}\n\nsome words about {rel}\n", encoding="utf-8")


@pytest.fixture
def git_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private global git config naming a global excludes file (no user config leaks in)."""
    home = tmp_path / "home"
    home.mkdir()
    excludes = home / "global-ignore"
    excludes.write_text("*.global.md\n", encoding="utf-8")
    config = home / "gitconfig"
    config.write_text(f"[core]\n\texcludesFile = {excludes}\n", encoding="utf-8")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("HOME", str(home))
    return home
