"""A search string read once by the index's word rules (fts.py): the frame of a what-is
question, the search terms, the phrases, the compound words a short string spells, the words a
heading would be, and whether it is a long string. Pure functions; query.py keeps what they
give in a ``SearchString``.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from typing import NamedTuple

from .fts import (
    MAX_QUERY_CHARS,
    MAX_TERMS,
    cjk_bigrams,
    fold_clitics,
    has_cjk,
    stop_words,
    words,
)
from .sanitize import strip_controls

MAX_PHRASES = 8
"""Phrase bonuses kept in one expression (identifiers and the short-query phrase)."""

MAX_PHRASE_WORDS = 8
"""Words kept in one phrase (a longer identifier is matched by its first words)."""

# Linear time: a match may only start where a word starts (the look-behind), and the possessive
# runs never give characters back, so a long run of word characters fails once, not once per
# start position (the plain pattern is quadratic on "x" * 8192).
_IDENTIFIER = re.compile(r"(?<![^\W_])[^\W_]++(?:[_\-./:][^\W_]++)+")


# What-is questions, by language. ``term`` keeps the frame in the text (its words are stop
# words), ``abbr`` and ``def`` drop it (its words are not), ``bare`` is a CJK term without its
# frame (CJK text has no stop words: the frame's bigrams would be search terms). Compiled on
# first use (``_frames``): about 2 ms that most searches, not being what-is questions, skip.
_DEFINITIONS = (
    r"^\s*(?:what|who)(?:'s|\s+is|\s+are|\s+was|\s+were)\s+(?:an?\s+|the\s+)?(?P<term>.+?)"
    r"(?:\s+(?:in|of|for|within|inside|on)\s+.+)?\s*\??\s*$"
    r"|^\s*what\s+(?:does|do)\s+(?P<abbr>.+?)\s+(?:stand\s+for|mean)\s*\??\s*$"
    r"|^\s*(?:define|definition\s+of|meaning\s+of)\s+(?:an?\s+|the\s+)?(?P<def>.+?)\s*\??\s*$",
    # es: "¿qué es un span?", "qué son las convenciones semánticas"
    r"^\s*¿?\s*(?:qué|que|cuál|cual)\s+(?:es|son)\s+(?:(?:una?|el|la|los|las|lo)\s+)?"
    r"(?P<term>.+?)(?:\s+(?:en|dentro\s+de)\s+.+)?\s*\??\s*$",
    # pt: "o que é um log record", "o que é um pipeline no collector"
    r"^\s*(?:o\s+)?que\s+(?:é|são)\s+(?:(?:uma?|os?|as?)\s+)?"
    r"(?P<term>.+?)(?:\s+(?:em|no|na|nos|nas)\s+.+)?\s*\??\s*$",
    # fr: "qu'est-ce qu'un span ?", "qu'est-ce que l'observabilité ?", "c'est quoi un span"
    r"^\s*(?:qu['’]est[- ]ce\s+qu(?:e\s+|['’])|c['’]est\s+quoi\s+)"
    r"(?:(?:une?|les?|la|des)\s+|l['’])?(?P<term>.+?)(?:\s+(?:dans|en)\s+.+)?\s*\??\s*$",
    # de: "was ist ein Span"
    r"^\s*was\s+(?:ist|sind)\s+(?:(?:eine?n?|der|die|das)\s+)?"
    r"(?P<term>.+?)(?:\s+(?:in|im)\s+.+)?\s*\??\s*$",
    # it: "cos'è uno span", "che cosa sono le metriche"
    r"^\s*(?:che\s+)?cos(?:['’]\s*|a\s+)(?:è|sono)\s+(?:(?:un[oa]?|il|lo|la|i|gli|le)\s+|l['’])?"
    r"(?P<term>.+?)(?:\s+(?:in|nel|nella)\s+.+)?\s*\??\s*$",
)
_CJK_DEFINITIONS = (
    # ja: "スパンとは", "プロデューサースパンとは何ですか", "バゲッジって何", "スパンは何ですか"
    r"^\s*(?P<bare>.+?)\s*(?:とは(?:\s*(?:何|なに|なん))?|って\s*(?:何|なに|なん))"
    r"\s*(?:ですか|でしょうか|なの|か)?\s*[？?]?\s*$",
    r"^\s*(?P<bare>.+?)\s*は\s*(?:何|なん)\s*(?:ですか|でしょうか)\s*[？?]?\s*$",
    # zh: "什么是 Span", "什么叫实体", "Tracer Provider 是什么", "实体是什么意思？"
    r"^\s*(?:什么是|什麼是|什么叫做?|什麼叫做?|何为|何謂)\s*(?P<bare>.+?)\s*[？?]?\s*$",
    r"^\s*(?P<bare>.+?)\s*(?:是什么意思|是什麼意思|指的是什么|是指什么|是什么|是什麼|是啥)\s*(?:呢)?"
    r"\s*[？?]?\s*$",
)
DEFINITION_STARTS = "¿cdmoqw"
"""The first character (lower-cased, after white space) a question of ``_DEFINITIONS`` can
have: each pattern's frame starts with one of these (what, who, define, definition, meaning;
qué, que, cuál, cual; o que; qu'est-ce, c'est; was; che, cos), so a query starting otherwise
matches none of them."""

CJK_DEFINITION_CHARS = 40
"""A CJK what-is question is at most this long (its term has no spaces to count words by)."""


COMPOUND_WORDS = 3
"""Most words a query may have for :func:`compound_terms` to join them."""

_JOINED = re.compile(r"[^\W_][_./:]+[^\W_]")
"""Words joined as an identifier's parts are (``OTEL_SERVICE_NAME``, ``service.name``)."""


