"""Every store fault: a clear one-line message (JSON with --json), nothing lost, and a recovery
that works (``index --reindex`` and ``reset --force`` move an unusable store aside)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import apsw
import pytest

from fisk_ls.knowledge import (
    Knowledge,
    KnowledgeError,
    SearchRequest,
    Settings,
    index_project,
    resolve_settings,
    update_paths,
)
from fisk_ls.knowledge.doctor import run_checks
from fisk_ls.knowledge.store_files import db_path
from tests.conftest import write_docs


def cli(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FISK_AI_STORE_DIR": str(settings.store_dir.parent)}
    return subprocess.run(
        [sys.executable, "-m", "fisk_ls.cli", "knowledge", *args],
        cwd=settings.project_root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def assert_one_line_json_error(out: subprocess.CompletedProcess[str]) -> str:
    assert out.returncode == 1, (out.stdout, out.stderr)
    assert "Traceback" not in out.stderr, out.stderr
    (line,) = out.stdout.splitlines()
    error = json.loads(line)["error"]
    assert "\n" not in error
    return str(error)


def _truncate(path: Path) -> None:
    with path.open("r+b") as fh:
        fh.truncate(path.stat().st_size // 3)


def _garbage(path: Path) -> None:
    path.write_bytes(b"this is not an SQLite database at all\n" * 200)


def _corrupt_page(path: Path) -> None:
    size = path.stat().st_size
    with path.open("r+b") as fh:
        for offset in range(4096 * 2, size, 4096 * 3):  # leave the header page, hit the rest
            fh.seek(offset)
            fh.write(os.urandom(4096))


DAMAGE = {"truncated": _truncate, "not sqlite": _garbage, "corrupt pages": _corrupt_page}


def damaged_store(settings: Settings, how: str) -> Path:
    index_project(settings)
    path = db_path(settings.store_dir)
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    DAMAGE[how](path)
    return path


@pytest.mark.parametrize("how", list(DAMAGE))
@pytest.mark.parametrize(
    "command",
    [("search", "backpressure"), ("index",), ("rm", "notes.txt"), ("reset",), ("stats",)],
    ids=lambda c: c[0],
)
def test_damaged_store_gives_one_line_json_errors(
    settings: Settings, how: str, command: tuple[str, ...]
) -> None:
    damaged_store(settings, how)
    out = cli(settings, *command, "--json")
    if how == "corrupt pages" and out.returncode == 0:
        return  # the pages this command read happened to be intact: an answer, not a trace
    error = assert_one_line_json_error(out)
    if command[0] != "reset":
        assert "--reindex" in error or "reset --force" in error, error


@pytest.mark.parametrize("how", list(DAMAGE))
@pytest.mark.parametrize("recovery", [("index", "--reindex"), ("reset", "--force")])
def test_reindex_and_reset_force_always_recover(
    settings: Settings, how: str, recovery: tuple[str, ...]
) -> None:
    path = damaged_store(settings, how)
    before = path.read_bytes()
    out = cli(settings, *recovery, "--json")
    assert out.returncode == 0, (out.stdout, out.stderr)
    report = json.loads(out.stdout)
    (note,) = [n for n in report["notes"] if "moved to" in n]
    aside = Path(note.split("moved to ", 1)[1].split(" and ", 1)[0])
    assert aside.read_bytes() == before  # nothing lost: the damaged file is kept aside
    if recovery[0] == "index":
        hits = Knowledge(settings).search(SearchRequest("backpressure")).hits
        assert hits and hits[0].path == "docs/design.md"
    assert not [c for c in run_checks(settings) if c.broken]


def test_manifest_naming_missing_tables_drops_nothing(settings: Settings) -> None:
    index_project(settings)
    path = db_path(settings.store_dir)
    conn = apsw.Connection(str(path))
    conn.execute("UPDATE rag_meta SET value = '7' WHERE key = 'generation'")
    conn.close()
    with pytest.raises(KnowledgeError, match=r"nothing was dropped.*--reindex"):
        index_project(settings)
    conn = apsw.Connection(str(path))
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
    assert {"documents_1", "chunks_1", "chunks_fts_1"} <= tables  # the real tables survive
    doctor = [c for c in run_checks(settings) if c.broken]
    assert doctor and "--reindex" in doctor[0].detail
    stats = index_project(settings, rebuild=True)
    assert any("moved to" in n for n in stats.notes)
    assert Knowledge(settings).search(SearchRequest("backpressure")).hits


def test_manifest_naming_a_generation_without_its_triggers_drops_nothing(
    settings: Settings,
) -> None:
    """Generation 2's tables exist but not the triggers that keep its full-text index in step
    (a rebuild cut short, a stale -wal): the writer refuses instead of dropping generation 1."""
    from fisk_ls.knowledge import schema

    index_project(settings)
    path = db_path(settings.store_dir)
    conn = apsw.Connection(str(path))
    conn.execute(schema.generation_ddl(2))
    conn.execute("DROP TRIGGER chunk_rows_2_ai")
    conn.execute("UPDATE rag_meta SET value = '2' WHERE key = 'generation'")
    conn.close()
    with pytest.raises(KnowledgeError, match=r"chunk_rows_2_ai.*nothing was dropped.*--reindex"):
        index_project(settings)
    conn = apsw.Connection(str(path))
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
    assert set(schema.required(1, hybrid=False)) <= names  # generation 1 is all there
    doctor = [c for c in run_checks(settings) if c.broken]
    assert doctor and "chunk_rows_2_ai" in doctor[0].detail and "--reindex" in doctor[0].detail


def _second_store(tmp_path: Path, store_base: Path) -> Settings:
    other = tmp_path / "other"
    other.mkdir()
    write_docs(other, {"other.md": "# Other\n\nnothing about backpressure here\n"})
    return resolve_settings(cwd=other, store_base=store_base)


def test_database_from_another_store_is_refused(
    settings: Settings, tmp_path: Path, store_base: Path
) -> None:
    index_project(settings)
    other = _second_store(tmp_path, store_base)
    index_project(other)
    assert other.store_dir != settings.store_dir
    shutil.copyfile(db_path(other.store_dir), db_path(settings.store_dir))
    with pytest.raises(KnowledgeError, match="does not belong to this store"):
        Knowledge(settings).search(SearchRequest("backpressure"))
    with pytest.raises(KnowledgeError, match="does not belong to this store"):
        index_project(settings)
    broken = [c for c in run_checks(settings) if c.broken]
    assert broken and broken[0].name == "store id"
    stats = index_project(settings, rebuild=True)
    assert any("moved to" in n for n in stats.notes)
    assert Knowledge(settings).search(SearchRequest("backpressure")).hits


def _leave_a_wal(settings: Settings, write: Callable[[], object]) -> Path:
    """Run ``write`` (a fisk-ls write) while a reader pins a snapshot, so its commits stay in
    the store's -wal (the checkpoint on close cannot pass the reader); return a copy of it."""
    path = db_path(settings.store_dir)
    reader = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM rag_meta").fetchall()
    write()
    wal = Path(f"{path}-wal")
    assert wal.stat().st_size > 0
    copy = path.parent / "left.wal"
    shutil.copyfile(wal, copy)
    reader.close()
    return copy


