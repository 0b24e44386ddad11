"""Main-process (writer) cost of a first build, fed pre-chunked outcomes from a pickle.

Variants: A current code; B one commit (no 0.25 s / 256-unit batches); C no per-row triggers
during the first build, FTS5 'rebuild' at the end; D = B + C; E = D with executemany over
all files' chunks in one go (no savepoint per file)."""

import contextlib
import pickle
import shutil
import sys
import time
from pathlib import Path

from fisk_ls.knowledge import resolve_settings, schema
from fisk_ls.knowledge import writer as writer_mod
from fisk_ls.knowledge.index import runs
from fisk_ls.knowledge.writer import open_writer

outs = pickle.loads(Path(sys.argv[1]).read_bytes())
root = Path(sys.argv[2]).resolve()
variant = sys.argv[3]
base = Path(sys.argv[4])
shutil.rmtree(base, ignore_errors=True)
s = resolve_settings(cwd=root, store_base=base)


def du(p):
    return sum(f.stat().st_size for f in Path(p).rglob("*") if f.is_file())


runs.examine_all = lambda jobs, **kw: iter(outs)
if variant in ("B", "D"):
    orig = writer_mod.Writer.batch
    writer_mod.Writer.batch = lambda self, max_units=256, max_seconds=0.25: orig(self, 10**9, 1e9)
if variant in ("F", "G"):

    @contextlib.contextmanager
    def tx(self):
        if self.conn.in_transaction:
            yield self.conn  # no SAVEPOINT: FTS5 flushes a segment at every savepoint
            return
        self.conn.execute("BEGIN IMMEDIATE")
        yield self.conn
        self.conn.execute("COMMIT")

    writer_mod.Writer.transaction = tx
if variant == "G":
    orig = writer_mod.Writer.batch
    writer_mod.Writer.batch = lambda self, max_units=256, max_seconds=0.25: orig(self, 10**9, 1e9)
if variant in ("I", "J"):
    # FTS rows written once per batch (INSERT ... SELECT of the chunk ids added since the
    # last commit) instead of by a per-row trigger; commits as today (256 files / 0.25 s).
    state = {"mark": 0}

    def fts_flush(conn):
        n_ = schema.names(1)
        conn.execute(
            f"INSERT INTO {n_.fts}(rowid, section, body, cjk) SELECT id, section, body, cjk FROM {n_.chunks} WHERE id > ?",
            (state["mark"],),
        )
        state["mark"] = conn.execute(f"SELECT coalesce(max(id), 0) FROM {n_.chunks}").fetchone()[0]

    def tick(self):
        conn = self.writer.conn
        if not conn.in_transaction:
            conn.execute("BEGIN IMMEDIATE")
            self._units = 0
            self._started = time.monotonic()
            return
        self._units += 1
        if self._units >= self.max_units or time.monotonic() - self._started >= self.max_seconds:
            fts_flush(conn)
            conn.execute("COMMIT")

    def commit(self):
        if self.writer.conn.in_transaction:
            fts_flush(self.writer.conn)
            self.writer.conn.execute("COMMIT")

    writer_mod.Batch.tick = tick
    writer_mod.Batch.commit = commit
if variant == "J":
    orig = writer_mod.Writer.batch
    writer_mod.Writer.batch = lambda self, max_units=256, max_seconds=0.25: orig(self, 2048, 2.0)
t0 = time.perf_counter()
w = open_writer(s.store_dir)
n = schema.names(w.manifest.generation)
if variant in ("C", "D", "E", "I", "J"):
    w.conn.execute(f"DROP TRIGGER {n.chunks}_ai")
ind = runs.Indexer(w, root)
t1 = time.perf_counter()
if variant in ("E", "H"):
    w.conn.execute("BEGIN IMMEDIATE")
    d, c = n.documents, n.chunks
    for o in outs:
        p = o.prepared
        cand = p.candidate
        doc_id = w.conn.execute(
            f"INSERT INTO {d}(path, title, size, mtime_ns, inode, hash, chunk_count, indexed_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (
                p.key,
                p.title,
                cand.size,
                cand.mtime_ns,
                cand.inode,
                p.digest,
                len(p.rows),
                time.time(),
            ),
        ).fetchone()[0]
        w.conn.executemany(
            f"INSERT INTO {c}(document_id, ordinal, section, body, cjk, start_line, end_line, hash)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(doc_id, *r) for r in p.rows],
        )
    w.conn.execute("COMMIT")
else:
    stats = ind.run([root])
t2 = time.perf_counter()
if variant in ("C", "D", "E"):
    w.conn.execute("BEGIN IMMEDIATE")
    w.conn.execute(f"INSERT INTO {n.fts}({n.fts}) VALUES ('rebuild')")
    w.conn.execute(schema.generation_ddl(w.manifest.generation))  # triggers back
    w.conn.execute("COMMIT")
t3 = time.perf_counter()
w.close()
t4 = time.perf_counter()
segs = None
print(
    f"variant {variant}: rows {t2 - t1:.2f} s, fts rebuild {t3 - t2:.2f} s, close {t4 - t3:.2f} s, total {t4 - t0:.2f} s, store {du(s.store_dir) / 1e6:.1f} MB"
)