SHORT_QUERY_TERMS = 8
"""A query with more terms than this is a long one (a pasted paragraph, a fuzzer's string):
front ends may schedule it apart from ordinary searches (the language server does)."""

_RUN = re.compile(r"[^\W_]+")


def is_long(text: str, stop: frozenset[str] | None = None) -> bool:
    """More than ``SHORT_QUERY_TERMS`` words that are not stop words (``stop``, else the text's
    own: ``fts.stop_words``, so a Spanish question's function words do not make it long; a CJK
    run counts as its bigrams). Cheap on purpose (it stops counting at the limit), since a front
    end may ask on its event loop."""
    if stop is None:
        stop = stop_words(text)
    n = 0
    for m in _RUN.finditer(text, 0, MAX_QUERY_CHARS):
        run = m.group()
        if has_cjk(run):
            n += max(1, len(run) - 1)
        elif run.casefold() not in stop:
            n += 1
        if n > SHORT_QUERY_TERMS:
            return True
    return False


@functools.cache
def _frames(patterns: tuple[str, ...], flags: int) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(pattern, flags) for pattern in patterns)


def _definition(text: str, stop: frozenset[str]) -> re.Match[str] | None:
    """The what-is match of a short query (``_DEFINITIONS``; ``_CJK_DEFINITIONS`` for CJK);
    ``text`` has its controls stripped and is cut at ``MAX_QUERY_CHARS``."""
    if has_cjk(text):
        if len(text.strip()) > CJK_DEFINITION_CHARS:
            return None
        patterns = _frames(_CJK_DEFINITIONS, 0)
    elif text.lstrip()[:1].lower() not in DEFINITION_STARTS or is_long(text, stop):
        return None
    else:
        patterns = _frames(_DEFINITIONS, re.IGNORECASE)
    for pattern in patterns:
        m = pattern.match(text)
        if m is not None:
            return m
    return None


