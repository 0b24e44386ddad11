"""cProfile of the worker's side (examine) over all PS files, in-process."""

import cProfile
import io
import pstats
import sys
import time
from pathlib import Path

from fisk_ls.knowledge.index.examine import examine
from fisk_ls.knowledge.index.walk import walk
from fisk_ls.knowledge.location import document_key

root = Path(sys.argv[1]).resolve()
cands = list(walk(root, Path("/nonexistent"), print))
jobs = [(document_key(c.path, root), c, None) for c in cands]
t = time.perf_counter()
pr = cProfile.Profile()
pr.enable()
outs = [examine(*j) for j in jobs]
pr.disable()
print(
    "files",
    len(outs),
    "chunks",
    sum(len(o.prepared.rows) for o in outs if o.prepared),
    "wall(with profiler)",
    round(time.perf_counter() - t, 2),
)
s = io.StringIO()
pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(25)
print(s.getvalue()[:6000])
s = io.StringIO()
pstats.Stats(pr, stream=s).sort_stats("cumtime").print_stats(25)
print(s.getvalue()[:6000])
