"""The single writer: its read-write connection's transactions, generations and the manifest.

``open_writer`` (opening.py) takes the cross-process lock, opens (creating if needed) the
database and makes a ``Writer`` of it, which makes sure the live generation's tables exist. Index
runs (index/runs.py) write through it, one
savepoint per file inside batches of files. Every commit goes through ``Writer.commit``, which
first moves the chunks written since the last commit into the full-text index in one statement
per generation (schema.fts_flush_sql), so readers never see a chunk without its FTS row.
``begin_rebuild``/``finish_rebuild`` build a whole new generation beside the live one and switch
over atomically.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from . import schema
from .connect import (
    RECOVERY,
    close_untouched,
    load_vec,
    scalar,
)
from .errors import IncompleteStore
from .lock import WriterLock
from .manifest import Manifest, read_manifest
from .store_files import db_path
from .store_id import (
    check_against,
    new_store_id,
    stored_id,
    write_marker,
    write_stored_id,
)

if TYPE_CHECKING:
    import apsw

COMMITS_KEY = "commits"
"""``rag_meta`` row counting the writer's commits (see ``Writer.stamp``)."""

_GEN_TABLE = re.compile(
    r"^(?:documents|chunks|chunks_fts|chunks_vec|chunks_vocab|chunks_vq|chunks_pending|chunk_rows"
    r"|texts)_(\d+)$"
)


_PENDING_TABLE = re.compile(r"^chunks_pending_(\d+)$")
_VEC_TABLE = re.compile(r"^chunks_vec_(\d+)$")


def _generations_of(
    master: set[tuple[str, str]], pattern: re.Pattern[str] = _GEN_TABLE
) -> set[int]:
    """The generations of the tables in ``master`` (name, type) whose names match ``pattern``."""
    return {
        int(m.group(1)) for name, kind in master if kind == "table" and (m := pattern.match(name))
    }


def _pending_of(master: set[tuple[str, str]]) -> set[int]:
    return _generations_of(master, _PENDING_TABLE)


def _vec_of(master: set[tuple[str, str]]) -> set[int]:
    return _generations_of(master, _VEC_TABLE)


