"""The watch loop (checklist 48–51): a watcher feeding the core update queue."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from fisk_ls.knowledge import (
    IndexStats,
    Knowledge,
    KnowledgeError,
    SearchRequest,
    Settings,
    index_project,
    open_writer,
)
from fisk_ls.knowledge.index.hooks import QueueHooks
from fisk_ls.knowledge.index.watcher import Watcher
from fisk_ls.knowledge.project import Project
from tests.support.waiting import HANG_GUARD, wait_until


def docs(settings: Settings) -> set[str]:
    kb = Knowledge(settings)
    try:
        return {s.path for s in kb.sources() or []}
    finally:
        kb.close()


def test_debounce_minimum(settings: Settings) -> None:  # 48
    with pytest.raises(KnowledgeError, match="at least 100ms"):
        Project(settings).watch(debounce=0.01, stop=threading.Event())


def test_only_missing_roots(settings: Settings, tmp_path: Path) -> None:  # 50
    with pytest.raises(KnowledgeError, match="none of the knowledge paths exist"):
        Project(settings).watch((tmp_path / "nope",), debounce=0.2, stop=threading.Event())


class Runner:
    """``watch`` on a thread; ``ready`` once its first run is done and the watches are set."""

    def __init__(self, settings: Settings, roots: tuple[Path, ...] | None = None) -> None:
        self.stop = threading.Event()
        self.ready = threading.Event()
        self.warnings: list[str] = []
        self.updates: list[set[Path]] = []
        self.locked = threading.Event()
        self.errors: list[BaseException] = []
        hooks = QueueHooks(
            on_locked=self.locked.set,
            on_update=lambda paths, stats: self.updates.append(paths),
        )

        def initial(stats: IndexStats) -> None:
            self.ready.set()

        def run() -> None:
            try:
                with Project(settings) as project:
                    project.watch(
                        roots,
                        debounce=0.2,
                        stop=self.stop,
                        hooks=hooks,
                        on_initial=initial,
                        on_warn=self.warnings.append,
                    )
            except BaseException as exc:  # pragma: no cover - surfaced by close()
                self.errors.append(exc)
                self.ready.set()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        assert self.ready.wait(HANG_GUARD)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(HANG_GUARD)
        assert not self.thread.is_alive() and not self.errors


@pytest.mark.slow
def test_create_change_delete(settings: Settings, project: Path) -> None:  # 49, 51
    index_project(settings)
    runner = Runner(settings, (*settings.roots, project / "missing"))
    try:
        assert any("missing" in w for w in runner.warnings)
        (project / "new.md").write_text("# New\n\nwombat facts\n")
        wait_until(lambda: "new.md" in docs(settings))
        (project / "new.md").write_text("# New\n\nquokka facts\n")
        wait_until(lambda: bool(Knowledge(settings).search(SearchRequest("quokka")).hits))
        (project / "new.md").unlink()
        wait_until(lambda: "new.md" not in docs(settings))
        (project / "docs").rename(project / "moved")
        wait_until(
            lambda: "moved/design.md" in docs(settings) and "docs/design.md" not in docs(settings)
        )
    finally:
        runner.close()


@pytest.mark.slow
def test_burst_is_coalesced(settings: Settings, project: Path) -> None:
    runner = Runner(settings)
    try:
        for i in range(50):
            (project / f"burst{i}.md").write_text(f"# B{i}\n")
        wait_until(lambda: sum(p.startswith("burst") for p in docs(settings)) == 50)
        assert len(runner.updates) < 10
    finally:
        runner.close()


@pytest.mark.slow
def test_locked_changes_are_kept(settings: Settings, project: Path) -> None:
    runner = Runner(settings)
    try:
        with open_writer(settings.store_dir):
            (project / "late.md").write_text("# Late\n\nnot lost\n")
            (project / "notes.txt").unlink()
            assert runner.locked.wait(HANG_GUARD)
        wait_until(lambda: "late.md" in docs(settings) and "notes.txt" not in docs(settings))
    finally:
        runner.close()


@pytest.mark.slow
def test_the_watcher_reports_only_documents_and_folders(
    settings: Settings, project: Path, tmp_path: Path
) -> None:
    seen: list[set[Path]] = []
    got = threading.Event()

    def changed(paths: set[Path]) -> None:
        seen.append(paths)
        got.set()

    watcher = Watcher(settings.roots, settings.store_dir, changed)
    watcher.start()
    try:
        assert watcher.ready.wait(HANG_GUARD)
        (project / "image.png").write_bytes(b"\x89PNG")
        (project / "node_modules").mkdir()
        (project / "node_modules" / "x.md").write_text("# vendored\n")
        (project / "kept.md").write_text("# Kept\n")
        assert got.wait(HANG_GUARD)
        wait_until(lambda: any(project / "kept.md" in s for s in seen))
        everything = set().union(*seen)
        assert project / "image.png" not in everything
        assert project / "node_modules" / "x.md" not in everything
    finally:
        watcher.stop()


@pytest.mark.slow
def test_an_edited_info_exclude_reaches_the_queue(settings: Settings, project: Path) -> None:
    """``.git/info/exclude`` lies in a folder the watcher skips and is no document; the watcher
    still hands it over, and the queue's full run prunes what it now ignores (issue 16)."""
    (project / ".git" / "info").mkdir(parents=True)
    runner = Runner(settings)
    try:
        assert "docs/design.md" in docs(settings)
        (project / ".git" / "info" / "exclude").write_text("docs/\n")
        wait_until(lambda: "docs/design.md" not in docs(settings))
    finally:
        runner.close()
