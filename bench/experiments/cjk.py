import sys
import time
from pathlib import Path

from fisk_ls.knowledge import fts
from fisk_ls.knowledge.index.chunker import chunk_document
from fisk_ls.knowledge.index.walk import walk

root = Path(sys.argv[1]).resolve()
texts = [Path(c.path).read_text() for c in walk(root, Path("/x"), print)]
docs = [chunk_document(t).chunks for t in texts]
t = time.perf_counter()
for chs in docs:
    for ch in chs:
        fts.cjk_column(ch.section + "\n" + ch.text)
a = time.perf_counter() - t
t = time.perf_counter()
for text, chs in zip(texts, docs, strict=False):
    if fts.has_cjk(text):
        for ch in chs:
            fts.cjk_column(ch.section + "\n" + ch.text)
b = time.perf_counter() - t
t = time.perf_counter()
for text, chs in zip(texts, docs, strict=False):
    if not text.isascii() and fts.has_cjk(text):
        for ch in chs:
            fts.cjk_column(ch.section + "\n" + ch.text)
c = time.perf_counter() - t
print(
    f"cjk per chunk (today) {a:.2f} s; one has_cjk per document first {b:.2f} s; isascii() then has_cjk per document {c:.2f} s; ascii docs {sum(t.isascii() for t in texts)}/{len(texts)}, docs with CJK {sum(fts.has_cjk(t) for t in texts)}"
)
