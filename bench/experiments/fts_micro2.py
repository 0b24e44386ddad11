import contextlib
import os
import pickle
import sys
import time
from pathlib import Path

import apsw

from fisk_ls.knowledge import schema

outs = pickle.loads(Path(sys.argv[1]).read_bytes())
N = int(sys.argv[2])
rows = [r for o in outs for r in o.prepared.rows][:N]


def fresh(path):
    for s in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path + s)
    c = apsw.Connection(path)
    c.execute("PRAGMA journal_mode=WAL")
    c.execute("PRAGMA synchronous=NORMAL")
    c.execute("PRAGMA cache_size=-16000")
    c.execute(schema.generation_ddl(1))
    n = schema.names(1)
    c.execute(f"INSERT INTO {n.documents}(path) VALUES ('x')")
    return c, n


for label in ("trigger", "direct-fts-insert", "batched-fts-insert-select"):
    c, n = fresh(str(Path(sys.argv[1]).parent / "micro2.db"))
    if label != "trigger":
        c.execute(f"DROP TRIGGER {n.chunks}_ai")
    t = time.perf_counter()
    c.execute("BEGIN")
    if label == "batched-fts-insert-select":
        # per 'file' of ~10 chunks: insert chunks, then one INSERT ... SELECT into the fts
        for i in range(0, len(rows), 10):
            part = rows[i : i + 10]
            first = c.execute(f"SELECT coalesce(max(id),0)+1 FROM {n.chunks}").fetchone()[0]
            c.executemany(
                f"INSERT INTO {n.chunks}(document_id, ordinal, section, body, cjk, start_line, end_line, hash) VALUES (1, ?, ?, ?, ?, ?, ?, ?)",
                part,
            )
            c.execute(
                f"INSERT INTO {n.fts}(rowid, section, body, cjk) SELECT id, section, body, cjk FROM {n.chunks} WHERE id >= ?",
                (first,),
            )
    else:
        for r in rows:
            cid = c.execute(
                f"INSERT INTO {n.chunks}(document_id, ordinal, section, body, cjk, start_line, end_line, hash) VALUES (1, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                r,
            ).fetchone()[0]
            if label == "direct-fts-insert":
                c.execute(
                    f"INSERT INTO {n.fts}(rowid, section, body, cjk) VALUES (?, ?, ?, ?)",
                    (cid, r[1], r[2], r[3]),
                )
    c.execute("COMMIT")
    t2 = time.perf_counter()
    print(f"{label:26s} {len(rows)} rows: {t2 - t:.2f} s", flush=True)
    c.close()
