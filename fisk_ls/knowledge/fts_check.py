"""Does the full-text index say what the chunks say? Checked read-only, on a private copy.

FTS5's ``integrity-check`` is spelled as an INSERT and needs the write lock, which ``doctor``
never takes on a store (it would wait on a writer, or stall one, and fails on read-only media).
So, in one read transaction of the store (WAL readers never wait on a writer), the index's shadow
tables are copied into a temporary database, created from the store's own ``CREATE`` statement
(any format), and the chunks' current text is indexed there afresh with the same definition.
Then:

1. FTS5's ``integrity-check`` runs on the copy: the index is internally sound;
2. the copy and the fresh index must hold the same terms with the same counts per column
   (``fts5vocab``), and every row the same token count per column (``docsize``): a chunk whose
   text changed behind the triggers' back, or a row missing or left over, shows as a difference.

Cost: one read of the chunks and the index, and FTS5 re-tokenising every chunk (about what
indexing's FTS step costs). The store's index may be contentless (format 4) or external content
(formats 1-3): neither is compared against a content table, so both are checked the same way.
"""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from .store import scalar

if TYPE_CHECKING:
    import apsw

    from .schema import Tables

SHADOWS = ("data", "idx", "docsize", "config")
"""FTS5's shadow tables (there is no ``content`` one: the text lives in the chunk tables)."""

FRESH = "fresh_fts"

_BATCH = 2000


def fts_mismatch(conn: apsw.Connection, tables: Tables) -> str | None:
    """None when the generation's full-text index agrees with its chunks; else what differs.

    ``conn`` is a read-only connection to the store; it is read inside one transaction."""
    import apsw

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
            copy.execute("PRAGMA journal_mode=OFF")
            copy.execute("PRAGMA synchronous=OFF")
            copy.execute(create)  # also creates the shadow tables, empty
            copy.execute(_fresh_definition(create, f))
            copy.execute("BEGIN")
            for shadow in SHADOWS:
                copy.execute(f"DELETE FROM {f}_{shadow}")
            own = not conn.in_transaction
            if own:
                conn.execute("BEGIN")  # one snapshot: chunks and index of the same moment
            try:
                for shadow in SHADOWS:
                    _copy_rows(conn, copy, f"{f}_{shadow}")
                _index_afresh(conn, copy, c)
            finally:
                if own:
                    conn.execute("COMMIT")
            copy.execute("COMMIT")
        finally:
            copy.close()
        # A fresh connection: FTS5 reads the copied structure record, not the empty one it made.
        check = apsw.Connection(str(path))
        try:
            check.execute(f"INSERT INTO {f}({f}) VALUES ('integrity-check')")
            return _difference(check, f)
        except apsw.CorruptError as exc:
            return f"FTS5 integrity-check: {exc}"
        finally:
            check.close()


def _exists(conn: apsw.Connection, name: str) -> bool:
    return (
        conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone() is not None
    )


def _fresh_definition(create: str, name: str) -> str:
    """The store's ``CREATE VIRTUAL TABLE name USING fts5(...)`` for a table named FRESH, made
    contentless (it is only compared, never read back)."""
    head, _, args = create.partition("(")
    if name not in head:
        raise ValueError(f"unexpected full-text table definition: {create[:80]}")
    options = [a.strip() for a in args.rsplit(")", 1)[0].split(",")]
    kept = [a for a in options if not a.startswith(("content=", "content_rowid=", "contentless"))]
    return f"CREATE VIRTUAL TABLE {FRESH} USING fts5({', '.join(kept)}, content='')"


def _index_afresh(src: apsw.Connection, dst: apsw.Connection, chunks: str) -> None:
    rows = iter(src.execute(f"SELECT id, section, body, cjk, doc FROM {chunks}"))
    insert = f"INSERT INTO {FRESH}(rowid, section, body, cjk, doc) VALUES (?, ?, ?, ?, ?)"
    while batch := list(itertools.islice(rows, _BATCH)):
        dst.executemany(insert, batch)


def _difference(check: apsw.Connection, f: str) -> str | None:
    check.execute(f"CREATE VIRTUAL TABLE temp.v_store USING fts5vocab(main, {f}, 'col')")
    check.execute(f"CREATE VIRTUAL TABLE temp.v_fresh USING fts5vocab(main, {FRESH}, 'col')")
    terms = _one_sided(check, "SELECT * FROM v_store", "SELECT * FROM v_fresh")
    rows = _one_sided(
        check, f"SELECT id, sz FROM {f}_docsize", f"SELECT id, sz FROM {FRESH}_docsize"
    )
    if terms or rows:
        return f"{terms} term counts and {rows} row sizes differ from the chunks' text"
    return None


def _one_sided(conn: apsw.Connection, a: str, b: str) -> int:
    """How many rows are in one result and not the other."""
    total = 0
    for x, y in ((a, b), (b, a)):
        total += int(scalar(conn, f"SELECT count(*) FROM ({x} EXCEPT {y})"))
    return total


def _copy_rows(src: apsw.Connection, dst: apsw.Connection, table: str) -> None:
    width = len(src.execute("SELECT name FROM pragma_table_info(?)", (table,)).fetchall())
    insert = f"INSERT INTO {table} VALUES ({', '.join('?' * width)})"
    rows = iter(src.execute(f"SELECT * FROM {table}"))
    while batch := list(itertools.islice(rows, _BATCH)):
        dst.executemany(insert, batch)
