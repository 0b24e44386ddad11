"""The core's Project: one object owns a project's reader, writer side and embedder, and turns
SQLite and OS errors into StoreError so no front end meets apsw."""

from __future__ import annotations

import errno
import threading
from pathlib import Path

import apsw
import pytest

from fisk_ls.knowledge import (
    KnowledgeError,
    Project,
    SearchRequest,
    Settings,
    StoreError,
    index_project,
    store_error,
)
from tests.support.waiting import HANG_GUARD


def test_read_turns_sqlite_and_os_errors_into_store_errors(settings: Settings) -> None:
    def corrupt(kn: object) -> None:
        raise apsw.CorruptError("database disk image is malformed")

    def full(kn: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    with Project(settings) as project:
        with pytest.raises(StoreError, match=r"is damaged.*--reindex") as damaged:
            project.read(corrupt)
        assert isinstance(damaged.value.__cause__, apsw.CorruptError)
        with pytest.raises(StoreError, match="the disk is full"):
            project.read(full)


def test_other_exceptions_pass_through(settings: Settings) -> None:
    def bug(kn: object) -> None:
        raise ValueError("a bug, not the store")

    with Project(settings) as project, pytest.raises(ValueError, match="a bug"):
        project.read(bug)
    assert store_error(ValueError("x")) is None
    assert isinstance(store_error(PermissionError(errno.EACCES, "denied")), StoreError)


def test_open_finds_the_project_and_reads_it(project: Path, store_base: Path) -> None:
    with Project.open(cwd=project, store_base=store_base) as opened:
        assert opened.root == project.resolve()
        stats = opened.index()
        assert stats.files > 0
        assert opened.read(lambda kn: kn.search(SearchRequest("backpressure")).hits)


def test_writer_side_runs_and_closes_with_the_project(settings: Settings) -> None:
    project = Project(settings)
    project.updates(watch=True)
    assert project.watcher is not None
    first = project.start()
    assert first is not None and first.result(timeout=HANG_GUARD).files > 0
    assert project.read(lambda kn: kn.stats().built)
    assert project.covers(settings.roots[0] / "x.md")
    project.close()
    assert project.queue is None and project.watcher is None and not project.busy
    project.close()  # twice is harmless


def test_watch_checks_its_arguments_before_building_anything(
    settings: Settings, tmp_path: Path
) -> None:
    with Project(settings) as project:
        with pytest.raises(KnowledgeError, match="at least 100ms"):
            project.watch(debounce=0.01, stop=threading.Event())
        with pytest.raises(KnowledgeError, match="none of the knowledge paths exist"):
            project.watch((tmp_path / "nope",), stop=threading.Event())
        assert project.queue is None


def test_index_before_updates_is_the_cli_run(settings: Settings) -> None:
    index_project(settings)
    with Project(settings) as project:
        assert project.remove(["docs/design.md"]) is not None
        assert "docs/design.md" not in {s.path for s in project.read(lambda kn: kn.sources()) or []}
