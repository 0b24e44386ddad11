"""The writer session (session.py): one project's passes open the store once and re-check only
what can have changed; a store replaced, reset or written by another writer in between is
opened again with every check, and nothing is ever written into the replaced files."""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest

from fisk_ls.knowledge import (
    IndexLocked,
    Project,
    QueueHooks,
    Settings,
    StoreError,
    index_project,
    open_writer,
    reset,
    update_paths,
)
from fisk_ls.knowledge import store_id as store_id_module
from fisk_ls.knowledge.session import WriterSession
from fisk_ls.knowledge.store_files import db_path

HANG_GUARD = 30.0


@pytest.fixture
def session(settings: Settings) -> Iterator[WriterSession]:
    index_project(settings)
    kept = WriterSession(settings.store_dir)
    yield kept
    kept.close()


def save(settings: Settings, session: WriterSession, path: Path, text: str) -> None:
    path.write_text(text)
    update_paths(settings, [path], session=session)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class Spy:
    """Counts what the store's opening re-proves: connections, marker reads, schema reads."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.connections = self.marker_reads = self.schema_reads = 0
        apsw.connection_hooks.append(self._hook)
        real = store_id_module.read_regular  # type: ignore[attr-defined]  # the name store_id calls

        def read(path: Path, *args: object, **kwargs: object) -> bytes:
            self.marker_reads += 1
            return real(path, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(store_id_module, "read_regular", read)

    def _hook(self, conn: apsw.Connection) -> None:
        self.connections += 1

        def trace(cursor: apsw.Cursor, sql: str, bindings: object) -> bool:
            self.schema_reads += "sqlite_master" in sql
            return True

        conn.exec_trace = trace

    def counts(self) -> tuple[int, int, int]:
        return self.connections, self.marker_reads, self.schema_reads

    def close(self) -> None:
        apsw.connection_hooks.remove(self._hook)


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> Iterator[Spy]:
    counting = Spy(monkeypatch)
    yield counting
    counting.close()


def test_a_save_after_the_first_reproves_nothing(
    settings: Settings, project: Path, spy: Spy
) -> None:
    """Through the update queue, as the language server and ``watch`` save: the first pass
    opens the store (its probe and the writer's connection, the marker read once, the schema
    read once and the probe's look); every later one opens nothing and reads neither."""
    index_project(settings)
    done = threading.Event()
    with Project(settings) as p:
        p.updates(QueueHooks(on_update=lambda paths, stats: done.set()), watch=False)
        p.start(initial=False)
        seen = []
        for n in range(3):
            before = spy.counts()
            done.clear()
            (project / "notes.txt").write_text(f"Notes, edit {n}.\n")
            p.add([project / "notes.txt"])
            assert done.wait(HANG_GUARD)
            assert p.queue is not None and p.queue.wait_idle(HANG_GUARD)
            seen.append(tuple(a - b for a, b in zip(spy.counts(), before, strict=True)))
    assert seen == [(2, 1, 2), (0, 0, 0), (0, 0, 0)]


def test_the_lock_is_free_between_passes(settings: Settings, session: WriterSession) -> None:
    save(settings, session, settings.project_root / "notes.txt", "first\n")
    with open_writer(settings.store_dir), pytest.raises(IndexLocked), session.open():
        pass  # another process's turn: the session waits for its own
    save(settings, session, settings.project_root / "notes.txt", "second\n")
    assert session.opened == 1


def test_another_writers_commit_reopens_the_store(
    settings: Settings, session: WriterSession
) -> None:
    save(settings, session, settings.project_root / "notes.txt", "first\n")
    index_project(settings, rebuild=True)  # a new generation, written by another writer
    save(settings, session, settings.project_root / "notes.txt", "second\n")
    assert session.opened == 2
    with open_writer(settings.store_dir) as w:
        assert w.manifest.generation == 2 and w.counts()[0] == 3


def test_a_store_moved_aside_is_never_written_again(
    settings: Settings, session: WriterSession
) -> None:
    """``reset --force`` of a damaged store elsewhere moves the files aside; the kept writer's
    connection still points at them, and closes without touching them."""
    save(settings, session, settings.project_root / "notes.txt", "first\n")
    path = db_path(settings.store_dir)
    aside = path.with_name("moved.db")
    os.replace(path, aside)
    for suffix in ("-wal", "-shm"):
        if os.path.lexists(f"{path}{suffix}"):
            os.replace(f"{path}{suffix}", f"{aside}{suffix}")
    before = {p.name: digest(p) for p in settings.store_dir.glob("moved.db*")}
    assert reset(settings, force=True) is None  # nothing at the database's name now
    save(settings, session, settings.project_root / "notes.txt", "second\n")
    assert session.opened == 2
    assert {p.name: digest(p) for p in settings.store_dir.glob("moved.db*")} == before
    with open_writer(settings.store_dir) as w:
        assert w.counts() == (1, 1)  # the new store holds the one saved file


def test_a_deleted_store_is_made_again(settings: Settings, session: WriterSession) -> None:
    save(settings, session, settings.project_root / "notes.txt", "first\n")
    shutil.rmtree(settings.store_dir)
    save(settings, session, settings.project_root / "notes.txt", "second\n")
    assert session.opened == 2
    with open_writer(settings.store_dir) as w:
        assert w.counts() == (1, 1)


def test_a_marker_of_another_store_is_refused(settings: Settings, session: WriterSession) -> None:
    save(settings, session, settings.project_root / "notes.txt", "first\n")
    marker = settings.store_dir / "knowledge.id"
    other = marker.with_name("other.id")
    other.write_text("f" * 32 + "\n")
    os.replace(other, marker)
    before = digest(db_path(settings.store_dir))
    with pytest.raises(StoreError, match="does not belong to this store"):
        save(settings, session, settings.project_root / "notes.txt", "second\n")
    assert digest(db_path(settings.store_dir)) == before


def test_an_error_inside_closes_the_kept_writer(settings: Settings, session: WriterSession) -> None:
    with pytest.raises(RuntimeError), session.open():
        raise RuntimeError("a pass failed")
    save(settings, session, settings.project_root / "notes.txt", "after\n")
    assert session.opened == 2