def _plain_sqlite_wal(tmp_path: Path) -> Path:
    """The -wal of an ordinary (not fisk-ls) SQLite database in WAL mode."""
    path = tmp_path / "plain.db"
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT)")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    reader = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM notes").fetchall()
    conn.execute("CREATE TABLE more(x)")
    conn.executemany("INSERT INTO notes(body) VALUES (?)", [("text " * 50,)] * 200)
    copy = tmp_path / "plain.wal"
    shutil.copyfile(f"{path}-wal", copy)
    reader.close()
    conn.close()
    return copy


def _other_stores_wal(settings: Settings, tmp_path: Path, store_base: Path) -> Path:
    """A -wal that another store's writer left (an index run adding a file, nothing touching
    the manifest)."""
    other = _second_store(tmp_path, store_base)
    index_project(other)
    (other.project_root / "new.md").write_text("# New\n\n" + "fresh words\n" * 50)
    return _leave_a_wal(other, lambda: update_paths(other, [other.project_root / "new.md"]))


@pytest.mark.parametrize("source", ["another store", "a plain SQLite database"])
def test_foreign_wal_is_moved_aside_and_the_index_kept(
    settings: Settings, tmp_path: Path, store_base: Path, source: str
) -> None:
    """A -wal from elsewhere put beside this store's database is never replayed over it:
    search and doctor refuse it naming the fix and change nothing; the next index run moves
    the -wal aside unread (a one-line note says where) and keeps the old index. A plain SQLite
    database's -wal made the store read as "not built" (doctor exited 0) and the next index
    run checkpointed it over knowledge.db and rebuilt from scratch; another store's served its
    chunks before every commit stamped the store id's page."""
    index_project(settings)
    before_sources = [s.path for s in Knowledge(settings).sources() or []]
    if source == "another store":
        foreign = _other_stores_wal(settings, tmp_path, store_base)
    else:
        foreign = _plain_sqlite_wal(tmp_path)
    path = db_path(settings.store_dir)
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(foreign, Path(f"{path}-wal"))
    before = (path.read_bytes(), Path(f"{path}-wal").read_bytes())

    with pytest.raises(KnowledgeError, match=r"does not belong.*moves the -wal aside"):
        Knowledge(settings).search(SearchRequest("backpressure"))
    broken = [c for c in run_checks(settings) if c.broken]
    assert [c.name for c in broken] == ["store id"]
    assert "`fisk-ai knowledge index`" in broken[0].detail
    assert (path.read_bytes(), Path(f"{path}-wal").read_bytes()) == before

    stats = index_project(settings)
    (note,) = [n for n in stats.notes if "-wal" in n]
    assert "\n" not in note and "the index was kept" in note
    aside = Path(note.split("moved to ", 1)[1].split(" unread", 1)[0])
    assert aside.read_bytes() == before[1]
    assert stats.added == 0 and stats.skipped == len(before_sources)
    assert [s.path for s in Knowledge(settings).sources() or []] == before_sources
    assert (
        Knowledge(settings).search(SearchRequest("backpressure")).hits[0].path == "docs/design.md"
    )
    assert not [c for c in run_checks(settings) if c.broken]


