"""Lexical search over the PS docs (150k chunks): where a query's time goes, and DF cuts."""

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, "bench")
import devset
import devset_questions as dq
from speed import QUERIES

from fisk_ls.knowledge import Knowledge, resolve_settings
from fisk_ls.knowledge import search as S

root = Path(sys.argv[1]).resolve()
s = resolve_settings(cwd=root, store_base=Path(sys.argv[2]))
kb = Knowledge(s)
extra = [
    "how to configure DNS server forwarders",
    "remove a printer driver",
    "schedule a task to run at logon",
]
qs = QUERIES + extra
for q in qs:
    kb.search(q, top_k=10)
with kb.store.snapshot() as snap:
    conn, f = snap.conn, snap.tables.fts
    total = conn.execute(f"SELECT count(*) FROM {snap.tables.chunks}").fetchone()[0]
    rows = []
    for q in qs:
        expr = S.query_expression(
            snap, q, kb._term_stats if hasattr(kb, "_term_stats") else S.TermStats()
        )
        t = time.perf_counter()
        n = conn.execute(f"SELECT count(*) FROM {f} WHERE {f} MATCH ?", (expr,)).fetchone()[0]
        tc = time.perf_counter() - t
        t = time.perf_counter()
        S.lexical_ids(snap, expr)
        tr = time.perf_counter() - t
        rows.append([0.0, tr * 1000, tc * 1000, n, q, expr])
if True:
    for r in rows:
        ts = []
        for _ in range(3):
            t = time.perf_counter()
            kb.search(r[4], top_k=10)
            ts.append(time.perf_counter() - t)
        r[0] = statistics.median(ts) * 1000
    rows.sort(reverse=True)
    print(f"chunks {total}")
    print("search_ms  bm25_top50_ms  count_only_ms  matched_rows  query -> expression")
    for r in rows[:12]:
        print(f"{r[0]:8.1f} {r[1]:10.1f} {r[2]:10.1f} {r[3]:9d}  {r[4]!r} -> {r[5][:110]}")
# DF cut variants: speed and devset quality
corpus = dq.CORPORA["powershell"]
questions = dq.load(corpus)
base_top = {}
for frac in (0.5, 0.2, 0.1, 0.05):
    S.COMMON_FRACTION = frac
    kb.close()
    kb = Knowledge(s)
    for q in qs:
        kb.search(q, top_k=10)
    lat = []
    same = 0
    for q in [x.query for x in questions] + qs:
        t = time.perf_counter()
        res = kb.search(q, top_k=10)
        lat.append((time.perf_counter() - t) * 1000)
        ids = [h.chunk_id for h in res.hits]
        if frac == 0.5:
            base_top[q] = ids
        elif base_top.get(q) == ids:
            same += 1
    summ = devset.score(questions, kb, False, 200)["overall"]
    lat.sort()
    print(
        f"COMMON_FRACTION {frac}: p50 {statistics.median(lat):.1f} ms p95 {lat[int(0.95 * len(lat))]:.1f} ms; "
        f"devset PS MRR@10 {summ['mrr@10']:.3f} Hit@5 {summ['hit@5']:.3f}; top-10 identical to 0.5 on {same}/{len(lat)} queries"
    )
