"""examine over the whole PS corpus through 1 vs 2 worker processes (consumed, not written)."""

import multiprocessing
import sys
import time
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from itertools import islice
from pathlib import Path

from fisk_ls.knowledge.index.examine import _examine_many
from fisk_ls.knowledge.index.walk import walk
from fisk_ls.knowledge.location import document_key


def examine_all(jobs, workers, batch=32, depth=4):
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))
    try:
        batches = (list(jobs[i : i + batch]) for i in range(0, len(jobs), batch))
        window = deque(pool.submit(_examine_many, b) for b in islice(batches, depth * workers))
        while window:
            results = window.popleft().result()
            for b in islice(batches, 1):
                window.append(pool.submit(_examine_many, b))
            yield from results
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


if __name__ == "__main__":
    root = Path(sys.argv[1]).resolve()
    jobs = [(document_key(c.path, root), c, None) for c in walk(root, Path("/x"), print)]
    for _rnd in range(2):
        for w in (1, 2):
            t = time.perf_counter()
            n = sum(1 for _ in examine_all(jobs, w))
            dt = time.perf_counter() - t
            print(f"workers {w}: {n} files examined in {dt:.1f} s", flush=True)
