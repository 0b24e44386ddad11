import glob
import statistics
import sys
import time

import apsw

sys.path.insert(0, "bench")
from speed import QUERIES

from fisk_ls.knowledge import schema
from fisk_ls.knowledge.search import BM25_WEIGHTS
from fisk_ls.knowledge.topk import plan_of

db = glob.glob(sys.argv[1] + "/*/knowledge.db")[0]
conn = apsw.Connection(db)
gen = (
    int(conn.execute("SELECT value FROM rag_meta WHERE key='generation'").fetchone()[0])
    if conn.execute("SELECT count(*) FROM rag_meta WHERE key='generation'").fetchone()[0]
    else 1
)
n = schema.names(gen)
f = n.fts
w = ", ".join(map(str, BM25_WEIGHTS))  # the product's column weights
conn.execute(f"INSERT INTO {f}({f}, rank) VALUES ('rank', 'bm25({w})')")
exprs = [plan_of(q).expression() for q in QUERIES]
sqls = {
    "bm25() ORDER BY s, rowid": f"SELECT rowid, bm25({f}, {w}) AS s FROM {f} WHERE {f} MATCH ? ORDER BY s, rowid LIMIT 50",
    "ORDER BY rank (configured)": f"SELECT rowid, rank FROM {f} WHERE {f} MATCH ? ORDER BY rank LIMIT 50",
    "no ranking (LIMIT 50)": f"SELECT rowid FROM {f} WHERE {f} MATCH ? LIMIT 50",
}
for e in exprs:
    conn.execute(next(iter(sqls.values())), (e,)).fetchall()
for _rnd in range(2):
    for name, sql in sqls.items():
        lat = []
        for e in exprs:
            t = time.perf_counter()
            conn.execute(sql, (e,)).fetchall()
            lat.append((time.perf_counter() - t) * 1000)
        lat.sort()
        print(
            f"{name:28s} p50 {statistics.median(lat):6.1f} ms p95 {lat[int(0.95 * len(lat))]:6.1f} ms (raw expressions, no pruning)"
        )
a = conn.execute(sqls["bm25() ORDER BY s, rowid"], (exprs[0],)).fetchall()
b = conn.execute(sqls["ORDER BY rank (configured)"], (exprs[0],)).fetchall()
print("same order:", [r[0] for r in a] == [r[0] for r in b])
