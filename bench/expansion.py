"""Question expansion and its gate, measured on the dev sets' English questions.

Question expansion (fisk_ls/knowledge/expansion.py) fuses a language model's three strings (a
keyword query, a hypothetical answer, a rephrasing) with a person's question, and asks the model
only when a gate (``needs_expansion``) says the plain results are weak. Here each question's
blind agent strings (bench/devset/*-agent.jsonl, the first three, as written) stand in for the
model's, and every question is searched twice through the real ``Knowledge.search`` (the
question alone, and with its strings as ``also``), scored by ``bench/devset.py``'s ``score``.
A gate only picks, per question, which of the two results a person would see, so every gate is
measured on the same two searches; each gate sees what the product's gate sees: the question
and the plain search's result, no further search.

Per corpus and query shape (keyword: exact terms and identifiers; short: 1-3 words;
conversational: paraphrases, how-to and definitional questions; bench/devset_questions.py's
kinds grouped into the shapes real questions come in) it reports Hit@5 and
MRR@10 of the question alone, with the strings always, and with them when each gate says so,
the share of questions each gate sends to the model, and how many of those calls moved the
target into the top 5 or up inside it (``helped``), moved it down or out (``hurt``), and how many
questions the gate kept from a model that would have helped (``missed``).

    python bench/expansion.py --store-base DIR [--corpus otel|powershell|otel-heldout|all]

The stores are ``bench/devset.py``'s (lexical, one per corpus under ``--store-base``; built here
when missing, reused when present). otel-heldout is reported, never used to choose a gate.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from devset import agent_file, load_agent, score, store_settings
from devset_questions import CORPORA, HELD_OUT, Corpus, Question, load
from devset_stats import RESAMPLES, TOP_K, summarize

from fisk_ls.knowledge import Knowledge, SearchRequest, index_project
from fisk_ls.knowledge.expansion import (
    FLAT,
    FLAT_DEPTH,
    LONG_QUESTION,
    needs_expansion,
    reads_as_question,
)
from fisk_ls.knowledge.fts import words
from fisk_ls.knowledge.question import Asked
from fisk_ls.knowledge.results import Hit, SearchResult

STRINGS = [0, 1, 2]
"""The agent strings sent: the keyword query, the hypothetical answer, the rephrasing."""

SHAPES: dict[str, tuple[str, ...]] = {
    "keyword": ("exact", "identifier"),
    "short": ("short",),
    "conversational": ("paraphrase", "howto", "definitional"),
}
"""Query shapes (bench/devset_questions.py's kinds grouped): what a palette gets typed into it,
one to three words, and a question or sentence in the asker's words."""


@dataclass(frozen=True)
class Set:
    name: str
    corpus: Corpus
    questions: Path
    tune: bool
    """Whether a gate may be chosen on it (the held-out set is reported only)."""


SETS = {
    "otel": Set("otel", CORPORA["otel"], CORPORA["otel"].questions, True),
    "powershell": Set("powershell", CORPORA["powershell"], CORPORA["powershell"].questions, True),
    "otel-heldout": Set("otel-heldout", CORPORA["otel"], HELD_OUT, False),
}


class Recording:
    """``Knowledge.search`` that keeps each plain search's result (what a gate sees)."""

    def __init__(self, k: Knowledge) -> None:
        self.k = k
        self.plain: dict[str, SearchResult] = {}

    def search(self, request: SearchRequest) -> SearchResult:
        result = self.k.search(request)
        if not request.also:
            self.plain[request.query] = result
        return result


# -- the gates ------------------------------------------------------------------------------------

Gate = Callable[[str, list[Hit]], bool]
"""The question and the plain search's hits -> whether to ask the model."""


def _terms(question: str) -> set[str]:
    """The question's search terms as the index reads them (stop words out, case-folded)."""
    return {t for t in Asked.of(question).terms() if not any(ch.isspace() for ch in t)}


def _words(hit: Hit) -> set[str]:
    return {w.casefold() for w, _ in words(f"{hit.section}\n{hit.text}")}


def covered(question: str, hits: list[Hit], depth: int = 1) -> bool:
    """Whether one of the first ``depth`` hits holds every search term of the question."""
    terms = _terms(question)
    return any(terms <= _words(h) for h in hits[:depth])


def _flat(hits: list[Hit], share: float) -> bool:
    """:func:`expansion.flat` at another share."""
    return len(hits) < FLAT_DEPTH or hits[FLAT_DEPTH - 1].score >= share * hits[0].score


def _words_in(question: str) -> int:
    return sum(1 for w in question.split() if any(ch.isalnum() for ch in w))


def _before(question: str, hits: list[Hit]) -> bool:
    """The rule before this measure: nothing found, or it reads as a question with the long
    limit at five words (the current ``reads_as_question`` says six)."""
    return not hits or reads_as_question(question) or _words_in(question) == LONG_QUESTION


def _product(question: str, hits: list[Hit]) -> bool:
    return needs_expansion(question, [h.score for h in hits])


GATES: dict[str, Gate] = {
    "before: nothing found, or a question (over five words)": _before,
    "flat top five (5th >= 0.75 of 1st) alone": lambda q, h: _flat(h, FLAT),
    "before, or flat top five": lambda q, h: _before(q, h) or _flat(h, FLAT),
    "product: a question (over six words), or flat top five": _product,
    "the same, flat at 0.7": lambda q, h: reads_as_question(q) or _flat(h, 0.7),
    "the same, flat at 0.8": lambda q, h: reads_as_question(q) or _flat(h, 0.8),
    "a question and the top hit lacks a term, or flat": lambda q, h: (
        (reads_as_question(q) and not covered(q, h)) or _flat(h, FLAT)
    ),
    "the top hit lacks a term, or flat": lambda q, h: not covered(q, h) or _flat(h, FLAT),
    "the top hit lacks a term alone": lambda q, h: not h or not covered(q, h),
}
"""The gate before, the product's (``needs_expansion``), and the alternatives measured, each
as the product runs it: from the question and the plain hits, no further search."""


# -- scoring --------------------------------------------------------------------------------------


def _better(before: int | None, after: int | None) -> bool:
    """Whether ``after`` puts the target into the top 5, or higher inside it."""
    return after is not None and after <= 5 and (before is None or after < before)


def _summary(
    ids: list[str],
    plain: dict[str, Any],
    always: dict[str, Any],
    calls: dict[str, bool] | None,
    resamples: int,
) -> dict[str, Any]:
    """Hit@5 / MRR@10 of ``ids`` with the strings where ``calls`` says (None: plain only),
    the share of calls, and how many calls helped or hurt and how many skips missed a gain."""
    ranks: list[int | None] = []
    helped = hurt = missed = 0
    for i in ids:
        before, after = plain[i]["rank"], always[i]["rank"]
        called = calls is not None and calls[i]
        ranks.append(after if called else before)
        if called and _better(before, after):
            helped += 1
        elif called and _better(after, before):
            hurt += 1
        elif not called and _better(before, after):
            missed += 1
    out = summarize(ranks, resamples)
    if calls is not None:
        n = sum(1 for i in ids if calls[i])
        out |= {"calls": round(n / len(ids), 4), "helped": helped, "hurt": hurt, "missed": missed}
    return out


def run_set(s: Set, base: Path, resamples: int) -> dict[str, Any]:
    questions: list[Question] = [q for q in load(s.corpus, s.questions) if q.lang == "en"]
    strings = load_agent(agent_file(s.questions), questions, STRINGS)
    settings = store_settings(s.corpus, base)
    index_project(settings)
    k = Knowledge(settings)
    try:
        rec = Recording(k)
        plain = score(questions, rec, False, resamples)["per_question"]  # type: ignore[arg-type]
        always = score(questions, k, False, resamples, also=strings)["per_question"]
    finally:
        k.close()
    decisions = {
        name: {q.id: gate(q.query, rec.plain[q.query].hits[:TOP_K]) for q in questions}
        for name, gate in GATES.items()
    }
    by_shape: dict[str, list[str]] = {"overall": [q.id for q in questions]}
    for shape, kinds in SHAPES.items():
        by_shape[shape] = [q.id for q in questions if q.kind in kinds]
    kinds = sorted({q.kind for q in questions})
    slices = by_shape | {
        f"kind {kind}": [q.id for q in questions if q.kind == kind] for kind in kinds
    }
    runs: dict[str, dict[str, Any]] = {}
    for label, ids in slices.items():
        if not ids:
            continue
        row = {
            "question alone": _summary(ids, plain, always, None, resamples),
            "always": _summary(ids, plain, always, dict.fromkeys(ids, True), resamples),
        }
        for name, calls in decisions.items():
            row[name] = _summary(ids, plain, always, calls, resamples)
        runs[label] = row
    return {
        "corpus": s.corpus.key,
        "questions": str(s.questions.relative_to(Path(__file__).resolve().parents[1])),
        "tune": s.tune,
        "n": len(questions),
        "slices": runs,
        "per_question": {
            q.id: {
                "kind": q.kind,
                "plain": plain[q.id]["rank"],
                "always": always[q.id]["rank"],
                "calls": [name for name, d in decisions.items() if d[q.id]],
            }
            for q in questions
        },
    }


def set_arguments(doc: str, argv: list[str] | None) -> tuple[argparse.Namespace, list[Set]] | None:
    """The command line of a per-set report (this one, naive.py): the arguments and the sets
    chosen; None (said on stderr) when a chosen set's corpus is missing."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--corpus", choices=[*SETS, "all"], default="all")
    ap.add_argument("--store-base", help="keep the indexes here (reused by later runs)")
    ap.add_argument("--resamples", type=int, default=RESAMPLES, help="bootstrap resamples")
    args = ap.parse_args(argv)
    if args.resamples < 1:
        ap.error("--resamples must be at least 1")
    chosen = list(SETS.values()) if args.corpus == "all" else [SETS[args.corpus]]
    for s in chosen:
        if not s.corpus.root.is_dir():
            print(f"error: corpus {s.corpus.key} not found at {s.corpus.root}", file=sys.stderr)
            return None
    return args, chosen


def main(argv: list[str] | None = None) -> int:
    parsed = set_arguments(__doc__ or "", argv)
    if parsed is None:
        return 2
    args, chosen = parsed
    out: dict[str, Any] = {
        "top_k": TOP_K,
        "tier": "lexical",
        "strings": "the agent strings' first three (keywords, answer, rephrasing)",
        "shapes": {k: list(v) for k, v in SHAPES.items()},
        "naive": "bench/naive.py (the question alone against a naive index, per shape)",
        "sets": {},
    }
    with tempfile.TemporaryDirectory(prefix="fisk-expansion-") as scratch:
        base = Path(args.store_base or scratch)
        for s in chosen:
            out["sets"][s.name] = run_set(s, base, args.resamples)
            print(f"{s.name}: done", file=sys.stderr)
    print(json.dumps(out, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
