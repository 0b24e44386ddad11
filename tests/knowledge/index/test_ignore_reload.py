"""Issue 16: an edited .gitignore / .fiskignore / .git/info/exclude takes effect at once, not
at the next full run someone asks for. Through the core update queue (what `watch` and the
language server share), with the queue's clock in the test's hand: nothing here waits on time,
only on the queue becoming idle."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from fisk_ls.knowledge import IndexStats, Knowledge, Settings, index_project, resolve_settings
from fisk_ls.knowledge.index.queue import UpdateQueue
from tests.support.waiting import HANG_GUARD


class ManualClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def sources(settings: Settings) -> set[str]:
    kb = Knowledge(settings)
    try:
        return {s.path for s in kb.sources() or []}
    finally:
        kb.close()


def write(path: Path, text: str) -> None:
    """Write ``text`` and give the file a new mtime (the rules re-read on size or mtime)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before + 10**9, before + 10**9))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git" / "info").mkdir(parents=True)
    write(root / "docs" / "guide.md", "# Guide\n\nThe puffin guide.\n")
    write(root / "build" / "out.md", "# Built\n\nThe puffin build output.\n")
    write(root / "vendor" / "lib.md", "# Vendor\n\nThe puffin vendor notes.\n")
    return root


@pytest.fixture
def settings(repo: Path, tmp_path: Path) -> Settings:
    return resolve_settings(cwd=repo, store_base=tmp_path / "stores")


@pytest.fixture
def queue(settings: Settings) -> Iterator[UpdateQueue]:
    q = UpdateQueue(settings, clock=ManualClock(), delay=1.0, max_delay=5.0)
    q.start()
    q.request_full().result(timeout=HANG_GUARD)
    yield q
    q.stop()


def settle(q: UpdateQueue) -> None:
    assert q.wait_idle(HANG_GUARD), "the queue did not become idle"


ALL = {"docs/guide.md", "build/out.md", "vendor/lib.md"}


@pytest.mark.parametrize("ignore_file", [".gitignore", ".fiskignore", ".git/info/exclude"])
def test_an_edited_ignore_file_prunes_and_restores(
    queue: UpdateQueue, settings: Settings, repo: Path, ignore_file: str
) -> None:
    assert sources(settings) == ALL
    rules = repo / ignore_file
    write(rules, "build/\n")
    assert queue.add([rules]) == 1  # the clock never moves: the full run does not wait on it
    settle(queue)
    assert sources(settings) == ALL - {"build/out.md"}
    assert queue.rules.ignored(repo / "build" / "out.md")  # the watcher's filter follows too

    write(rules, "build/\nvendor/\n!build/\n")  # a negation brings build/ back
    queue.add([rules])
    settle(queue)
    assert sources(settings) == ALL - {"vendor/lib.md"}
    assert not queue.rules.ignored(repo / "build" / "out.md")

    rules.unlink()
    queue.add([rules])
    settle(queue)
    assert sources(settings) == ALL


def test_a_nested_ignore_file_counts_and_one_in_an_ignored_folder_does_not(
    queue: UpdateQueue, settings: Settings, repo: Path
) -> None:
    nested = repo / "docs" / ".gitignore"
    write(nested, "guide.md\n")
    assert queue.rules.is_source(nested)
    queue.add([nested])
    settle(queue)
    assert "docs/guide.md" not in sources(settings)

    write(repo / ".gitignore", "vendor/\n")
    queue.add([repo / ".gitignore"])
    settle(queue)
    inside_ignored = repo / "vendor" / "pkg" / ".gitignore"
    assert not queue.rules.is_source(inside_ignored)
    assert not queue.rules.is_source(repo / "docs" / "gitignore.md")


def test_a_change_during_a_full_run_brings_another_run_after_it(
    settings: Settings, repo: Path
) -> None:
    """The running run walked with the old rules; joining it would lose the change."""
    entered, release = threading.Event(), threading.Event()
    runs: list[int] = []

    def slow_index(s: Settings, roots: Iterable[Path] | None = None, **kw: Any) -> IndexStats:
        runs.append(len(runs))
        if len(runs) == 1:
            entered.set()
            assert release.wait(HANG_GUARD)
        return index_project(s, roots, **kw)

    q = UpdateQueue(settings, clock=ManualClock())
    q.run_index = slow_index
    q.start()
    try:
        first = q.request_full()
        assert entered.wait(HANG_GUARD)
        write(repo / ".fiskignore", "vendor/\n")
        q.add([repo / ".fiskignore"])
        assert q.request_full() is first  # a plain request still joins the running run
        release.set()
        first.result(timeout=HANG_GUARD)
        settle(q)
        assert len(runs) == 2
        assert sources(settings) == ALL - {"vendor/lib.md"}
    finally:
        release.set()
        q.stop()


def test_ignore_files_above_the_root_count_only_on_the_way_down(tmp_path: Path) -> None:
    """A project in a subfolder of a repository: the repository's top .gitignore applies to it,
    a sibling folder's does not."""
    from fisk_ls.knowledge.index.ignore import IgnoreRules

    repo = tmp_path / "repo"
    (repo / ".git" / "info").mkdir(parents=True)
    (repo / "docs").mkdir()
    rules = IgnoreRules.for_project(repo / "docs")
    assert rules.is_source(repo / ".gitignore")
    assert rules.is_source(repo / "docs" / ".fiskignore")
    assert rules.is_source(repo / ".git" / "info" / "exclude")
    assert not rules.is_source(repo / "src" / ".gitignore")
    assert not rules.is_source(tmp_path / ".gitignore")  # above the repository
