"""Where the worker's time goes, without a profiler: each stage timed over the whole corpus."""

import hashlib
import os
import sys
import time
from pathlib import Path

from fisk_ls.knowledge import fts
from fisk_ls.knowledge.index.chunker import chunk_document
from fisk_ls.knowledge.index.examine import chunk_hash
from fisk_ls.knowledge.index.files import read_document
from fisk_ls.knowledge.index.walk import walk
from fisk_ls.knowledge.location import document_key

root = Path(sys.argv[1]).resolve()
T = {}


def tick(name, t0):
    T[name] = T.get(name, 0.0) + time.perf_counter() - t0


t0 = time.perf_counter()
cands = list(walk(root, Path("/nonexistent"), print))
tick("walk", t0)
t0 = time.perf_counter()
keys = [document_key(c.path, root) for c in cands]
tick("document_key x1", t0)
rp = str(root) + os.sep
t0 = time.perf_counter()
keys2 = [str(c.path)[len(rp) :] for c in cands]
tick("string slice key", t0)
assert keys == keys2
texts = []
t0 = time.perf_counter()
for c in cands:
    r = read_document(c.path)
    texts.append(r)
tick("read_document", t0)
t0 = time.perf_counter()
for raw, _text in texts:
    hashlib.sha256(raw).hexdigest()
tick("sha256 file", t0)
docs = []
t0 = time.perf_counter()
for _raw, text in texts:
    docs.append(chunk_document(text))
tick("chunk_document", t0)
chunks = [ch for d in docs for ch in d.chunks]
t0 = time.perf_counter()
for ch in chunks:
    fts.cjk_column(ch.section + "\n" + ch.text)
tick("cjk_column", t0)
t0 = time.perf_counter()
for ch in chunks:
    chunk_hash(ch)
tick("chunk_hash blake2b(f-string)", t0)

t0 = time.perf_counter()
for ch in chunks:
    hashlib.blake2b(ch.section.encode() + b"\0" + ch.text.encode(), digest_size=16).hexdigest()
tick("blake2b bytes concat", t0)
t0 = time.perf_counter()
for ch in chunks:
    hashlib.md5(f"{ch.section}\x00{ch.text}".encode()).hexdigest()
tick("md5", t0)
t0 = time.perf_counter()
for ch in chunks:
    fts.has_cjk(ch.text)
tick("has_cjk(text) only", t0)
print("files", len(cands), "chunks", len(chunks))
for k, v in T.items():
    print(f"{k:32s} {v:7.3f} s")
