import pickle
import sys
from pathlib import Path

from fisk_ls.knowledge.index.examine import examine
from fisk_ls.knowledge.index.walk import walk
from fisk_ls.knowledge.location import document_key

root = Path(sys.argv[1]).resolve()
cands = list(walk(root, Path("/nonexistent"), print))
outs = [examine(document_key(c.path, root), c, None) for c in cands]
Path(sys.argv[2]).write_bytes(pickle.dumps(outs, protocol=5))
print(len(outs))