class Asked(NamedTuple):
    """One search string read once by the index's rules: the query side's terms, phrases,
    compound words and heading words all come from these fields, so one search normalises its
    text, finds its language's stop words, matches the what-is frame and splits the words once.

    ``question``: what a what-is frame leaves of the text (its controls stripped, cut at
    ``MAX_QUERY_CHARS``), clitics folded: a question that only asks what a term means loses its
    frame ("what does OTLP stand for" → "OTLP", "define resource detectors" → "resource
    detectors", "スパンとは" → "スパン"): the frame's words ("stand", "mean", "define") name no
    topic, and as rare words they outweighed the term in BM25. "what is X in Y" keeps its
    context; a long text is no such question, whatever its first words; ``runs``: its words;
    ``folded``: the words of its non-CJK runs, NFC and case-folded, in order. ``named``: the
    words of the term a what-is question names ("connector" of "what is a connector in the
    collector"), of the whole text otherwise; None for CJK text that asks no what-is question
    (it has no heading words)."""

    stop: frozenset[str]
    question: str
    runs: tuple[tuple[str, bool], ...]
    folded: tuple[str, ...]
    named: tuple[tuple[str, bool], ...] | None

    @classmethod
    def of(cls, text: str) -> Asked:
        clean = strip_controls(text[:MAX_QUERY_CHARS])
        stop = stop_words(clean)
        m = _definition(clean, stop)
        found = m.groupdict() if m is not None else {}
        asked = found.get("abbr") or found.get("def") or found.get("bare") or clean
        question = fold_clitics(asked)
        runs = tuple(words(question))
        term = found.get("term") or asked
        named: tuple[tuple[str, bool], ...] | None = runs
        if m is None and has_cjk(clean):
            named = None
        elif term != asked:
            named = tuple(words(fold_clitics(term)))
        folded = tuple(unicodedata.normalize("NFC", w).casefold() for w, cjk in runs if not cjk)
        return cls(stop, question, runs, folded, named)

    def terms(self) -> list[str]:
        """Search terms of the question (its frame dropped), NFC and case-folded, de-duplicated,
        stop words removed (unless all are), in order, then the CJK bigrams; at most
        ``MAX_TERMS``."""
        grams = [g for run, cjk in self.runs if cjk for g in cjk_bigrams(run)]
        kept = [w for w in self.folded if w not in self.stop] or list(self.folded)
        return list(dict.fromkeys([*kept, *grams]))[:MAX_TERMS]

    def compounds(self) -> list[str]:
        """What a short string's words spell when written as one identifier: "prefix length" →
        "prefixlength", "batch span processor" → "batchspan", "spanprocessor",
        "batchspanprocessor". The index keeps ``PrefixLength`` and ``BatchSpanProcessor`` as one
        token each, so without these the words could never match the parameter or class they
        name. Only for 2 to ``COMPOUND_WORDS`` words apart from stop words, typed apart or with
        a hyphen ("self-signed"): an identifier such as ``OTEL_SERVICE_NAME`` is matched by its
        phrase instead, and a longer question's neighbouring words are no name."""
        tokens = self.question.split()
        if len(tokens) > 3 * COMPOUND_WORDS:
            return []
        if any(_JOINED.search(token) for token in tokens):
            return []  # an identifier: its phrase matches it
        if any(cjk for _, cjk in self.runs):
            return []
        spelled = [w for w in self.folded if w not in self.stop]
        if not 2 <= len(spelled) <= COMPOUND_WORDS:
            return []
        joined = [a + b for a, b in itertools.pairwise(spelled)]
        return [*joined, "".join(spelled)] if len(spelled) > 2 else joined

    def search_terms(self) -> list[str]:
        """What the index is searched for: the terms (:meth:`terms`), then the compound words
        a short string spells (:meth:`compounds`)."""
        terms = self.terms()
        extra = [c for c in self.compounds() if c not in terms]
        return [*terms, *extra][:MAX_TERMS] if extra else terms

    def phrases(self) -> list[str]:
        """Phrases that earn a bonus on top of the single terms (pure proximity signals):

        * compound identifiers (``OTEL_EXPORTER_OTLP_ENDPOINT`` → "otel exporter otlp
          endpoint"), so a chunk holding the identifier outranks chunks sharing only its parts
          (every ``*_ENDPOINT``);
        * a short string (2–5 words, stop words dropped) as a whole, so "tail sampling" prefers
          the section that says it ("what is a span" is not a phrase: a sentence asking it is
          no answer).

        Bounded like the terms: at most ``MAX_PHRASES`` phrases of at most ``MAX_PHRASE_WORDS``
        words, each made only of words among the first ``MAX_TERMS`` terms (or stop words), so
        a string of many hyphenated pairs costs no more than one of ``MAX_TERMS`` plain words."""
        stop, text = self.stop, self.question
        plain = [w.casefold() for w, cjk in self.runs if not cjk]
        folded = self.folded
        terms = list(dict.fromkeys([w for w in folded if w not in stop] or folded))
        kept = set(terms[:MAX_TERMS]) | stop
        phrases: dict[str, None] = {}
        for m in _IDENTIFIER.finditer(text):
            if len(phrases) >= MAX_PHRASES:
                break
            if has_cjk(m.group(0)):
                continue
            parts = [w.casefold() for w, _ in words(m.group(0))][:MAX_PHRASE_WORDS]
            if all(w in stop for w in parts):  # "est-ce", "how-to": a frame, not an identifier
                continue
            if all(unicodedata.normalize("NFC", w) in kept for w in parts):
                phrases[" ".join(parts)] = None
        out = list(phrases)[:MAX_PHRASES]
        bare = [w for w in plain if w not in stop] or plain
        if 2 <= len(bare) <= 5 and not has_cjk(text):
            whole = " ".join(bare)
            if whole not in phrases:
                out = [*out[: MAX_PHRASES - 1], whole]
        return out

    def heading_terms(self) -> list[str]:
        """The words of a short string that a section heading would be (stop words dropped, at
        most four; none for longer strings, nor CJK ones but what-is questions): "what is a
        span" → ["span"]. A what-is question names its term: "what is a connector in the
        collector" → ["connector"], "what does OTLP stand for" → ["otlp"], "¿qué es un span?" →
        ["span"], "スパンとは" → ["スパン"]."""
        if self.named is None:
            return []
        plain = [unicodedata.normalize("NFC", w).casefold() for w, _ in self.named]
        kept = [w for w in plain if w not in self.stop]
        return kept if 1 <= len(kept) <= 4 else []
