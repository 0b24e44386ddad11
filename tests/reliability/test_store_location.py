"""Where the store lives: reached through a symlinked parent it works, a link at the store folder
itself is refused, and a folder another user owns or others may write is refused with the fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fisk_ls.knowledge import Knowledge, KnowledgeError, SearchRequest, index, resolve_settings
from fisk_ls.knowledge.doctor import run_checks

NOBODY = 65534


def cli(cwd: Path, store_base: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fisk_ls.cli", "knowledge", *args, "--json"],
        cwd=cwd,
        env={**os.environ, "FISK_AI_STORE_DIR": str(store_base)},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_store_reached_through_a_symlinked_parent_works(project: Path, tmp_path: Path) -> None:
    """FISK_AI_STORE_DIR (or ~/.cache) through a link broke every command with "unable to open
    database file"."""
    real = tmp_path / "real-cache"
    real.mkdir()
    linked = tmp_path / "cache-link"
    linked.symlink_to(real)
    for command in (("index",), ("search", "backpressure"), ("stats",), ("doctor",)):
        out = cli(project, linked / "stores", *command)
        assert out.returncode == 0, (command, out.stdout, out.stderr)
    hits = json.loads(cli(project, linked / "stores", "search", "backpressure").stdout)
    assert hits["results"][0]["path"] == "docs/design.md"
    assert list((real / "stores").iterdir())  # the store is in the real folder


def test_link_at_the_store_folder_itself_is_refused_plainly(project: Path, tmp_path: Path) -> None:
    base = tmp_path / "stores"
    settings = resolve_settings(cwd=project, store_base=base)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    base.mkdir()
    settings.store_dir.symlink_to(elsewhere)
    out = cli(project, base, "index")
    assert out.returncode == 1
    error = json.loads(out.stdout.strip())["error"]
    assert "refusing to follow the symlink at" in error and str(settings.store_dir) in error


@pytest.fixture
def as_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("changing a folder's owner needs root")


@pytest.mark.parametrize("how", ["other owner", "world writable"])
def test_store_folder_others_control_is_refused(
    project: Path, tmp_path: Path, how: str, request: pytest.FixtureRequest
) -> None:
    """A store folder pre-created by another user with mode 0777 was written into (doctor only
    warned "0777 (want 0700)"), and that user could swap the database under it."""
    base = tmp_path / "stores"
    settings = resolve_settings(cwd=project, store_base=base)
    index(settings)
    if how == "other owner":
        request.getfixturevalue("as_root")
        os.chown(settings.store_dir, NOBODY, NOBODY)
        expected = "belongs to another user"
    else:
        os.chmod(settings.store_dir, 0o777)
        expected = f"chmod 700 {settings.store_dir}"
    for command in (("index",), ("search", "backpressure")):
        out = cli(project, base, *command)
        assert out.returncode == 1, (command, out.stdout, out.stderr)
        assert expected in json.loads(out.stdout.strip())["error"]
    with pytest.raises(KnowledgeError, match=expected):
        Knowledge(settings).search(SearchRequest("backpressure"))
    broken = [c for c in run_checks(settings) if c.broken]
    assert [c.name for c in broken] == ["store folder"] and expected in broken[0].detail


def _configure_store(project: Path, directory: Path | str) -> None:
    (project / "agent.yaml").write_text(f"harness:\n  knowledge:\n    directory: {directory}\n")


def test_a_folder_of_other_files_is_never_taken_for_the_store(
    project: Path, tmp_path: Path
) -> None:
    """harness.knowledge.directory naming the docs folder (or, as root, a 0755 system folder)
    got knowledge.* written among its files."""
    _configure_store(project, project / "docs")
    before = sorted(p.name for p in (project / "docs").iterdir())
    for command in (("index",), ("index", "--reindex")):
        out = cli(project, tmp_path / "unused", *command)
        assert out.returncode == 1, (command, out.stdout, out.stderr)
        error = json.loads(out.stdout.strip())["error"]
        assert "already holds other files and no store" in error, error
        assert "harness.knowledge.directory" in error, error
    assert cli(project, tmp_path / "unused", "reset", "--force").returncode == 0  # nothing to do
    assert sorted(p.name for p in (project / "docs").iterdir()) == before
    settings = resolve_settings(project / "agent.yaml")
    broken = [c for c in run_checks(settings) if c.broken]
    assert [c.name for c in broken] == ["store folder"], broken


def test_an_empty_folder_made_beforehand_becomes_the_store(project: Path, tmp_path: Path) -> None:
    store = tmp_path / "made-by-hand"
    store.mkdir(mode=0o755)
    os.chmod(store, 0o755)
    _configure_store(project, store)
    out = cli(project, tmp_path / "unused", "index")
    assert out.returncode == 0, (out.stdout, out.stderr)
    assert (store / "knowledge.db").is_file()
    assert os.stat(store).st_mode & 0o777 == 0o700
    (store / "a note of the owner's.txt").write_text("kept\n")  # a store stays one
    assert cli(project, tmp_path / "unused", "index").returncode == 0


def test_folders_the_store_creates_are_private_whatever_the_umask(
    project: Path, tmp_path: Path
) -> None:
    """A store base created under umask 000 was 0777 (only the store folder itself was fixed)."""
    base = tmp_path / "a" / "b" / "stores"
    old = os.umask(0)
    try:
        settings = resolve_settings(cwd=project, store_base=base)
        index(settings)
    finally:
        os.umask(old)
    made = [settings.store_dir, *settings.store_dir.parents][:4]
    assert made[-1] == tmp_path / "a"
    assert [oct(os.stat(d).st_mode & 0o777) for d in made] == [oct(0o700)] * 4
