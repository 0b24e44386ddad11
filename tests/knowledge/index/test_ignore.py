"""Ignore rules (.gitignore nested + negations, info/exclude, global excludes, .fiskignore,
exclude globs): the walk agrees with `git ls-files`, and an ignored file leaves the index."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fisk_ls.knowledge import IgnoreRules, index_project, resolve_settings, update_paths
from fisk_ls.knowledge.index.walk import walk
from tests.support.git_repo import git, needs_git, touch


def walked(root: Path, rules: IgnoreRules | None, store: Path | None = None) -> list[str]:
    notes: list[str] = []
    found = walk(root, store or root / ".no-store", notes.append, rules)
    return sorted(Path(c.path).relative_to(root).as_posix() for c in found)


def git_files(repo: Path) -> list[str]:
    out = git(repo, "ls-files", "--cached", "--others", "--exclude-standard", "-z")
    return sorted(p for p in out.split("\0") if p.endswith((".md", ".txt")))


FILES = [
    "README.md",
    "docs/guide.md",
    "docs/site/index.md",
    "docs/site/keep/important.md",
    "build/out.md",
    "notes/a.txt",
    "notes/draft.md",
    "notes/deep/draft.md",
    "notes/deep/keep.md",
    "vendor/lib/README.md",
    "local-only.md",
    "x.global.md",
    "api/generated/ref.md",
    "api/manual.md",
]


@needs_git
def test_walk_matches_git_ls_files(tmp_path: Path, git_env: Path) -> None:
    repo = tmp_path / "repo"
    touch(repo, *FILES)
    git(repo, "init", "-q")
    (repo / ".gitignore").write_text("build/\n/vendor\n*.txt\n", encoding="utf-8")
    (repo / "docs" / ".gitignore").write_text("site/\n!site/keep/\n", encoding="utf-8")
    (repo / "notes" / ".gitignore").write_text("draft.md\n!a.txt\n", encoding="utf-8")
    (repo / "notes" / "deep" / ".gitignore").write_text("!draft.md\n", encoding="utf-8")
    (repo / "api" / ".gitignore").write_text("generated\n", encoding="utf-8")
    (repo / ".git" / "info" / "exclude").write_text("local-only.md\n", encoding="utf-8")
    expected = git_files(repo)
    assert "x.global.md" not in expected and "local-only.md" not in expected  # the setup works
    assert "notes/a.txt" in expected and "notes/deep/draft.md" in expected
    assert walked(repo, IgnoreRules.for_project(repo)) == expected
    assert walked(repo, None) == sorted(FILES)  # no rules: everything (the old behaviour)


@needs_git
def test_project_below_the_repository_top_uses_the_repositorys_rules(
    tmp_path: Path, git_env: Path
) -> None:
    repo = tmp_path / "repo"
    touch(repo, *FILES)
    git(repo, "init", "-q")
    (repo / ".gitignore").write_text("docs/site/\n", encoding="utf-8")
    rules = IgnoreRules.for_project(repo / "docs")
    assert walked(repo / "docs", rules) == ["guide.md"]
    assert rules.ignored(repo / "docs" / "site" / "keep" / "important.md")


@needs_git
def test_fiskignore_and_exclude_layer_over_git(tmp_path: Path, git_env: Path) -> None:
    repo = tmp_path / "repo"
    touch(repo, *FILES)
    git(repo, "init", "-q")
    (repo / ".gitignore").write_text("build/\n", encoding="utf-8")
    (repo / ".fiskignore").write_text("!build/\napi/\n", encoding="utf-8")
    rules = IgnoreRules.for_project(repo, exclude=["notes/**/draft.md", "*.txt"])
    got = walked(repo, rules)
    assert "build/out.md" in got  # re-included by .fiskignore
    assert not any(p.startswith("api/") for p in got)
    assert "notes/draft.md" not in got and "notes/deep/draft.md" not in got
    assert "notes/a.txt" not in got and "notes/deep/keep.md" in got


def test_outside_git_only_fiskignore_and_exclude_apply(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    touch(root, "a.md", "b.md", "c.md")
    (root / ".gitignore").write_text("a.md\n", encoding="utf-8")
    (root / ".fiskignore").write_text("b.md\n", encoding="utf-8")
    assert walked(root, IgnoreRules.for_project(root, exclude=["c.md"])) == ["a.md"]


def test_ignore_files_are_reread_when_they_change(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    touch(root, "a.md")
    rules = IgnoreRules.for_project(root)
    assert not rules.ignored(root / "a.md")
    (root / ".fiskignore").write_text("a.md\n", encoding="utf-8")
    assert rules.ignored(root / "a.md")
    assert rules.ignored("a.md") and not rules.ignored(tmp_path / "elsewhere.md")


@needs_git
def test_an_ignored_file_that_was_indexed_is_removed_by_the_next_run(
    tmp_path: Path, git_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    touch(repo, "docs/guide.md", "site/index.md", "gen/ref.md")
    git(repo, "init", "-q")
    monkeypatch.setenv("FISK_AI_STORE_DIR", str(tmp_path / "stores"))
    s = resolve_settings(cwd=repo)
    assert index_project(s).added == 3
    (repo / ".gitignore").write_text("site/\n", encoding="utf-8")
    assert index_project(s).removed == 1
    (repo / ".fiskignore").write_text("gen/\n", encoding="utf-8")
    stats = update_paths(s, [repo / "gen" / "ref.md"])  # what didSave / the watcher call
    assert stats.removed == 1
    again = index_project(s)
    assert again.added == again.removed == again.updated == 0


@needs_git
@pytest.mark.parametrize(
    "patterns",
    [
        ["/*/**/"],
        ["doc/**/"],
        ["**/gen/"],
        ["**/", "!gen/", "!doc/"],
        ["doc/**", "!doc/gen/"],
        ["a/**/doc.md"],
        ["*", "!*/", "!*.md"],
    ],
)
def test_globstars_agree_with_git(tmp_path: Path, git_env: Path, patterns: list[str]) -> None:
    repo = tmp_path / "repo"
    touch(repo, *TREE)
    git(repo, "init", "-q")
    (repo / ".gitignore").write_text("\n".join(patterns) + "\n", encoding="utf-8")
    assert walked(repo, IgnoreRules.for_project(repo)) == git_files(repo)


# -- the same verdicts as git for generated pattern sets -------------------------------------

NAMES = st.sampled_from(["a", "b", "doc", "gen"])
SEGMENT = st.one_of(NAMES, st.just("*"), st.just("**"), NAMES.map(lambda n: n + "*"))
PATTERN = st.builds(
    lambda neg, anchor, segs, slash: (
        ("!" if neg else "") + ("/" if anchor else "") + "/".join(segs) + ("/" if slash else "")
    ),
    st.booleans(),
    st.booleans(),
    st.lists(SEGMENT, min_size=1, max_size=3),
    st.booleans(),
)
TREE = [
    "a.md",
    "b.md",
    "doc/a.md",
    "doc/gen/b.md",
    "gen/doc/a.md",
    "a/b/doc.md",
    "b/gen.md",
]


@pytest.mark.slow
@needs_git
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    top=st.lists(PATTERN, max_size=4),
    nested=st.lists(PATTERN, max_size=3),
)
def test_generated_patterns_agree_with_git(
    tmp_path_factory: pytest.TempPathFactory, git_env: Path, top: list[str], nested: list[str]
) -> None:
    repo = tmp_path_factory.mktemp("gen")
    touch(repo, *TREE)
    git(repo, "init", "-q")
    (repo / ".gitignore").write_text("\n".join(top) + "\n", encoding="utf-8")
    (repo / "doc" / ".gitignore").write_text("\n".join(nested) + "\n", encoding="utf-8")
    assert walked(repo, IgnoreRules.for_project(repo)) == git_files(repo), (top, nested)
