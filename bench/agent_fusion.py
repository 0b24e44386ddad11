"""How to fuse a question with an agent's extra strings (``also``): the rules measured.

Each rule replaces ``search.fuse_strings`` (the lists every string's two arms found, in the order
query, keywords, hypothetical answer, rephrasing) and the dev set is scored through the real
``Knowledge.search``, so language preference, collapsing and the deeper lexical read are the
product's. The stores are ``bench/devset.py``'s (``--store-base``; run it first so they exist).

    python bench/agent_fusion.py --store-base STORES [--builtin MODEL_DIR] [--corpus otel]
                                 [--questions FILE] [--rules score-mean,rrf60]

Prints one JSON object: per corpus and tier, each rule's overall and per-kind Hit@5 / MRR@10 and
every question's rank (compare two rules with ``bench/devset_compare.py``-style pairs: the output
of one rule is in the same shape as a devset.py run).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from beir import rrf
from devset import agent_file, load_agent, score, store_settings
from devset_questions import CORPORA, load

from fisk_ls.knowledge import Knowledge
from fisk_ls.knowledge import fusion as S
from fisk_ls.knowledge import search as searching
from fisk_ls.knowledge.search import FANOUT

Fused = tuple[list[tuple[int, float]], dict[int, dict[str, int]], dict[int, tuple[str, ...]]]
PRODUCT = S.fuse_strings


Scores = Callable[[Sequence[tuple[int, float]], Sequence[tuple[int, float]]], dict[int, float]]
"""One string's score of each candidate from its (lexical, vector) lists."""
Rule = Callable[[Sequence[S.Arms]], list[tuple[int, float]]]


def weighted_mean(query_weight: float, scores: Scores) -> Rule:
    """The weighted mean over the strings of ``scores`` (the query weighs ``query_weight``,
    each extra string 1; a string that did not find a chunk adds 0)."""

    def rule(arms: Sequence[S.Arms]) -> list[tuple[int, float]]:
        total: dict[int, float] = {}
        weights = [query_weight, *([1.0] * (len(arms) - 1))]
        for w, (lexical, vector) in zip(weights, arms, strict=True):
            for cid, x in scores(lexical, vector).items():
                total[cid] = total.get(cid, 0.0) + w * x
        norm = sum(weights) or 1.0
        return sorted(((c, x / norm) for c, x in total.items()), key=lambda t: (-t[1], t[0]))

    return rule


def _per_list(
    part: Callable[[Sequence[tuple[int, float]]], dict[int, float]],
) -> Scores:
    """``part`` of each list, weighted ``LEXICAL_WEIGHT`` / the rest as ``search.fuse`` does."""

    def scores(
        lexical: Sequence[tuple[int, float]], vector: Sequence[tuple[int, float]]
    ) -> dict[int, float]:
        wl = S.LEXICAL_WEIGHT if vector else 1.0
        wv = 1.0 - S.LEXICAL_WEIGHT if lexical else 1.0
        out: dict[int, float] = {}
        for weight, ranked in ((wl, lexical), (wv, vector)):
            for cid, x in part(ranked).items():
                out[cid] = out.get(cid, 0.0) + weight * x
        return out

    return scores


def relative(
    lexical: Sequence[tuple[int, float]], vector: Sequence[tuple[int, float]]
) -> dict[int, float]:
    """``search.fuse``'s scores: relative BM25 (score / best) and rescaled cosines."""
    return dict(S.fuse(lexical, vector))


def floored(floor: float) -> Scores:
    """As ``search.rescaled``, but a short list's last candidate is not pushed to 0: each list
    is rescaled from min(its last score, ``floor`` x its best) (relative scores)."""

    def part(ranked: Sequence[tuple[int, float]]) -> dict[int, float]:
        if not ranked:
            return {}
        top, last = ranked[0][1], ranked[-1][1]
        f = min(last / top if top else 0.0, floor)
        return {
            c: max(((x / top if top else 1.0) - f) / (1 - f) if f < 1 else 1.0, 0.0)
            for c, x in ranked
        }

    return _per_list(part)


def borda(ranked: Sequence[tuple[int, float]]) -> dict[int, float]:
    """1 - (rank - 1) / FANOUT for each candidate of a list."""
    return {c: max(1.0 - rank / FANOUT, 0.0) for rank, (c, _) in enumerate(ranked)}


def score_mean(query_weight: float) -> Rule:
    return weighted_mean(query_weight, relative)


def minmax_mean(query_weight: float) -> Rule:
    """Each string's scores rescaled over its own candidates (``search.rescaled``, the kept
    rule's per-string score), so rank inside a string counts."""
    return weighted_mean(query_weight, S.rescaled)


def floored_mean(query_weight: float, floor: float) -> Rule:
    return weighted_mean(query_weight, floored(floor))


def rank_mean(query_weight: float) -> Rule:
    """Each list scores its Borda count, weighted as the others."""
    return weighted_mean(query_weight, _per_list(borda))


def score_max(arms: Sequence[S.Arms]) -> list[tuple[int, float]]:
    best: dict[int, float] = {}
    for lexical, vector in arms:
        for cid, s in S.fuse(lexical, vector):
            best[cid] = max(best.get(cid, 0.0), s)
    return sorted(best.items(), key=lambda x: (-x[1], x[0]))


