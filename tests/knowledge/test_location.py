"""Project root discovery (one rule for every front end) and the store kept across agent.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest

from fisk_ls.knowledge.location import find_root, resolve_settings, zero_config_store

CONFIG = "harness:\n  knowledge:\n    enabled: true\n"


def test_nearest_agent_yaml_then_repository_top_then_the_folder(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    deep = repo / "docs" / "a" / "b"
    deep.mkdir(parents=True)
    assert find_root(deep).root == deep.resolve()  # nothing above: the folder itself
    (repo / ".git").mkdir()
    assert find_root(deep).root == repo.resolve() and find_root(deep).config is None
    (repo / "docs" / "agent.yaml").write_text(CONFIG)
    found = find_root(deep)
    assert found.root == (repo / "docs").resolve()
    assert found.config == (repo / "docs" / "agent.yaml").resolve()
    assert find_root(repo).root == repo.resolve()  # above the agent.yaml: the repository


def test_an_agent_yaml_above_the_repository_is_not_used(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").write_text(CONFIG)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "docs").mkdir()
    assert find_root(repo / "docs").root == repo.resolve()
    assert find_root(repo / "docs").config is None


def test_a_worktree_git_file_marks_the_top(tmp_path: Path) -> None:
    (tmp_path / "wt" / "docs").mkdir(parents=True)
    (tmp_path / "wt" / ".git").write_text("gitdir: /elsewhere/.git/worktrees/wt\n")
    assert find_root(tmp_path / "wt" / "docs").root == (tmp_path / "wt").resolve()


def test_no_search_above_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / "notes").mkdir(parents=True)
    (tmp_path / "agent.yaml").write_text(CONFIG)  # above $HOME: nobody's project
    monkeypatch.setenv("HOME", str(home))
    assert find_root(home / "notes").root == (home / "notes").resolve()


def test_store_key_follows_the_root(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "docs").mkdir()
    base = tmp_path / "base"
    a = resolve_settings(cwd=repo, store_base=base)
    b = resolve_settings(cwd=repo / "docs", store_base=base)
    assert a.store_dir == b.store_dir == zero_config_store(repo.resolve(), base)
    assert "git repository" in b.root_reason and str(base) in b.store_reason


def test_agent_yaml_added_later_keeps_the_cached_index(tmp_path: Path) -> None:
    base = tmp_path / "base"
    root = tmp_path / "p"
    root.mkdir()
    cached = zero_config_store(root.resolve(), base)
    cached.mkdir(parents=True)
    (cached / "knowledge.db").write_bytes(b"")
    (root / "agent.yaml").write_text(CONFIG)
    s = resolve_settings(cwd=root, store_base=base)
    assert s.store_dir == cached and "before agent.yaml was added" in s.store_reason
    (root / "agent.yaml").write_text(CONFIG + "    directory: idx\n")
    s = resolve_settings(cwd=root, store_base=base)
    assert s.store_dir == base / "idx" and "harness.knowledge.directory" in s.store_reason


def test_without_markers_a_subfolder_finds_the_index_of_a_folder_above(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A docs tree with neither agent.yaml nor .git, indexed at its top: a subfolder uses that
    index (the nearest), not a second one of its own; nothing above $HOME counts."""
    from fisk_ls.knowledge import index_project

    home = tmp_path / "home"
    docs = home / "docs"
    deep = docs / "guide" / "part"
    deep.mkdir(parents=True)
    (deep / "a.md").write_text("# A\n\nalbatross\n")
    monkeypatch.setenv("HOME", str(home))
    base = tmp_path / "base"
    alone = resolve_settings(cwd=deep, store_base=base)
    assert alone.project_root == deep.resolve()  # nothing indexed yet: the folder itself
    index_project(resolve_settings(cwd=docs, store_base=base))
    found = resolve_settings(cwd=deep, store_base=base)
    assert found.project_root == docs.resolve()
    assert found.store_dir == zero_config_store(docs.resolve(), base)
    assert "nearest folder above with an index" in found.root_reason
    index_project(resolve_settings(cwd=docs / "guide", store_base=base, discover=False))
    assert resolve_settings(cwd=deep, store_base=base).project_root == (docs / "guide").resolve()
    # A marker wins over an index: a repository below the indexed folder is its own project.
    (deep / ".git").mkdir()
    assert resolve_settings(cwd=deep, store_base=base).project_root == deep.resolve()


def test_an_index_above_home_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fisk_ls.knowledge import index_project

    home = tmp_path / "home"
    (home / "notes").mkdir(parents=True)
    (tmp_path / "x.md").write_text("# X\n")
    base = tmp_path / "base"
    index_project(resolve_settings(cwd=tmp_path, store_base=base, discover=False))
    monkeypatch.setenv("HOME", str(home))
    notes = resolve_settings(cwd=home / "notes", store_base=base)
    assert notes.project_root == (home / "notes").resolve()
