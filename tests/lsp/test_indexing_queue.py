"""The per-project indexing queue: coalescing, polite locking, joining full runs, stopping."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from fisk_ls.knowledge import (
    IndexStats,
    Knowledge,
    Settings,
    open_writer,
    update_paths,
)
from fisk_ls.lsp import indexing
from fisk_ls.lsp.indexing import IndexQueue, QueueHooks


def wait_until(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"condition not met within {timeout}s")
        time.sleep(0.02)


@pytest.fixture
def passes(monkeypatch: pytest.MonkeyPatch) -> list[set[Path]]:
    """Records the batch of every update pass."""
    seen: list[set[Path]] = []

    def recording(settings: Settings, paths: Iterable[Path], **kwargs: Any) -> IndexStats:
        batch = set(paths)
        seen.append(batch)
        return update_paths(settings, batch, **kwargs)

    monkeypatch.setattr(indexing, "update_paths", recording)
    return seen


@pytest.fixture
def queue(settings: Settings) -> Iterator[IndexQueue]:
    q = IndexQueue(settings)
    q.start()
    q.request_full().result(timeout=30)
    yield q
    q.stop()


def hits(settings: Settings, query: str) -> list[str]:
    knowledge = Knowledge(settings)
    try:
        return [h.citation for h in knowledge.search(query).hits]
    finally:
        knowledge.close()


def test_a_burst_is_one_pass_over_just_those_files(
    queue: IndexQueue, settings: Settings, project: Path, passes: list[set[Path]]
) -> None:
    paths = []
    for i in range(30):
        path = project / "burst" / f"n{i}.md"
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"# N{i}\n\nThe gannet colony, note {i}.\n")
        paths.append(path)
        queue.add([path])
    wait_until(lambda: not queue.busy)
    assert passes == [set(paths)]
    assert len(hits(settings, "gannet")) == 5


def test_paths_outside_the_roots_are_ignored(settings: Settings, tmp_path: Path) -> None:
    q = IndexQueue(settings.with_overrides(roots=(settings.project_root / "docs",)))
    assert q.add([settings.project_root / "notes.txt", tmp_path / "elsewhere.md"]) == 0
    assert q.add([settings.project_root / "docs" / "design.md"]) == 1


def test_a_locked_store_keeps_changes_and_retries(
    queue: IndexQueue, settings: Settings, project: Path
) -> None:
    locked: list[bool] = []
    queue.hooks = QueueHooks(on_locked=lambda: locked.append(True))
    path = project / "notes.txt"
    with open_writer(settings.store_dir):
        path.write_text("Notes about the puffin, written while another writer runs.\n")
        queue.add([path])
        wait_until(lambda: bool(locked))
        assert queue.busy
        assert hits(settings, "puffin") == []
    wait_until(lambda: hits(settings, "puffin") == ["notes.txt#0"])
    wait_until(lambda: not queue.busy)


def test_a_second_full_run_joins_the_running_one(settings: Settings) -> None:
    started = threading.Event()
    release = threading.Event()

    class Slow(indexing.RunReporter):
        def on_plan(self, files: int) -> None:
            started.set()
            release.wait(10)

    q = IndexQueue(settings, QueueHooks(reporter=Slow))
    q.start()
    try:
        first = q.request_full()
        started.wait(10)
        assert q.request_full() is first
        rebuild = q.request_full(rebuild=True)
        assert rebuild is not first
        assert q.request_full() is first
        assert q.request_full(rebuild=True) is rebuild
        release.set()
        assert first.result(10).files == rebuild.result(10).files == 3
    finally:
        release.set()
        q.stop()


def test_stop_cancels_and_joins(settings: Settings) -> None:
    q = IndexQueue(settings)
    q.start()
    q.stop(timeout=5)
    assert not q._thread.is_alive()
    assert q.request_full().cancelled() or not q._thread.is_alive()
