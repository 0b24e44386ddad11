import cProfile
import io
import pstats
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import noop_variants as nv

from fisk_ls.knowledge import index, resolve_settings

if __name__ == "__main__":
    root = Path(sys.argv[1]).resolve()
    s = resolve_settings(cwd=root, store_base=Path(sys.argv[2]))
    nv.setv(sys.argv[3])
    index(s)
    pr = cProfile.Profile()
    pr.enable()
    index(s)
    pr.disable()
    out = io.StringIO()
    pstats.Stats(pr, stream=out).sort_stats("cumtime").print_stats(30)
    print(out.getvalue()[:7000])
