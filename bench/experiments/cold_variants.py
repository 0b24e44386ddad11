"""End-to-end cold index of the PS docs (real worker process): today vs FTS rows written once
per batch (INSERT ... SELECT before each commit, no per-row insert trigger). Alternating."""

import shutil
import sys
import time
from pathlib import Path

from fisk_ls.knowledge import index, resolve_settings, schema
from fisk_ls.knowledge import writer as writer_mod

orig_tick, orig_commit, orig_open = (
    writer_mod.Batch.tick,
    writer_mod.Batch.commit,
    writer_mod.open_writer,
)
state = {"mark": 0}


def fts_flush(conn):
    n = schema.names(1)
    conn.execute(
        f"INSERT INTO {n.fts}(rowid, section, body, cjk) SELECT id, section, body, cjk FROM {n.chunks} WHERE id > ?",
        (state["mark"],),
    )
    state["mark"] = conn.execute(f"SELECT coalesce(max(id), 0) FROM {n.chunks}").fetchone()[0]


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


def open_no_trigger(store_dir, *, wait=0.0, recover=False):
    w = orig_open(store_dir, wait=wait, recover=recover)
    w.conn.execute(f"DROP TRIGGER IF EXISTS {schema.names(1).chunks}_ai")
    return w


import fisk_ls.knowledge.operations as ops  # noqa: E402


def setv(v):
    state["mark"] = 0
    writer_mod.Batch.tick, writer_mod.Batch.commit = (
        (tick, commit) if v == "batch-fts" else (orig_tick, orig_commit)
    )
    ops.open_writer = open_no_trigger if v == "batch-fts" else orig_open


if __name__ == "__main__":
    root = Path(sys.argv[1]).resolve()
    base = Path(sys.argv[2])
    for _rnd in range(int(sys.argv[3])):
        for v in ("batch-fts", "today"):
            shutil.rmtree(base, ignore_errors=True)
            s = resolve_settings(cwd=root, store_base=base)
            setv(v)
            t = time.perf_counter()
            st = index(s)
            dt = time.perf_counter() - t
            print(
                f"{v:10s} cold index {dt:6.1f} s  {st.files} files {st.chunks} chunks", flush=True
            )
            if v == "batch-fts":  # check the FTS table is complete and searchable
                import glob

                import apsw

                c = apsw.Connection(glob.glob(str(base) + "/*/knowledge.db")[0])
                n = schema.names(1)
                print(
                    "   fts integrity-check:",
                    c.execute(f"INSERT INTO {n.fts}({n.fts}) VALUES ('integrity-check')").fetchall()
                    == [],
                    flush=True,
                )
                c.close()
