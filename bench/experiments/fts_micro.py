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
rows = []
for o in outs:
    for r in o.prepared.rows:
        rows.append(r)
        if len(rows) >= N:
            break
    if len(rows) >= N:
        break


def fresh(path, automerge=None, hashsize=None):
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
    if automerge is not None:
        c.execute(f"INSERT INTO {n.fts}({n.fts}, rank) VALUES ('automerge', {automerge})")
    return c, n


def ins(n):
    return f"INSERT INTO {n.chunks}(document_id, ordinal, section, body, cjk, start_line, end_line, hash) VALUES (1, ?, ?, ?, ?, ?, ?, ?)"


for _rnd in range(2):
    for label in ("trigger", "rebuild", "trigger-am4", "trigger-pgsz"):
        c, n = fresh(
            str(Path(sys.argv[1]).parent / "micro.db"),
            automerge=4 if label == "trigger-am4" else None,
        )
        if label == "trigger-pgsz":
            c.execute(f"INSERT INTO {n.fts}({n.fts}, rank) VALUES ('pgsz', 4050)")
        if label == "rebuild":
            c.execute(f"DROP TRIGGER {n.chunks}_ai")
        t = time.perf_counter()
        c.execute("BEGIN")
        c.executemany(ins(n), rows)
        t1 = time.perf_counter()
        if label == "rebuild":
            c.execute(f"INSERT INTO {n.fts}({n.fts}) VALUES ('rebuild')")
        c.execute("COMMIT")
        t2 = time.perf_counter()
        segs = c.execute(f"SELECT count(*) FROM {n.fts}_data").fetchone()[0]
        print(
            f"{label:14s} {len(rows)} rows: insert {t1 - t:.2f} s, +rebuild/commit {t2 - t1:.2f} s, total {t2 - t:.2f} s, data rows {segs}",
            flush=True,
        )
        c.close()
