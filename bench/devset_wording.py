"""Which dev-set paraphrases and how-to questions are worded the way real questions are.

How real questions look (bench/devset/README.md) asks a conversational question
to be 12-30 words, to share at most one content word with its target heading, and none of the
target section's rare terms. Here a content word is a word outside the index's English stop
words (plurals folded), and a rare term is what the section writes as an identifier or an
option name: text in backticks or bold, a word joined by ``_ . / : -``, a camelCase or
PascalCase word, an acronym, a ``-Parameter``; the question shares one when it holds that whole
token (case-folded).

    python bench/devset_wording.py --corpus otel|powershell [--questions FILE] [--all]

Prints the questions that fail (``--all``: every one) and the count that pass.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from devset_questions import CORPORA, Question, load

from fisk_ls.knowledge.fts import STOP_WORDS, singular
from fisk_ls.knowledge.index.chunker import split_lines

LONG = (12, 30)
"""A conversational question's length in words (spaces apart), both ends included."""

_WORD = re.compile(r"[A-Za-z0-9]+")
_RARE = re.compile(
    r"`([^`]+)`|\*\*([^*]+)\*\*|\b\w+(?:[_./:-]\w+)+\b|\b[a-z]+[A-Z]\w*\b"
    r"|\b[A-Z][a-z]+[A-Z]\w*\b|\b[A-Z]{2,}[a-z]?\b|(?<!\w)--?[a-zA-Z][\w-]*"
)
_TOKEN = re.compile(r"[\w.\-/:]+")


def content_words(text: str) -> set[str]:
    return {
        singular(w.lower())
        for w in _WORD.findall(text)
        if w.lower() not in STOP_WORDS and len(w) > 1
    }


def rare_terms(text: str) -> set[str]:
    return {m.group(0).strip("`*").lower() for m in _RARE.finditer(text)}


def tokens(text: str) -> set[str]:
    return {t.lower() for t in _TOKEN.findall(text)} | {w.lower() for w in _WORD.findall(text)}


def section_text(q: Question, root_text: str) -> str:
    t = q.targets[0]
    lines = split_lines(root_text)
    return "\n".join(lines[t.line - 1 : t.own_end] if q.heading else lines[: t.line - 1])


def check(q: Question, section: str) -> tuple[int, set[str], set[str]]:
    """(words, content words shared with the heading, rare terms shared with the section)."""
    heading = content_words(q.query) & content_words(q.heading or "")
    return len(q.query.split()), heading, tokens(q.query) & rare_terms(section)


def passes(words: int, heading: set[str], rare: set[str]) -> bool:
    return LONG[0] <= words <= LONG[1] and len(heading) <= 1 and not rare


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", choices=list(CORPORA), required=True)
    ap.add_argument("--questions", help="another question file")
    ap.add_argument("--all", action="store_true", help="print every question, not only failures")
    args = ap.parse_args(argv)
    corpus = CORPORA[args.corpus]
    questions = [
        q
        for q in load(corpus, Path(args.questions) if args.questions else None)
        if q.lang == "en" and q.kind in ("paraphrase", "howto")
    ]
    good = 0
    for q in questions:
        text = (corpus.root / q.targets[0].path).read_text("utf-8", "replace")
        words, heading, rare = check(q, section_text(q, text))
        ok = passes(words, heading, rare)
        good += ok
        if args.all or not ok:
            print(
                f"{'ok' if ok else '--'} {q.id} {words} words; heading {sorted(heading)}; "
                f"rare {sorted(rare)}: {q.query}"
            )
    print(f"{args.corpus}: {good} of {len(questions)} paraphrase and how-to questions pass")
    return 0


if __name__ == "__main__":
    sys.exit(main())
