"""Where a cold index's worker time goes now (examine() stage by stage, no profiler), plus the
writer alone fed the worker's outcomes (so the two sides of the pipeline are seen apart).

    python cold_parts.py CORPUS [STORE_DIR]

Mirrors fisk_ls.knowledge.index.examine.examine step for step (re-check it against the code)."""

import hashlib
import sys
import time
from pathlib import Path

from fisk_ls.knowledge import fts, resolve_settings
from fisk_ls.knowledge.collapse import text_key
from fisk_ls.knowledge.index import examine as ex
from fisk_ls.knowledge.index import runs
from fisk_ls.knowledge.index.chunker import chunk_document
from fisk_ls.knowledge.index.files import read_document
from fisk_ls.knowledge.index.walk import walk
from fisk_ls.knowledge.opening import open_writer

root = Path(sys.argv[1]).resolve()
T: dict[str, float] = {}


def tick(name: str, t0: float) -> None:
    T[name] = T.get(name, 0.0) + time.perf_counter() - t0


t0 = time.perf_counter()
cands = list(walk(root, Path("/nonexistent"), print))
tick("walk", t0)
base = str(root) + "/"
keys = [str(c.path)[len(base) :] for c in cands]
texts = []
t0 = time.perf_counter()
for c in cands:
    texts.append(read_document(c.path, expected=c))
tick("read_document", t0)
t0 = time.perf_counter()
for raw, _text in texts:
    hashlib.sha256(raw).hexdigest()
tick("sha256 of file bytes", t0)
docs = []
t0 = time.perf_counter()
for _raw, text in texts:
    docs.append(chunk_document(text))
tick("chunk_document", t0)
chunks = [ch for d in docs for ch in d.chunks]
t0 = time.perf_counter()
for key, d in zip(keys, docs, strict=True):
    first = d.chunks[0].section if d.chunks else ""
    fts.document_field(d.title, d.description, key, first)
tick("fts.document_field", t0)
t0 = time.perf_counter()
for ch in chunks:
    fts.cjk_column(ch.section + "\n" + ch.text)
tick("fts.cjk_column", t0)
t0 = time.perf_counter()
for ch in chunks:
    ex.chunk_hash(ch)
tick("chunk_hash", t0)
t0 = time.perf_counter()
for ch in chunks:
    text_key(ch.section, ch.text)
tick("collapse.text_key", t0)
t0 = time.perf_counter()
outs = [ex.examine(k, c, None) for k, c in zip(keys, cands, strict=True)]
tick("examine() whole, in process", t0)
print("files", len(cands), "chunks", len(chunks), flush=True)
for k, v in T.items():
    print(f"{k:32s} {v:7.2f} s", flush=True)

if len(sys.argv) > 2:  # the writer alone, fed these outcomes (real Indexer code path)
    import shutil

    store = Path(sys.argv[2])
    shutil.rmtree(store, ignore_errors=True)
    runs.examine_all = lambda jobs, *a, **kw: iter(outs)  # type: ignore[assignment]
    s = resolve_settings(cwd=root, store_base=store)
    t0 = time.perf_counter()
    with open_writer(s.store_dir) as w:
        runs.Indexer(w, root).run([root])
    print(f"{'writer alone (walk + writes)':32s} {time.perf_counter() - t0:7.2f} s")
    shutil.rmtree(store, ignore_errors=True)
