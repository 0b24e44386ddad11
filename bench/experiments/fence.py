"""Chunker: a substring pre-check before ``_fence_closes`` (lines inside a fenced block rarely
contain the fence marker). Same chunks required on every file; alternating, 3 rounds."""

import inspect
import statistics
import sys
import time
from pathlib import Path

from fisk_ls.knowledge.index import chunker
from fisk_ls.knowledge.index.walk import walk

OLD = "            while j < n and not _fence_closes(lines[j], ch, length):\n"
NEW = (
    "            marker = ch * length\n"
    "            while j < n and (marker not in lines[j]"
    " or not _fence_closes(lines[j], ch, length)):\n"
)
src = inspect.getsource(chunker._scan)
assert OLD in src, "chunker._scan changed: update this experiment"
ns: dict[str, object] = {}
exec(src.replace(OLD, NEW), chunker.__dict__, ns)
fast_scan, slow_scan = ns["_scan"], chunker._scan

root = Path(sys.argv[1]).resolve()
texts = [Path(c.path).read_text() for c in walk(root, Path("/x"), print)]
chunker._scan = fast_scan
fast = [chunker.chunk_document(t) for t in texts]
chunker._scan = slow_scan
slow = [chunker.chunk_document(t) for t in texts]
assert fast == slow, "different chunks"
times: dict[str, list[float]] = {"today": [], "pre-check": []}
for _ in range(3):
    for name, fn in (("today", slow_scan), ("pre-check", fast_scan)):
        chunker._scan = fn
        t = time.perf_counter()
        for text in texts:
            chunker.chunk_document(text)
        times[name].append(time.perf_counter() - t)
for name, xs in times.items():
    print(
        f"chunk_document over {len(texts)} files, {name}: median {statistics.median(xs):.2f} s {[round(x, 2) for x in xs]}"
    )
