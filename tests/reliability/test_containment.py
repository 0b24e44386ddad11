"""Nothing outside the project is indexed or served: configured roots, path arguments, saved
paths and walked entries are resolved (symlinks included) and must stay inside the project root.
A cloned repository can carry a link such as ``docs -> /etc``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fisk_ls.knowledge import (
    Knowledge,
    SearchRequest,
    index,
    remove,
    resolve_settings,
    update_paths,
)

SECRET = "outsidesecretword"


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fisk_ls.cli", "knowledge", *args],
        cwd=cwd,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the project holding a "secret" document."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.md").write_text(f"# Secret\n\nthe {SECRET} lives here\n")
    return folder


def _served(cwd: Path) -> str:
    out = cli(cwd, "search", SECRET, "--json")
    return out.stdout + cli(cwd, "sources", "--json").stdout


def test_configured_root_that_links_outside_is_refused(
    project: Path, outside: Path, store_base: Path
) -> None:
    """``paths: [etc]`` with ``etc -> /etc`` indexed and served the outside files."""
    (project / "etc").symlink_to(outside)
    (project / "agent.yaml").write_text(
        "harness:\n  knowledge:\n    enabled: true\n    paths: [etc, docs]\n"
    )
    out = cli(project, "index", "--json")
    assert out.returncode == 1, (out.stdout, out.stderr)
    error = json.loads(out.stdout.strip())["error"]
    assert "agent.yaml: harness.knowledge.paths" in error and "outside the project root" in error
    assert "Traceback" not in out.stderr
    assert SECRET not in _served(project)


def test_path_argument_that_links_outside_is_refused(
    project: Path, outside: Path, store_base: Path
) -> None:
    (project / "docs_link").symlink_to(outside)
    out = cli(project, "index", "docs_link", "--json")
    assert out.returncode == 1, (out.stdout, out.stderr)
    assert "outside the project root" in json.loads(out.stdout.strip())["error"]
    assert SECRET not in _served(project)


def test_symlinked_root_inside_the_project_is_indexed_under_its_target(
    project: Path, store_base: Path
) -> None:
    (project / "docs_link").symlink_to(project / "docs")
    out = cli(project, "index", "docs_link", "--json")
    assert out.returncode == 0, (out.stdout, out.stderr)
    paths = [s["path"] for s in json.loads(cli(project, "sources", "--json").stdout)["sources"]]
    assert paths == ["docs/design.md", "docs/ops/runbook.md"]


def test_saved_path_through_a_link_out_of_the_project_is_not_indexed(
    project: Path, outside: Path, store_base: Path
) -> None:
    """didSave, watch and the watcher hand paths to update_paths: one reached through a folder
    link leaving the project (``docs_link/secret.md``) must not be read."""
    settings = resolve_settings(cwd=project, store_base=store_base)
    index(settings)
    (project / "docs_link").symlink_to(outside)
    stats = update_paths(settings, [project / "docs_link" / "secret.md"])
    assert stats.added == 0
    assert not Knowledge(settings).search(SearchRequest(SECRET)).hits
    removal = remove(settings, ["docs_link/secret.md"], cwd=project)
    assert removal is not None and removal.removed == []


def test_project_opened_through_a_link_keys_documents_by_the_real_root(
    project: Path, tmp_path: Path, store_base: Path
) -> None:
    """An editor that opens the project through a link saves paths under the link."""
    alias = tmp_path / "alias"
    alias.symlink_to(project)
    settings = resolve_settings(cwd=alias, store_base=store_base)
    assert settings.project_root == project.resolve()
    index(settings)
    (project / "docs" / "new.md").write_text("# New\n\nfreshly saved words\n")
    stats = update_paths(settings, [alias / "docs" / "new.md"])
    assert stats.added == 1
    assert [h.path for h in Knowledge(settings).search(SearchRequest("freshly saved")).hits] == [
        "docs/new.md"
    ]
