import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import cold_variants as cv
import workers as wk

from fisk_ls.knowledge import index, resolve_settings
from fisk_ls.knowledge.index import runs

orig = runs.examine_all
if __name__ == "__main__":
    root = Path(sys.argv[1]).resolve()
    base = Path(sys.argv[2])
    for _rnd in range(2):
        for v in ("batch-fts+2 workers", "batch-fts"):
            shutil.rmtree(base, ignore_errors=True)
            s = resolve_settings(cwd=root, store_base=base)
            cv.setv("batch-fts")
            runs.examine_all = (
                (lambda jobs, batch=32, depth=4: wk.examine_all(list(jobs), 2))
                if "2 workers" in v
                else orig
            )
            t = time.perf_counter()
            st = index(s)
            dt = time.perf_counter() - t
            print(f"{v:22s} cold index {dt:6.1f} s  {st.chunks} chunks", flush=True)
