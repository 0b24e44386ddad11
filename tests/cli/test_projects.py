"""Real projects, first try (issue 16): a real `fisk-ai` process run the way people type it —
options anywhere, from a subfolder of a git repository with a .gitignore, an agent.yaml added
later, missing paths, usage errors under --json, the one top_k contract."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write_docs

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def fisk(cwd: Path, *args: str, ok: int | None = 0) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "fisk_ls.cli", *args],
        cwd=cwd,
        env=os.environ.copy(),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    if ok is not None:
        assert proc.returncode == ok, (args, proc.returncode, proc.stdout, proc.stderr)
    return proc


def one_json(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1, proc.stdout
    obj: dict[str, Any] = json.loads(lines[0])
    return obj


@pytest.fixture
def repo(tmp_path: Path, store_base: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository with docs, a build/ folder its .gitignore ignores, private git config."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    root = tmp_path / "repo"
    root.mkdir()
    write_docs(root)
    write_docs(root, {"build/html/copy.md": "# Copy\n\nbackpressure copied by the build\n"})
    (root / ".gitignore").write_text("build/\n", encoding="utf-8")
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    else:
        (root / ".git").mkdir()  # the root marker is all discovery needs
    return root


CONFIG = "harness:\n  knowledge:\n    enabled: true\n"


# 1. options where users type them ---------------------------------------------------------


@pytest.mark.parametrize(
    "shape",
    [
        pytest.param(["--config", "{c}", "knowledge", "{cmd}"], id="before-knowledge"),
        pytest.param(["knowledge", "--config", "{c}", "{cmd}"], id="after-knowledge"),
        pytest.param(["knowledge", "{cmd}", "--config", "{c}"], id="after-subcommand"),
    ],
)
def test_config_store_dir_and_json_anywhere(
    tmp_path: Path, project: Path, shape: list[str]
) -> None:
    (project / "agent.yaml").write_text(CONFIG, encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    base = tmp_path / "explicit-base"

    def args(cmd: str) -> list[str]:
        out = [a.format(c=project / "agent.yaml", cmd=cmd) for a in shape]
        where = out.index(cmd)
        return [*out[:where], "--store-dir", str(base), *out[where:]]

    fisk(elsewhere, *args("index"))
    stats = one_json(fisk(elsewhere, "--json", *args("stats")))
    assert stats["built"] and stats["documents"] == 3
    assert stats["store"].startswith(str(base)) and stats["config"] == str(project / "agent.yaml")
    stats = one_json(fisk(elsewhere, *args("stats"), "--json"))
    assert stats["documents"] == 3


def test_readme_spelling_of_global_options_runs(project: Path) -> None:
    """The exact form the MCP server prints as advice."""
    (project / "agent.yaml").write_text(CONFIG, encoding="utf-8")
    proc = fisk(project.parent, "knowledge", "index", "--config", str(project / "agent.yaml"))
    assert "indexed: added=3" in proc.stdout


# 2. from a subfolder ------------------------------------------------------------------------


def test_a_subfolder_finds_the_projects_index(repo: Path) -> None:
    fisk(repo, "knowledge", "index")
    sub = repo / "docs" / "ops"
    res = one_json(fisk(sub, "knowledge", "search", "backpressure", "--json"))
    assert res["status"] == "ok" and res["results"][0]["path"] == "docs/design.md"
    stats = one_json(fisk(sub, "knowledge", "stats", "--json"))
    assert stats["root"] == str(repo.resolve()) and "git repository" in stats["root_reason"]
    # indexing from the subfolder updates the same store, keyed by the same root
    assert one_json(fisk(sub, "knowledge", "index", "--json"))["added"] == 0


def test_nearest_agent_yaml_below_the_repository_top_wins(repo: Path) -> None:
    (repo / "docs" / "agent.yaml").write_text(CONFIG, encoding="utf-8")
    stats = one_json(fisk(repo / "docs" / "ops", "knowledge", "stats", "--json"))
    assert stats["root"] == str((repo / "docs").resolve())
    assert stats["config"] == str((repo / "docs" / "agent.yaml").resolve())


# 3. adding an agent.yaml keeps the index ------------------------------------------------------


def test_adding_agent_yaml_keeps_the_existing_index(repo: Path) -> None:
    fisk(repo, "knowledge", "index")
    before = one_json(fisk(repo, "knowledge", "stats", "--json"))
    (repo / "agent.yaml").write_text(CONFIG, encoding="utf-8")
    after = one_json(fisk(repo / "docs", "knowledge", "stats", "--json"))
    assert after["built"] and after["documents"] == before["documents"] == 3
    assert after["store"] == before["store"] and "before agent.yaml" in after["store_reason"]
    text = fisk(repo, "knowledge", "stats").stdout
    assert f"Store:     {before['store']}" in text and "before agent.yaml was added" in text
    doctor = one_json(fisk(repo, "knowledge", "doctor", "--json"))
    assert doctor["store"] == before["store"] and doctor["store_reason"] == after["store_reason"]


def test_a_new_configured_project_uses_its_own_folder(project: Path) -> None:
    (project / "agent.yaml").write_text(CONFIG, encoding="utf-8")
    stats = one_json(fisk(project, "knowledge", "stats", "--json"))
    assert stats["store"].endswith("/knowledge/fisk-ai") and not stats["built"]
    assert "no directory configured" in stats["store_reason"]


# 4. ignore files ----------------------------------------------------------------------------


@needs_git
def test_gitignored_files_are_not_indexed_and_leave_when_ignored(repo: Path) -> None:
    fisk(repo, "knowledge", "index")
    paths = [s["path"] for s in one_json(fisk(repo, "knowledge", "sources", "--json"))["sources"]]
    assert not any(p.startswith("build/") for p in paths) and "docs/design.md" in paths
    (repo / ".fiskignore").write_text("notes.txt\n", encoding="utf-8")
    assert one_json(fisk(repo, "knowledge", "index", "--json"))["removed"] == 1
    (repo / "agent.yaml").write_text(CONFIG + "    exclude: ['docs/ops/']\n", encoding="utf-8")
    res = one_json(fisk(repo / "docs", "knowledge", "index", "--json"))
    assert res["removed"] == 1  # the same store kept, the excluded folder left it
    paths = [s["path"] for s in one_json(fisk(repo, "knowledge", "sources", "--json"))["sources"]]
    assert paths == ["docs/design.md"]


# 7. small things ----------------------------------------------------------------------------


def test_a_missing_path_is_exit_1_with_its_name(project: Path) -> None:
    proc = fisk(project, "knowledge", "index", "no-such-dir", ok=1)
    assert "no-such-dir" in proc.stderr and proc.stdout == ""
    res = one_json(fisk(project, "knowledge", "index", "no-such-dir", "--json", ok=1))
    assert "no-such-dir" in res["error"]


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["knowledge", "search", "--json"], id="no-query"),
        pytest.param(["--json", "knowledge", "search"], id="json-first"),
        pytest.param(["knowledge", "search", "x", "--bogus", "--json"], id="unknown-option"),
        pytest.param(["knowledge", "bogus", "--json"], id="unknown-command"),
    ],
)
def test_usage_errors_under_json_are_one_json_object(project: Path, args: list[str]) -> None:
    proc = fisk(project, *args, ok=2)
    assert set(one_json(proc)) == {"error"}


def test_stdout_is_only_the_answer(project: Path) -> None:
    fisk(project, "knowledge", "index")
    proc = fisk(project, "knowledge", "search", "backpressure")
    assert proc.stdout.startswith("docs/design.md#") and proc.stderr.startswith("lexical:")
    proc = fisk(project, "knowledge", "sources")
    assert proc.stdout.startswith("Path") and "lexical" not in proc.stdout


@pytest.mark.parametrize("value", ["0", "100", "-1", "x"])
def test_top_k_out_of_range_is_a_usage_error_naming_the_limit(project: Path, value: str) -> None:
    proc = fisk(project, "knowledge", "search", "queue", "--top-k", value, ok=2)
    assert "from 1 to 20" in proc.stderr
    res = one_json(fisk(project, "knowledge", "search", "queue", "--top-k", value, "--json", ok=2))
    assert "--top-k" in res["error"] and "from 1 to 20" in res["error"]


def test_query_longer_than_the_contract_is_refused(project: Path) -> None:
    res = one_json(fisk(project, "knowledge", "search", "x" * 2001, "--json", ok=2))
    assert "at most 2,000 characters" in res["error"]
    assert one_json(fisk(project, "knowledge", "search", "x" * 2000, "--json"))["status"]


def test_mcp_missing_extra_message_is_a_command_that_works() -> None:
    from fisk_ls.cli.app import missing_mcp_message

    message = missing_mcp_message(ImportError("No module named 'mcp'"))
    assert f"{sys.executable} -m pip install 'mcp>=2.3,<3'" in message
    assert "pip install fisk-ls" not in message