def test_database_and_wal_from_elsewhere_are_refused_whole(
    settings: Settings, tmp_path: Path, store_base: Path
) -> None:
    """When the database file itself is not this store's, nothing is set aside by an ordinary
    run: it is refused, unchanged, and --reindex moves both aside and rebuilds."""
    index_project(settings)
    foreign = _other_stores_wal(settings, tmp_path, store_base)
    other = resolve_settings(cwd=tmp_path / "other", store_base=store_base)
    path = db_path(settings.store_dir)
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(db_path(other.store_dir), path)
    shutil.copyfile(foreign, Path(f"{path}-wal"))
    before = (path.read_bytes(), Path(f"{path}-wal").read_bytes())
    with pytest.raises(KnowledgeError, match=r"does not belong to this store.*nothing was changed"):
        index_project(settings)
    assert (path.read_bytes(), Path(f"{path}-wal").read_bytes()) == before
    stats = index_project(settings, rebuild=True)
    (note,) = [n for n in stats.notes if "moved to" in n]
    aside = Path(note.split("moved to ", 1)[1].split(" and ", 1)[0])
    assert (aside.read_bytes(), Path(f"{aside}-wal").read_bytes()) == before
    assert Knowledge(settings).search(SearchRequest("backpressure")).hits


@contextlib.contextmanager
def tmpfs(where: Path, size: str) -> Iterator[Path]:
    where.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(where)],
        capture_output=True,
    )
    if mounted.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root); read-only and disk-full media")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_disk_full_is_one_line(project: Path, tmp_path: Path) -> None:
    big = {f"docs/big{i}.md": f"# Big {i}\n\n" + f"word{i} filler text " * 4000 for i in range(60)}
    write_docs(project, big)
    with tmpfs(tmp_path / "small", "400k") as base:
        settings = resolve_settings(cwd=project, store_base=base)
        out = cli(settings, "index", "--json")
        error = assert_one_line_json_error(out)
        assert "disk is full" in error


def test_read_only_media_can_be_searched_and_doctored(project: Path, tmp_path: Path) -> None:
    with tmpfs(tmp_path / "media", "64m") as base:
        settings = resolve_settings(cwd=project, store_base=base)
        index_project(settings)
        ro = subprocess.run(["mount", "-o", "remount,ro", str(base)], capture_output=True)
        if ro.returncode != 0:
            pytest.skip("cannot remount read-only here")
        assert not Path(f"{db_path(settings.store_dir)}-shm").exists()
        kb = Knowledge(settings)
        hits = kb.search(SearchRequest("backpressure")).hits
        kb.close()
        assert hits and hits[0].path == "docs/design.md"
        checks = run_checks(settings)
        assert not [c for c in checks if c.broken], checks
        lock = next(c for c in checks if c.name == "writer lock")
        assert lock.ok
        out = cli(settings, "index", "--json")
        assert "read-only" in assert_one_line_json_error(out).lower()