def rrf_all(k: int) -> Callable[[Sequence[S.Arms]], list[tuple[int, float]]]:
    """RRF over every list of every string (what the issue measured from the CLI, k=60)."""

    def rule(arms: Sequence[S.Arms]) -> list[tuple[int, float]]:
        lists = [[c for c, _ in ranked] for lexical, vector in arms for ranked in (lexical, vector)]
        return rrf([x for x in lists if x], k)

    return rule


def rrf_fused(k: int) -> Callable[[Sequence[S.Arms]], list[tuple[int, float]]]:
    """Each string's lists fused by score, then the strings' rankings by RRF."""

    def rule(arms: Sequence[S.Arms]) -> list[tuple[int, float]]:
        return rrf([[c for c, _ in S.fuse(lex, vec)] for lex, vec in arms], k)

    return rule


def routed(arms: Sequence[S.Arms]) -> list[tuple[int, float]]:
    """Keywords reach only the lexical arm, the hypothetical answer only the vector arm (when
    there is one), the rephrasing both; then the score mean."""
    out = list(arms)
    if len(out) > 1 and out[1][1]:
        out[1] = (out[1][0], [])
    if len(out) > 2 and out[2][1]:
        out[2] = ([], out[2][1])
    return score_mean(1.0)(out)


RULES: dict[str, Callable[[Sequence[S.Arms]], list[tuple[int, float]]]] = {
    "product": lambda arms: PRODUCT(arms)[0],
    "score-mean": score_mean(1.0),
    "score-mean-q0.5": score_mean(0.5),
    "score-mean-q2": score_mean(2.0),
    "score-mean-q3": score_mean(3.0),
    "score-max": score_max,
    "minmax-mean": minmax_mean(1.0),
    "minmax-mean-q2": minmax_mean(2.0),
    "minmax-mean-q1.5": minmax_mean(1.5),
    "minmax-mean-q1.25": minmax_mean(1.25),
    "floor0.5-q1.5": floored_mean(1.5, 0.5),
    "floor0.5-q1": floored_mean(1.0, 0.5),
    "rank-q1.5": rank_mean(1.5),
    "rank-q1": rank_mean(1.0),
    "rrf60": rrf_all(60),
    "rrf20": rrf_all(20),
    "rrf-fused60": rrf_fused(60),
    "routed": routed,
}


def patched(rule: Callable[[Sequence[S.Arms]], list[tuple[int, float]]]) -> Any:
    def fuse_strings(arms: Sequence[S.Arms]) -> Fused:
        fused, ranks, found = PRODUCT(arms)
        return (rule(arms) if len(arms) > 1 else fused), ranks, found

    return fuse_strings


def _brief(run: dict[str, Any]) -> dict[str, Any]:
    def pick(m: dict[str, Any]) -> dict[str, Any]:
        return {k: m[k] for k in ("hit@5", "mrr@10", "n") if k in m}

    return {
        "overall": pick(run["overall"]),
        "query_ms": run["query_ms"],
        "by_kind": {k: pick(v) for k, v in run["by_kind"].items()},
        "per_question": run["per_question"],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store-base", type=Path, required=True)
    ap.add_argument("--builtin", type=Path, help="model directory: also score the hybrid store")
    ap.add_argument("--corpus", choices=list(CORPORA), default="otel")
    ap.add_argument("--questions", type=Path)
    ap.add_argument("--lang", default="en", help="only questions in this language ('' = all)")
    ap.add_argument("--rules", default=",".join(RULES))
    ap.add_argument("--strings", help="which agent strings, 0-based (default all three)")
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument(
        "--also-budget", type=int, help="postings an extra string may read (search.py default)"
    )
    args = ap.parse_args(argv)
    if args.also_budget:
        searching.ALSO_POSTING_BUDGET = args.also_budget
    corpus = CORPORA[args.corpus]
    questions = load(corpus, args.questions)
    if args.lang:
        questions = [q for q in questions if q.lang == args.lang]
    pick = [int(x) for x in args.strings.split(",")] if args.strings else None
    also = load_agent(agent_file(args.questions or corpus.questions), questions, pick)
    modes = [("lexical", store_settings(corpus, args.store_base))]
    if args.builtin:
        modes.append(("hybrid", store_settings(corpus, args.store_base, args.builtin)))
    out: dict[str, Any] = {"corpus": args.corpus, "questions": len(questions), "runs": {}}
    for name, settings in modes:
        k = Knowledge(settings)
        try:
            runs: dict[str, Any] = {"query": _brief(score(questions, k, False, args.resamples))}
            for rule in args.rules.split(","):
                searching.fuse_strings = patched(RULES[rule])  # type: ignore[assignment]
                try:
                    run = score(questions, k, False, args.resamples, also=also)
                finally:
                    searching.fuse_strings = PRODUCT
                runs[rule] = _brief(run)
                o = run["overall"]
                ms = run["query_ms"]["p50"]
                print(
                    f"{name} {rule}: hit@5 {o['hit@5']:.3f} mrr {o['mrr@10']:.3f} p50 {ms} ms",
                    file=sys.stderr,
                )
        finally:
            k.close()
        out["runs"][name] = runs
    print(json.dumps(out, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
