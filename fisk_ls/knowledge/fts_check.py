"""Does the full-text index say what the chunks say? FTS5's own ``integrity-check`` (with
rank 1: an external-content table's index is compared with its content table), run read-only.

The check is spelled as an INSERT and needs the write lock, which ``doctor`` never takes on a
store (it would wait on a writer, or stall one, and fails on read-only media). So it runs on a
private copy: the generation's chunk table and the full-text index's shadow tables are read in
one read transaction of the store (WAL readers never wait on a writer) and written into a
temporary database, created from the store's own ``CREATE`` statements (any format), where the
check runs. Cost: one read of the chunks and the index, and FTS5 re-tokenising every chunk
(about what indexing's FTS step costs).
"""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import apsw

    from .schema import Tables

SHADOWS = ("data", "idx", "docsize", "config")
"""FTS5's shadow tables (``content`` is external: the chunks table)."""

_BATCH = 2000


def fts_mismatch(conn: apsw.Connection, tables: Tables) -> str | None:
    """None when the generation's full-text index agrees with its chunks; else what FTS5 said.

    ``conn`` is a read-only connection to the store; it is read inside one transaction."""
    import apsw

    c, f = tables.chunks, tables.fts
    sql: dict[str, str] = {
        str(name): str(text)
        for name, text in conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name IN (?, ?)", (c, f)
        )
    }
    if c not in sql or f not in sql:
        return f"{c} or {f} is missing"
    with tempfile.TemporaryDirectory(prefix="fisk-fts-check-") as tmp:
        path = Path(tmp) / "check.db"
        copy = apsw.Connection(str(path))
        try:
            copy.execute("PRAGMA journal_mode=OFF")
            copy.execute("PRAGMA synchronous=OFF")
            copy.execute(sql[c])
            copy.execute(sql[f])  # also creates the shadow tables, empty
            copy.execute("BEGIN")
            for shadow in SHADOWS:
                copy.execute(f"DELETE FROM {f}_{shadow}")
            own = not conn.in_transaction
            if own:
                conn.execute("BEGIN")  # one snapshot: chunks and index of the same moment
            try:
                _copy_rows(conn, copy, c)
                for shadow in SHADOWS:
                    _copy_rows(conn, copy, f"{f}_{shadow}")
            finally:
                if own:
                    conn.execute("COMMIT")
            copy.execute("COMMIT")
        finally:
            copy.close()
        # A fresh connection: FTS5 reads the copied structure record, not the empty one it made.
        check = apsw.Connection(str(path))
        try:
            check.execute(f"INSERT INTO {f}({f}, rank) VALUES ('integrity-check', 1)")
        except apsw.CorruptError as exc:
            return f"FTS5 integrity-check: {exc}"
        finally:
            check.close()
    return None


def _copy_rows(src: apsw.Connection, dst: apsw.Connection, table: str) -> None:
    width = len(src.execute("SELECT name FROM pragma_table_info(?)", (table,)).fetchall())
    insert = f"INSERT INTO {table} VALUES ({', '.join('?' * width)})"
    rows = iter(src.execute(f"SELECT * FROM {table}"))
    while batch := list(itertools.islice(rows, _BATCH)):
        dst.executemany(insert, batch)