def test_rm_is_all_or_nothing(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    from fisk_ls.knowledge import remove
    from fisk_ls.knowledge.index import runs

    index_project(settings)
    before = {s.path for s in Knowledge(settings).sources() or []}
    real = runs.Indexer._delete
    calls = []

    def failing(self: runs.Indexer, keys: list[str], tables: object) -> None:
        calls.append(keys)
        real(self, keys[:1], tables)  # type: ignore[arg-type]
        raise apsw.FullError("database or disk is full")

    monkeypatch.setattr(runs.Indexer, "_delete", failing)
    with pytest.raises(apsw.FullError):
        remove(settings, ["docs", "notes.txt"], cwd=settings.project_root)
    assert calls
    assert {s.path for s in Knowledge(settings).sources() or []} == before


def test_doctor_never_writes_or_waits_on_a_writer(settings: Settings) -> None:
    from fisk_ls.knowledge import open_writer

    index_project(settings)
    with open_writer(settings.store_dir) as w:
        w.conn.execute("BEGIN IMMEDIATE")  # a writer paused mid-transaction
        w.conn.execute(f"DELETE FROM {w.manifest.tables.rows} WHERE id = 1")
        checks = run_checks(settings)
        w.conn.execute("ROLLBACK")
    assert not [c for c in checks if c.broken], checks
    assert any(c.name == "writer lock" and "a writer is active" in c.detail for c in checks)


@pytest.mark.parametrize("how", list(DAMAGE))
def test_readers_turn_damage_into_knowledge_errors(settings: Settings, how: str) -> None:
    """The language server, the agent tool and MCP convert KnowledgeError at their edge; a
    damaged page met mid-search must arrive as one (naming the recovery), not a raw apsw error."""
    from fisk_ls.agent.tool import KnowledgeTool

    damaged_store(settings, how)
    kb = Knowledge(settings)
    try:
        for call in (
            lambda: kb.search(SearchRequest("backpressure")),
            lambda: kb.sources(),
            lambda: KnowledgeTool(settings, kb).call({"query": "retries backoff"}),
        ):
            try:
                call()
            except KnowledgeError as exc:
                assert "--reindex" in str(exc) or "reset --force" in str(exc), exc
    finally:
        kb.close()


def _plant(store_dir: Path, name: str, kind: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Replace the store file ``name`` by a FIFO, a folder holding a file, or a socket."""
    path = store_dir / name
    if path.is_dir():
        shutil.rmtree(path)
    path.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
        (path / "kept.txt").write_text("someone's file\n")
    else:
        import socket

        monkeypatch.chdir(store_dir)  # a socket's path must be short: bind the bare name
        with socket.socket(socket.AF_UNIX) as sock:
            sock.bind(name)
    return path


@pytest.mark.parametrize("kind", ["fifo", "folder", "socket"])
@pytest.mark.parametrize(
    "name",
    ["knowledge.db", "knowledge.db-wal", "knowledge.db-shm", "knowledge.lock", "knowledge.id"],
)
def test_anything_but_a_file_at_a_store_name_names_the_fix_and_reset_force_clears_it(
    settings: Settings, name: str, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A FIFO at knowledge.db-shm or a folder at knowledge.db made every command, the recovery
    included, say "disk I/O error" and name no way out."""
    index_project(settings)
    planted = _plant(settings.store_dir, name, kind, monkeypatch)
    for command in (("search", "backpressure"), ("index",), ("reset",), ("stats",)):
        out = cli(settings, *command, "--json")
        if out.returncode == 0 and name == "knowledge.lock" and command[0] in ("search", "stats"):
            continue  # readers never open the lock file
        error = assert_one_line_json_error(out)
        assert str(planted) in error and "reset --force" in error, (command, error)
        assert "disk I/O error" not in error, error
    out = cli(settings, "reset", "--force", "--json")
    assert out.returncode == 0, (out.stdout, out.stderr)
    notes = json.loads(out.stdout)["notes"]
    assert any(str(planted) in n for n in notes), notes
    if kind == "folder":  # moved aside whole, never deleted
        (aside,) = settings.store_dir.glob(f"{name}.damaged-*")
        assert (aside / "kept.txt").read_text() == "someone's file\n"
    assert cli(settings, "index", "--json").returncode == 0
    hits = Knowledge(settings).search(SearchRequest("backpressure")).hits
    assert hits and hits[0].path == "docs/design.md"
    assert not [c for c in run_checks(settings) if c.broken]


@pytest.mark.parametrize("name", ["knowledge.db", "knowledge.db-shm", "knowledge.lock"])
def test_reindex_clears_anything_but_a_file_at_a_store_name(
    settings: Settings, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    index_project(settings)
    planted = _plant(settings.store_dir, name, "fifo", monkeypatch)
    doctor = [c for c in run_checks(settings) if c.broken]
    assert doctor and any("reset --force" in c.detail for c in doctor), doctor
    out = cli(settings, "index", "--reindex", "--json")
    assert out.returncode == 0, (out.stdout, out.stderr)
    assert any(f"{planted} was a FIFO" in n for n in json.loads(out.stdout)["notes"])
    hits = Knowledge(settings).search(SearchRequest("backpressure")).hits
    assert hits and hits[0].path == "docs/design.md"


def test_a_database_deleted_by_hand_is_built_afresh(settings: Settings) -> None:
    """Its knowledge.id left beside it, the new empty database (which holds the vector cache
    table too) was refused as another store's."""
    index_project(settings)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db_path(settings.store_dir)}{suffix}").unlink(missing_ok=True)
    assert (settings.store_dir / "knowledge.id").exists()
    stats = index_project(settings)
    assert stats.added == 3 and not stats.notes
    assert Knowledge(settings).search(SearchRequest("backpressure")).hits
