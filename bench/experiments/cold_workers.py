"""Cold ``index()`` with the examine step in 1 vs 2 worker processes (``examine_all``'s
``workers``; the product passes 1), alternating, two rounds.

    python cold_workers.py CORPUS /abs/store

``runs.examine_all`` is wrapped to pass ``workers=2``; a run under
``examine.PARALLEL_MIN_FILES`` files examines in process either way. The store is removed
before each build."""

import shutil
import sys
import time
from pathlib import Path

from fisk_ls.knowledge import index_project, resolve_settings
from fisk_ls.knowledge.index import runs

orig = runs.examine_all
if __name__ == "__main__":
    root = Path(sys.argv[1]).resolve()
    base = Path(sys.argv[2])
    for _rnd in range(2):
        for workers in (2, 1):
            shutil.rmtree(base, ignore_errors=True)
            s = resolve_settings(cwd=root, store_base=base)
            runs.examine_all = lambda jobs, *a, workers=workers, **kw: orig(
                jobs, *a, **kw, workers=workers
            )
            t = time.perf_counter()
            st = index_project(s)
            dt = time.perf_counter() - t
            print(f"{workers} worker(s)  cold index {dt:6.1f} s  {st.chunks} chunks", flush=True)
    runs.examine_all = orig
    shutil.rmtree(base, ignore_errors=True)
