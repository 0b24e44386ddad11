"""The cold-index floor: raw apsw inserts of naive paragraph chunks into the same schema.

No change detection, no CommonMark, no per-file atomicity: read every file, split on blank
lines, pack paragraphs to ~1000 characters, insert into the same chunk, body and FTS5 tables in
one transaction (bodies shared as the indexer shares them, index/rows.py), the full-text rows in one statement before the commit, as the writer does
(schema.fts_flush_sql). The cold index is measured against this in the same run (bench/run.py).

    python bench/floor.py CORPUS_DIR STORE_DIR
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import apsw

from fisk_ls.knowledge import schema
from fisk_ls.knowledge.index.examine import ChunkRow
from fisk_ls.knowledge.index.rows import insert_chunks

NO_HASH, NO_NEAR = "00" * 16, "n:" + "00" * 16


def floor(corpus: Path, store: Path) -> dict[str, float]:
    store.mkdir(parents=True, exist_ok=True)
    db = store / "floor.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    t0 = time.perf_counter()
    conn = apsw.Connection(str(db))
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(schema.generation_ddl(1))
    n = schema.names(1)
    files = chunks = 0
    conn.execute("BEGIN")
    for dirpath, dirnames, filenames in os.walk(corpus):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if not name.endswith((".md", ".markdown", ".txt", ".text")):
                continue
            path = os.path.join(dirpath, name)
            text = Path(path).read_text(encoding="utf-8", errors="replace")
            doc_id = conn.execute(
                f"INSERT INTO {n.documents}(path) VALUES (?) RETURNING id", (path,)
            ).fetchone()[0]
            files += 1
            rows, buf = [], ""
            for para in text.split("\n\n"):
                if buf and len(buf) + len(para) > 1000:
                    rows.append(buf)
                    buf = ""
                buf = f"{buf}\n\n{para}" if buf else para
            if buf.strip():
                rows.append(buf)
            insert_chunks(
                conn,
                n,
                doc_id,
                [
                    ChunkRow(i, "", body, None, 0, 0, NO_HASH, NO_NEAR, schema.body_key(body))
                    for i, body in enumerate(rows)
                ],
            )
            chunks += len(rows)
    for sql in schema.fts_flush_sql(1):
        conn.execute(sql)
    conn.execute("COMMIT")
    conn.close()
    return {"seconds": time.perf_counter() - t0, "files": files, "chunks": chunks}


if __name__ == "__main__":
    result = floor(Path(sys.argv[1]), Path(sys.argv[2]))
    print(result)