class Writer:
    def __init__(
        self, store_dir: Path, lock: WriterLock, conn: apsw.Connection, marker: str | None
    ) -> None:
        """``marker``: the store-id marker's id as ``open_writer`` read it (None: no marker)."""
        self.store_dir = store_dir
        self.lock = lock
        self.conn = conn
        self.vec_loaded = False
        self.recovered: str | None = None
        """Set when an unreadable store was moved aside to open this one (say where)."""
        self.set_aside: str | None = None
        """Set when a -wal from elsewhere was moved aside and the index kept (say where)."""
        self.cleared: list[str] = []
        """What the recovery removed or moved aside from the store's file names (say so)."""
        master = self._master()  # one look at the schema serves every check below
        self._pending: set[int] = _pending_of(master)
        """Generations whose FTS rows are written at commit (format 3 on); older layouts keep
        their per-row triggers until they are rebuilt."""
        self._vec: set[int] = _vec_of(master)
        """Generations that have their vector table."""
        manifest = read_manifest(conn)
        if manifest is None:
            check_against(conn, store_dir, False, marker)  # the marker says one was built here
            manifest = Manifest()
            store_id = new_store_id()
            with self.transaction():
                self._create_generation(manifest.generation)
                self._write_manifest(manifest)
                write_stored_id(conn, store_id)
            write_marker(store_dir, store_id)
        else:
            check_against(conn, store_dir, True, marker)
            self._adopt_store_id(marker)
            self._require_complete(manifest, master)
            index = schema.text_index_name(manifest.generation)
            if manifest.format_version >= 4 and (index, "index") not in master:
                with self.transaction():  # a store made before the index existed
                    conn.execute(schema.text_index_ddl(manifest.generation))
        self.manifest = manifest
        self._drop_stale_generations(master)

    def _adopt_store_id(self, marker: str | None) -> None:
        """A store built before ids existed gets one; a lost marker is written again."""
        inside = stored_id(self.conn)
        if inside is None:
            inside = new_store_id()
            with self.transaction():
                write_stored_id(self.conn, inside)
        if marker is None:
            write_marker(self.store_dir, inside)

    def _require_complete(self, manifest: Manifest, master: set[tuple[str, str]]) -> None:
        """Never go on (and so never drop other generations) unless the generation the
        manifest names exists whole."""
        present = {name for name, _ in master}
        needed = schema.required(manifest.generation, manifest.hybrid, manifest.format_version)
        missing = [t for t in needed if t not in present]
        if missing:
            raise IncompleteStore(
                f"the knowledge index {db_path(self.store_dir)} names generation "
                f"{manifest.generation} but its tables ({', '.join(missing)}) are missing (a "
                f"foreign or stale -wal replayed?); nothing was dropped; {RECOVERY}"
            )

    def forget_notes(self) -> None:
        """The notes of the open (recovered, set aside, cleared) were told: a writer kept open
        for the next pass (session.py) does not tell them again."""
        self.recovered = self.set_aside = None
        self.cleared = []

    @property
    def outdated(self) -> bool:
        """The live generation has an older layout: the next index run rebuilds it."""
        return self.manifest.format_version < schema.FORMAT_VERSION

    # -- lifecycle ---------------------------------------------------------------------------

    def close(self, *, untouched: bool = False) -> None:
        """Close the connection and release the lock. ``untouched``: without the checkpoint
        (a store replaced under a kept writer keeps its files as found: session.py)."""
        try:
            if untouched:
                close_untouched(self.conn)
            else:
                with contextlib.suppress(Exception):
                    self.conn.execute("PRAGMA optimize")
                self.conn.close()
        finally:
            self.lock.release()

    def __enter__(self) -> Writer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[apsw.Connection]:
        """One atomic unit of writes; rolled back (and the error re-raised) on failure.

        Inside a batch (or another transaction) it is a SAVEPOINT, so one file's failure undoes
        only that file.
        """
        if self.conn.in_transaction:
            self.conn.execute("SAVEPOINT unit")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK TO unit")
                self.conn.execute("RELEASE unit")
                self._sync_pending()
                raise
            self.conn.execute("RELEASE unit")
            return
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
            self.flush_fts()
            self.stamp()
        except BaseException:
            self.conn.execute("ROLLBACK")
            self._sync_pending()
            raise
        self.conn.execute("COMMIT")

    def _sync_pending(self) -> None:
        """Which generations have a pending table and a vector table, read again (after a
        rollback may have undone a generation's creation or drop)."""
        master = self._master()
        self._pending, self._vec = _pending_of(master), _vec_of(master)

    def flush_fts(self) -> None:
        """Move every chunk written since the last commit into its generation's FTS table (one
        ``INSERT … SELECT`` per generation: FTS5's cost is per statement, not per row). Called
        inside the transaction just before it commits. Nothing pending costs one probe (the two
        statements would make an empty commit a write: ~3 ms each on a 150k-chunk index)."""
        for generation in sorted(self._pending):
            probe = f"SELECT 1 FROM {schema.names(generation).pending} LIMIT 1"
            if self.conn.execute(probe).fetchone() is None:
                continue
            for sql in schema.fts_flush_sql(generation):
                self.conn.execute(sql)

    def commit(self) -> None:
        """Flush the pending FTS rows, stamp, and commit the open transaction."""
        self.flush_fts()
        self.stamp()
        self.conn.execute("COMMIT")

    def stamp(self) -> None:
        """Inside every write transaction, just before COMMIT: count the commit in ``rag_meta``.

        So each commit rewrites the page that holds the store id, and any ``-wal`` a fisk-ls
        writer leaves carries its store's id: replayed onto another store's database it
        replaces that page and the id check refuses the store (``ForeignStore``) instead of
        serving, or writing over, a mix of two indexes."""
        self.conn.execute(
            "INSERT INTO rag_meta(key, value) VALUES (?, '1') "
            "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
            (COMMITS_KEY,),
        )

    @contextlib.contextmanager
    def batch(self, max_units: int = 256, max_seconds: float = 0.25) -> Iterator[Batch]:
        """Group many small transactions into a few commits (FTS5 writes one segment per commit).

        Every file's writes stay atomic (a savepoint each); a commit happens at least every
        ``max_seconds`` so the lock window stays short and readers see progress.
        """
        b = Batch(self, max_units, max_seconds)
        try:
            yield b
        finally:
            b.commit()  # also on failure: each finished unit is complete on its own

    @contextlib.contextmanager
    def text_index_after(self, generation: int) -> Iterator[None]:
        """Write a first build's rows without the index on ``chunk_rows.text_id``
        (schema.text_index_ddl) and make it once over all of them at the end, however the run
        ends. Kept up row by row it cost about 0.4 s of CPU for the PowerShell docs (copies of a
        page point at bodies stored long before, so its entries do not arrive in order); made
        at the end, 0.04 s (bench/tuning.md, "Cold index: the body index after the rows"). Only
        deleting a body reads it, and a first build deletes none; readers never do. Should
        making it fail (the error that ended the run, say a full disk), the next writer to open
        the store makes it."""
        with self.transaction() as conn:
            conn.execute(f"DROP INDEX IF EXISTS {schema.text_index_name(generation)}")
        try:
            yield
        finally:
            with contextlib.suppress(Exception), self.transaction() as conn:
                conn.execute(schema.text_index_ddl(generation))

    # -- generations -------------------------------------------------------------------------

    def ensure_vec(self) -> None:
        if not self.vec_loaded:
            load_vec(self.conn)
            self.vec_loaded = True

    def _master(self) -> set[tuple[str, str]]:
        """(name, type) of everything in the schema: one read of ``sqlite_master``."""
        rows = self.conn.execute("SELECT name, type FROM sqlite_master")
        return {(str(name), str(kind)) for name, kind in rows}

    def _generations(self, master: set[tuple[str, str]] | None = None) -> set[int]:
        return _generations_of(master if master is not None else self._master())

    def _create_generation(self, generation: int) -> None:
        self.conn.execute(schema.generation_ddl(generation))
        self._pending.add(generation)

    def _drop_generation(self, generation: int) -> None:
        master = self._master()
        if (schema.names(generation).vec, "table") in master:
            self.ensure_vec()
        views = frozenset(name for name, kind in master if kind == "view")
        for sql in schema.drop_generation_sql(generation, views):
            self.conn.execute(sql)
        self._pending.discard(generation)
        self._vec.discard(generation)

    def _drop_stale_generations(self, master: set[tuple[str, str]]) -> None:
        """Remove what a killed rebuild left behind."""
        stale = self._generations(master) - {self.manifest.generation}
        if stale:
            with self.transaction():
                for g in sorted(stale):
                    self._drop_generation(g)

    def _write_manifest(self, manifest: Manifest) -> None:
        self.conn.executemany(
            "INSERT INTO rag_meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
            list(manifest.rows().items()),
        )

    def set_manifest(self, manifest: Manifest) -> None:
        with self.transaction():
            self._write_manifest(manifest)
        self.manifest = manifest

    def create_vec_table(self, generation: int, dimension: int) -> None:
        self.ensure_vec()
        self.conn.execute(schema.vec_ddl(generation, dimension))
        self._vec.add(generation)

    def has_vec_table(self, generation: int) -> bool:
        """``generation`` has its vector table (known without reading the schema again)."""
        return generation in self._vec

    def begin_rebuild(self) -> int:
        """Create the next generation's (empty) tables; return its number."""
        new = max(self._generations() | {self.manifest.generation}) + 1
        with self.transaction():
            self._create_generation(new)
        return new

    def finish_rebuild(self, generation: int, manifest: Manifest) -> None:
        """Switch readers to ``generation`` atomically, then drop the old one."""
        old = self.manifest.generation
        new_manifest = manifest._replace(
            generation=generation, format_version=schema.FORMAT_VERSION
        )
        with self.transaction():
            self._write_manifest(new_manifest)
        self.manifest = new_manifest
        with self.transaction():
            self._drop_generation(old)
        self.vacuum()

    def abandon_rebuild(self, generation: int) -> None:
        with contextlib.suppress(Exception), self.transaction():
            self._drop_generation(generation)

    def reset(self) -> tuple[int, int]:
        """Delete every document and chunk; return how many there were."""
        docs, chunks = self.counts()
        new = self.begin_rebuild()
        self.finish_rebuild(new, Manifest())
        return docs, chunks

    def vacuum(self) -> None:
        """Give freed pages back to the file system."""
        with contextlib.suppress(Exception):
            self.conn.execute("PRAGMA incremental_vacuum").fetchall()
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

    def counts(self, generation: int | None = None) -> tuple[int, int]:
        n = self.manifest.tables if generation is None else schema.names(generation)
        docs = scalar(self.conn, f"SELECT count(*) FROM {n.documents}")
        chunks = scalar(self.conn, f"SELECT count(*) FROM {n.rows}")
        return int(docs), int(chunks)


FLUSH_SECONDS = 0.25
"""A batch that commits less often than this still moves its pending chunks into the full-text
index this often (``Writer.flush_fts``, inside the transaction): its commits stay short, so the
chunking worker is not left waiting on a long one."""


class Batch:
    def __init__(self, writer: Writer, max_units: int, max_seconds: float) -> None:
        self.writer = writer
        self.max_units = max_units
        self.max_seconds = max_seconds
        self._units = 0
        self._started = 0.0
        self._flushed = 0.0

    def tick(self) -> None:
        """Call after each unit: opens a transaction if needed, commits when one is due."""
        conn = self.writer.conn
        if not conn.in_transaction:
            conn.execute("BEGIN IMMEDIATE")
            self._units = 0
            self._started = self._flushed = time.monotonic()
            return
        self._units += 1
        now = time.monotonic()
        if self._units >= self.max_units or now - self._started >= self.max_seconds:
            self.writer.commit()
        elif now - self._flushed >= FLUSH_SECONDS:
            self.writer.flush_fts()
            self._flushed = now

    def commit(self) -> None:
        """Commit now (before slow work such as embedding that must not hold a transaction)."""
        if self.writer.conn.in_transaction:
            self.writer.commit()
