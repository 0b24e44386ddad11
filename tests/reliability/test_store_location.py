"""Where the store lives: reached through a symlinked parent it works, a link at the store folder
itself is refused, and a folder another user owns or others may write is refused with the fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fisk_ls.knowledge import Knowledge, KnowledgeError, index, resolve_settings
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
        Knowledge(settings).search("backpressure")
    broken = [c for c in run_checks(settings) if c.broken]
    assert [c.name for c in broken] == ["store folder"] and expected in broken[0].detail
