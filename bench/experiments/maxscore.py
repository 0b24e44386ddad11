"""Exact two-pass lexical top-k (MaxScore-style) over FTS5, measured against the current query.

Terms with df <= RARE of the chunks form R (the whole-query phrase is always in R); the rest C.
Pass 1: bm25 over R only, top P. Pass 2: the full expression re-scores those rowids. A chunk
outside pass 1 scores at most s_P(R) + 2.2 * sum(idf(C)) (each BM25 term adds < idf*(k1+1)), so
when the K-th full score beats that bound the top-K is exactly the full query's; else fall back.
"""

import math
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, "bench")
import devset_questions as dq
from speed import QUERIES

from fisk_ls.knowledge import Knowledge, resolve_settings
from fisk_ls.knowledge import search as S
from fisk_ls.knowledge.fts import match_expression, query_terms

root = Path(sys.argv[1]).resolve()
s = resolve_settings(cwd=root, store_base=Path(sys.argv[2]))
RARE = float(sys.argv[3]) if len(sys.argv) > 3 else 0.05
K, P = 50, 200
kb = Knowledge(s)
ts = S.TermStats()
W = ", ".join(str(x) for x in S.BM25_WEIGHTS)
qs = (
    [q.query for q in dq.load(dq.CORPORA["powershell"])]
    + QUERIES
    + [
        "how to configure DNS server forwarders",
        "remove a printer driver",
        "schedule a task to run at logon",
    ]
)
res = []
with kb.store.snapshot() as snap:
    conn, f = snap.conn, snap.tables.fts
    N = conn.execute(f"SELECT count(*) FROM {snap.tables.chunks}").fetchone()[0]
    for q in qs:  # warm the df cache and pages
        terms = ts.prune(snap, query_terms(q))
        S.lexical_ids(snap, match_expression(q, terms=terms))
    for q in qs:
        t0 = time.perf_counter()
        terms = ts.prune(snap, query_terms(q))
        full_expr = match_expression(q, terms=terms)
        full = S.lexical_ids(snap, full_expr, K)
        t_full = time.perf_counter() - t0
        t0 = time.perf_counter()
        terms = ts.prune(snap, query_terms(q))
        dfs = {t: ts.count(snap, t, N + 1)[0] for t in terms}
        R = [t for t in terms if dfs[t] <= RARE * N]
        C = [t for t in terms if dfs[t] > RARE * N]
        phrase_expr = match_expression(q, terms=terms)
        exact, got = False, None
        if R and C:

            def idf(n):
                return max(math.log((N - n + 0.5) / (n + 0.5)), 1e-6)

            ub_c = 2.2 * sum(idf(dfs[t]) for t in C)
            r_expr = match_expression(q, terms=R)
            # match_expression adds the phrase bonus for short queries from the query text;
            # keep only R's terms: R expression may include the phrase, which is rare anyway
            p1 = S.lexical_ids(snap, r_expr, P)
            ids = [i for i, _ in p1]
            marks = ",".join("?" * len(ids))
            rows = conn.execute(
                f"SELECT rowid, bm25({f}, {W}) AS s FROM {f} WHERE {f} MATCH ? AND rowid IN ({marks}) ORDER BY s, rowid LIMIT ?",
                (full_expr, *ids, K),
            ).fetchall()
            got = [(int(a), float(b)) for a, b in rows]
            bound = ub_c + (-p1[-1][1] if len(p1) == P else 0.0)
            exact = len(got) >= K and -got[K - 1][1] > bound
        if not exact:
            got = S.lexical_ids(snap, full_expr, K)
        t_two = time.perf_counter() - t0
        res.append(
            (q, t_full * 1000, t_two * 1000, exact, [i for i, _ in got] == [i for i, _ in full])
        )
full_ms = sorted(r[1] for r in res)
two_ms = sorted(r[2] for r in res)


def pc(xs, p):
    return xs[min(len(xs) - 1, int(p * len(xs)))]


print(f"RARE {RARE}, top-{K} exactness, pass-1 depth {P}, {len(res)} queries over {N} chunks")
print(f"current OR query: p50 {statistics.median(full_ms):.1f} ms p95 {pc(full_ms, 0.95):.1f} ms")
print(
    f"two-pass:         p50 {statistics.median(two_ms):.1f} ms p95 {pc(two_ms, 0.95):.1f} ms; "
    f"proved exact on {sum(r[3] for r in res)}/{len(res)}; same top-{K} as current on {sum(r[4] for r in res)}/{len(res)}"
)
slow = sorted(res, key=lambda r: -r[1])[:6]
for r in slow:
    print(f"  {r[1]:7.1f} -> {r[2]:7.1f} ms exact={r[3]} same={r[4]} {r[0]!r}")
