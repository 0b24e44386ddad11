"""Does the full-text index say what the chunks say? Checked read-only, on a private copy.

FTS5's ``integrity-check`` is spelled as an INSERT and needs the write lock, which ``doctor``
never takes on a store (it would wait on a writer, or stall one, and fails on read-only media).
And the store's index is contentless (format 4), so FTS5 cannot compare it with its text there.
So, in one read transaction of the store (WAL readers never wait on a writer), the index's shadow
tables and the chunks' current text are copied into a temporary database, under the store's
own definition made external content with that text as its content table. Then, on the copy:

1. ``integrity-check`` with rank 0: the index is internally sound;
2. ``integrity-check`` with rank 1: FTS5 tokenises every chunk's text and compares it with the
   index (a checksum over every term, column, position and row, and each row's token counts): a
   chunk whose text changed behind the triggers' back, or a row missing or left over, fails it.

Cost: one read of the index and of the chunks' text, and FTS5 re-tokenising the text (less
than indexing costs: 8 s of CPU over 60 MB of random CJK text, every bigram a new term).
Bounded by a :class:`CpuBudget`: when it is spent, the comparison stops (:class:`Stopped`, saying
what it finished) instead of running on; ``doctor --full`` gives it no budget. The store's
index may be contentless (format 4) or external content (formats 1-3): both are copied and
checked the same way.
"""

from __future__ import annotations

import itertools
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import apsw

    from .schema import Tables

SHADOWS = ("data", "idx", "config")
"""FTS5's shadow tables copied as they are (``docsize`` loses contentless_delete's ``origin``
column; there is no ``content`` one: the text lives in the chunk tables)."""

TEXT = "chunk_text"
"""The copy's content table: the chunks' current text, by chunk id."""

_BATCH = 2000
_STEPS = 1000
"""SQLite virtual-machine steps between two looks at the clock (a few milliseconds at most)."""

SOUND = "the index is internally sound"


class CpuBudget:
    """A time budget on an injected clock (the process's CPU time by default): ``passed`` once
    ``seconds`` have gone by since it was made (``None`` seconds never pass). Looked at between
    the comparison's steps and, through SQLite's progress handler, inside each statement."""

    def __init__(self, seconds: float | None, clock: Callable[[], float] = time.process_time):
        self.seconds = seconds
        self.clock = clock
        self.start = clock()
        self.done = ""
        """What the comparison has found so far ("" or ``SOUND``)."""

    def passed(self) -> bool:
        return self.seconds is not None and self.clock() - self.start >= self.seconds

    def reached(self, done: str) -> None:
        """Record what the comparison has found; stop it if the budget is spent."""
        self.done = done
        if self.passed():
            raise Stopped(self.seconds or 0.0, done)


class Stopped(Exception):
    """The budget was spent before the comparison finished; ``done`` says what it had found
    sound by then ("" for nothing yet)."""

    def __init__(self, seconds: float, done: str) -> None:
        super().__init__(f"stopped after {seconds:g} s")
        self.seconds = seconds
        self.done = done


def fts_mismatch(
    conn: apsw.Connection, tables: Tables, budget: CpuBudget | None = None
) -> str | None:
    """None when the generation's full-text index agrees with its chunks; else what differs.
    Raises :class:`Stopped` when ``budget`` is spent first.

    ``conn`` is a read-only connection to the store; it is read inside one transaction."""
    import apsw

    budget = budget or CpuBudget(None)
    c, f = tables.chunks, tables.fts
    row = conn.execute(
        "SELECT sql FROM sqlite_master WHERE name = ? AND type = 'table'", (f,)
    ).fetchone()
    create = str(row[0]) if row else None
    if create is None or not _exists(conn, c):
        return f"{c} or {f} is missing"
    with tempfile.TemporaryDirectory(prefix="fisk-fts-check-") as tmp:
        path = Path(tmp) / "check.db"
        copy = apsw.Connection(str(path))
        try:
            _watch(budget, conn, copy)
            copy.execute("PRAGMA journal_mode=OFF")
            copy.execute("PRAGMA synchronous=OFF")
            copy.execute(f"CREATE TABLE {TEXT} (id INTEGER PRIMARY KEY, section, body, cjk, doc)")
            copy.execute(_external_definition(create, f))  # also its shadow tables, empty
            copy.execute("BEGIN")
            for shadow in (*SHADOWS, "docsize"):
                copy.execute(f"DELETE FROM {f}_{shadow}")
            own = not conn.in_transaction
            if own:
                conn.execute("BEGIN")  # one snapshot: chunks and index of the same moment
            try:
                for shadow in SHADOWS:
                    _copy_rows(conn, copy, f"SELECT * FROM {f}_{shadow}", f"{f}_{shadow}")
                _copy_rows(conn, copy, f"SELECT id, sz FROM {f}_docsize", f"{f}_docsize")
                _copy_rows(conn, copy, f"SELECT id, section, body, cjk, doc FROM {c}", TEXT)
            finally:
                conn.set_progress_handler(None)  # else it could interrupt the COMMIT
                if own and conn.in_transaction:
                    conn.execute("COMMIT")
            copy.execute("COMMIT")
            # A fresh connection: FTS5 reads the copied structure, not the empty one it made.
            copy.close()
            copy = apsw.Connection(str(path))
            _watch(budget, copy)
            budget.reached("")
            try:
                copy.execute(f"INSERT INTO {f}({f}, rank) VALUES ('integrity-check', 0)")
            except apsw.CorruptError as exc:
                return f"FTS5 integrity-check: {exc}"
            budget.reached(SOUND)
            try:
                copy.execute(f"INSERT INTO {f}({f}, rank) VALUES ('integrity-check', 1)")
            except apsw.CorruptError:
                return "FTS5 integrity-check with their text: terms or token counts differ"
            return None
        except apsw.InterruptError:
            raise Stopped(budget.seconds or 0.0, budget.done) from None
        finally:
            conn.set_progress_handler(None)
            copy.close()


def _watch(budget: CpuBudget, *conns: apsw.Connection) -> None:
    """Interrupt whatever statement runs on ``conns`` once the budget is spent."""
    for conn in conns:
        conn.set_progress_handler(budget.passed, _STEPS)


def _exists(conn: apsw.Connection, name: str) -> bool:
    return (
        conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone() is not None
    )


def _external_definition(create: str, name: str) -> str:
    """The store's ``CREATE VIRTUAL TABLE name USING fts5(...)`` with the copy's text table as
    its external content (columns, tokenizer and other options kept)."""
    head, _, args = create.partition("(")
    if name not in head:
        raise ValueError(f"unexpected full-text table definition: {create[:80]}")
    options = [a.strip() for a in args.rsplit(")", 1)[0].split(",")]
    kept = [a for a in options if not a.startswith(("content=", "content_rowid=", "contentless"))]
    return (
        f"CREATE VIRTUAL TABLE {name} USING fts5({', '.join(kept)}, "
        f"content='{TEXT}', content_rowid='id')"
    )


def _copy_rows(src: apsw.Connection, dst: apsw.Connection, select: str, table: str) -> None:
    width = len(dst.execute("SELECT name FROM pragma_table_info(?)", (table,)).fetchall())
    insert = f"INSERT INTO {table} VALUES ({', '.join('?' * width)})"
    rows = iter(src.execute(select))
    while batch := list(itertools.islice(rows, _BATCH)):
        dst.executemany(insert, batch)
