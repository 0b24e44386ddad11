"""Rows BM25 scores in the lexical arms of a search with agent strings: the full OR, the split
``topk.best`` may make (its commonest term), and, as an oracle, the cheapest exact split that
drops the k commonest terms (the sum of their bounds below the θ of the rest), over the English
dev-set questions with their three strings. Counts rows with ``count(*)``, no timing.

    python bench/experiments/also_maxscore.py powershell|otel STORE_BASE
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from devset import agent_file, load_agent, store_settings
from devset_questions import CORPORA, load

from fisk_ls.knowledge import search, topk
from fisk_ls.knowledge.fts import or_expression
from fisk_ls.knowledge.lexical import TermStats
from fisk_ls.knowledge.query import Query
from fisk_ls.knowledge.store import Store

corpus = CORPORA[sys.argv[1]]
qs = [x for x in load(corpus) if x.lang == "en"]
also = load_agent(agent_file(corpus.questions), qs, None)
store = Store(store_settings(corpus, Path(sys.argv[2])).store_dir)
stats = TermStats()
W = search.BM25_WEIGHTS
tot = {"full": 0, "split1": 0, "bestk": 0}
per_string = [dict(tot) for _ in range(4)]


def count(snap, e):
    f = snap.tables.fts
    return snap.conn.execute(f"SELECT count(*) FROM {f} WHERE {f} MATCH ?", (e,)).fetchone()[0]


for x in qs:
    query = Query.parse(x.query, 10, also=also[x.id])
    with store.snapshot() as snap:
        for si, s in enumerate(query.strings):
            p = search.query_plan(snap, s, stats)
            if not p.expression():
                continue
            full = count(snap, p.expression())
            order = p.ordered
            res = {"full": full, "split1": full, "bestk": full}
            best_k = full
            for k in range(1, len(order)):
                ess, dropped = order[:-k], order[-k:]
                e_ess = p.expression(ess)
                top = topk.scored(snap, e_ess, W, 200)
                theta = -top[-1][1] if len(top) == 200 else 0.0
                b = sum(p.bound(t) for t in dropped)
                if b * (1 + 1e-9) + 1e-9 >= theta:
                    break
                cost = count(snap, e_ess) + count(
                    snap, f"({e_ess}) AND ({or_expression((), dropped)})"
                )
                if k == 1:
                    res["split1"] = min(full, cost)
                best_k = min(best_k, cost)
            res["bestk"] = best_k
            for key in tot:
                tot[key] += res[key]
                per_string[si][key] += res[key]
f, s1, bk = tot["full"], tot["split1"], tot["bestk"]
print(f"{sys.argv[1]} rows scored, all arms: {tot}")
print(f"split1/full {s1 / f:.2f} bestk/full {bk / f:.2f} bestk/split1 {bk / s1:.2f}")
for i, d in enumerate(per_string):
    print(" string", i, d)
