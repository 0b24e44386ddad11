"""Main-process (writer) cost of a first build, fed pre-chunked outcomes from a pickle.

    python writer_variants.py OUT.pkl CORPUS VARIANT /abs/store

Variants: A current code; B one commit (no 0.25 s / 256-unit batches); F no SAVEPOINT per file
inside a batch; G = B + F. (C, D, E dropped the per-row FTS triggers for an FTS5 'rebuild' at
the end, H and E wrote the rows with executemany, I and J wrote the FTS rows once per batch:
the store has since become contentless FTS5 fed from a pending table at each commit, which is
what I measured, so those variants no longer apply; they are in the history at ``e7f7e80``.)"""

import contextlib
import pickle
import shutil
import sys
import time
from pathlib import Path

from fisk_ls.knowledge import resolve_settings
from fisk_ls.knowledge import writer as writer_mod
from fisk_ls.knowledge.index import runs
from fisk_ls.knowledge.opening import open_writer

outs = pickle.loads(Path(sys.argv[1]).read_bytes())
root = Path(sys.argv[2]).resolve()
variant = sys.argv[3]
if variant not in ("A", "B", "F", "G"):
    raise SystemExit(f"unknown variant {variant!r}: A, B, F or G")
base = Path(sys.argv[4])
shutil.rmtree(base, ignore_errors=True)
s = resolve_settings(cwd=root, store_base=base)


def du(p):
    return sum(f.stat().st_size for f in Path(p).rglob("*") if f.is_file())


runs.examine_all = lambda jobs, *a, **kw: iter(outs)
if variant in ("B", "G"):
    orig = writer_mod.Writer.batch
    writer_mod.Writer.batch = lambda self, max_units=256, max_seconds=0.25: orig(self, 10**9, 1e9)
if variant in ("F", "G"):

    @contextlib.contextmanager
    def tx(self):
        if self.conn.in_transaction:
            yield self.conn  # no SAVEPOINT per file
            return
        self.conn.execute("BEGIN IMMEDIATE")
        yield self.conn
        self.commit()  # flushes the pending FTS rows and stamps, as the product's

    writer_mod.Writer.transaction = tx
t0 = time.perf_counter()
w = open_writer(s.store_dir)
ind = runs.Indexer(w, root)
t1 = time.perf_counter()
stats = ind.run([root])
t2 = time.perf_counter()
w.close()
t3 = time.perf_counter()
print(
    f"variant {variant}: rows {t2 - t1:.2f} s, close {t3 - t2:.2f} s, total {t3 - t0:.2f} s,"
    f" {stats.chunks} chunks, store {du(s.store_dir) / 1e6:.1f} MB"
)
