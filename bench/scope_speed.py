"""Speed of a scoped search (``--path``, scope.py) against the unscoped search, in-process,
alternating, same load, over one dev-set corpus (default the OpenTelemetry site).

    python bench/scope_speed.py [--corpus otel|powershell] [--store DIR] [--rounds N] > scope.json

Each of the corpus's dev-set questions runs through ``Knowledge.search`` (lexical, top 10)
unscoped and with each scope below, in an order that alternates per question and round; round 0
warms the pages and is not counted. A narrow scope must not be slower than the unscoped search:
FTS5 still walks the same posting lists, but ``bm25()`` runs only for the rows in scope. Prints
p50/p95 per scope, the ratio of each p50 to the unscoped p50, and how many scoped answers held a
hit outside their scope (must be 0).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import devset_questions as dq
from match_speed import percentile

from fisk_ls.knowledge import Knowledge, SearchRequest, index, resolve_settings
from fisk_ls.knowledge.scope import Scope

SCOPES: dict[str, dict[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {
    "otel": {
        "narrow folder (languages/python)": (("content/en/docs/languages/python",), ()),
        "narrow glob (collector/**/*.md)": (("content/en/docs/collector/**/*.md",), ()),
        "union of two folders": (
            ("content/en/docs/languages/go", "content/en/docs/languages/java"),
            (),
        ),
        "one language (content/en)": (("content/en",), ()),
        "everything but ja (exclude only)": ((), ("content/ja",)),
        "every page by glob (**/*.md)": (("**/*.md",), ()),
    },
    "powershell": {
        "narrow folder (one module)": (("docset/winserver2022-ps/netsecurity",), ()),
        "one Windows version": (("docset/winserver2022-ps",), ()),
        "every page by glob (**/*.md)": (("**/*.md",), ()),
    },
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", choices=sorted(SCOPES), default="otel")
    parser.add_argument("--store", type=Path, help="keep the index here (default: a temp dir)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    corpus = dq.CORPORA[args.corpus]
    if not corpus.root.is_dir():
        sys.exit(f"corpus not found: {corpus.root}")
    with tempfile.TemporaryDirectory() as tmp:
        base = (args.store or Path(tmp)).resolve()
        settings = resolve_settings(cwd=corpus.root, store_base=base, discover=False)
        built = index(settings)
        queries = list(dict.fromkeys(q.query for q in dq.load(corpus)))
        scopes: dict[str, Scope | None] = {"unscoped": None}
        scopes.update({name: Scope.build(i, e) for name, (i, e) in SCOPES[args.corpus].items()})
        timings: dict[str, list[float]] = {name: [] for name in scopes}
        outside: dict[str, int] = {name: 0 for name in scopes}
        empty: dict[str, int] = {name: 0 for name in scopes}
        kb = Knowledge(settings)
        try:
            names = list(scopes)
            for round_ in range(args.rounds + 1):
                for i, query in enumerate(queries):
                    shift = (i + round_) % len(names)
                    for name in names[shift:] + names[:shift]:
                        scope = scopes[name]
                        t0 = time.perf_counter()
                        asked = SearchRequest(
                            query,
                            10,
                            paths=[p.removeprefix("/") for p in scope.include] if scope else (),
                            excludes=[p.removeprefix("/") for p in scope.exclude] if scope else (),
                            tags=scope.tags if scope else (),
                        )
                        result = kb.search(asked)
                        ms = (time.perf_counter() - t0) * 1000
                        if round_ == 0:
                            bad = [h for h in result.hits if scope and not scope.contains(h.path)]
                            outside[name] += len(bad)
                            empty[name] += not result.hits
                            continue
                        timings[name].append(ms)
        finally:
            kb.close()
    base_p50 = statistics.median(timings["unscoped"])
    out = {
        "corpus": corpus.root.name,
        "chunks": built.chunks,
        "queries": len(queries),
        "rounds": args.rounds,
        "scopes": {
            name: {
                "patterns": list(scopes[name].include + scopes[name].exclude)  # type: ignore[union-attr]
                if scopes[name]
                else [],
                "p50_ms": round(statistics.median(ms), 2),
                "p95_ms": round(percentile(ms, 0.95), 2),
                "p50_ratio": round(statistics.median(ms) / base_p50, 3),
                "hits_outside_scope": outside[name],
                "questions_without_hits": empty[name],
            }
            for name, ms in timings.items()
        },
        "loadavg": os.getloadavg(),
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
