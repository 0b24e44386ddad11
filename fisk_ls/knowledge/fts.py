"""User text → a safe FTS5 MATCH expression, and CJK segmentation. Pure functions.

The tokenizer of the index is ``porter unicode61``, which makes one token of a whole unspaced run
of Chinese or Japanese. So each chunk also carries a ``cjk`` column with overlapping character
bigrams of its CJK runs (as Lucene's CJK analyzer does), and a query's CJK runs become the same
bigrams. Every term in the expression is double-quoted, so no input string can produce FTS5
syntax: quotes, operators (AND/OR/NOT/NEAR), ``*``, ``^``, ``:``, parentheses and control
characters are all just separators or quoted text.

One file on purpose: it is the index's idea of a word. The same rules (clitics, the word
characters, CJK runs and bigrams, the stop words) make the document side (``cjk_column``,
``document_field``, written by the indexer) and the query side (terms, phrases, the heading key,
the MATCH expression), and a rule changed on one side only would make a query miss text it
names. Its parts are small pure functions that call each other and are tested together
(tests/knowledge/test_fts.py); other languages' function words are in languages.py.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from .languages import language_stop_words, query_language
from .sanitize import strip_controls
from .settings_schema import QUERY

MAX_TERMS = 40
"""Terms kept in one expression (after stop words and duplicates are removed)."""

MAX_QUERY_CHARS = int(QUERY.max_length or 2000)
"""The longest query any front end accepts (``settings_schema.check_query``: CLI, language
server, agent tool, MCP). The core also cuts here, so a caller that skips the check (a
benchmark, an in-process agent) still pays a bounded cost."""

MAX_PHRASES = 8
"""Phrase bonuses kept in one expression (identifiers and the short-query phrase)."""

MAX_PHRASE_WORDS = 8
"""Words kept in one phrase (a longer identifier is matched by its first words)."""

# Function words that carry no topic. Dropping them keeps OR queries fast (common words match
# most chunks) and ranking sharp; a query made only of stop words keeps them. "let" and "shall"
# also stand for "let's" and "shan't" (fold_clitics runs first).
_ENGLISH_STOP_WORDS = """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its
    itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    let shall please tell explain show give find get
"""
STOP_WORDS = frozenset(_ENGLISH_STOP_WORDS.split())


def _is_cjk(ch: str) -> bool:
    o = ord(ch)
    return (
        0x3040 <= o <= 0x30FF  # hiragana, katakana
        or 0x3400 <= o <= 0x4DBF  # CJK extension A
        or 0x4E00 <= o <= 0x9FFF  # CJK unified ideographs
        or 0xAC00 <= o <= 0xD7AF  # hangul syllables
        or 0xF900 <= o <= 0xFAFF  # compatibility ideographs
        or 0x20000 <= o <= 0x2FA1F  # extensions B–F, compatibility supplement
    )


_ELISION = re.compile(r"\b(?:[cdjlmnst]|qu)['’](?=[^\W\d_])", re.IGNORECASE)
_IRREGULAR = {"ca": "can", "wo": "will", "sha": "shall"}
_IRREGULAR_NEGATION = re.compile(r"\b(ca|wo|sha)n['’]t\b", re.IGNORECASE)
_NEGATION = re.compile(r"n['’]t\b", re.IGNORECASE)
_CLITIC = re.compile(r"(?<=[^\W\d_])['’](?:s|re|ve|ll|d|m)\b", re.IGNORECASE)


def fold_clitics(text: str) -> str:
    """``text`` with the clitics of English contractions and possessives and of French elision
    removed: "what's" → "what", "collector's" → "collector", "don't" → "do", "can't" → "can",
    "l'agent" → "agent", "qu'un" → "un". The tokenizer cuts at the apostrophe, so a query
    otherwise searched for "s", "t" and "don" (in most chunks, or meaning nothing), and they
    stood in its phrases ("what's a span" → the phrase "s span")."""
    if "'" not in text and "’" not in text:
        return text
    text = _IRREGULAR_NEGATION.sub(lambda m: _IRREGULAR[m.group(1).lower()], text)
    text = _NEGATION.sub("", text)
    return _ELISION.sub("", _CLITIC.sub("", text))  # English first: "l's" is no elision


def _word_char(ch: str) -> bool:
    if ch.isalnum():
        return True
    # Combining marks belong to the word they modify (decomposed accents, Indic vowel signs).
    return unicodedata.category(ch)[0] == "M"


_ASCII_WORD = re.compile(r"[A-Za-z0-9]+")


def words(text: str) -> Iterator[tuple[str, bool]]:
    """Maximal runs of letters, digits and combining marks: (run, is_cjk).

    A CJK run and a non-CJK run are split apart even when adjacent ("API设计" → "API", "设计").
    ASCII text (most headings and queries) takes one regex pass: its letters and digits are
    exactly ``[A-Za-z0-9]``, and it holds no mark and no CJK (the character loop took half of
    a search over 6k chunks, in the heading boost's keys).
    """
    if text.isascii():
        return ((run, False) for run in _ASCII_WORD.findall(text))
    return _unicode_words(text)


def _unicode_words(text: str) -> Iterator[tuple[str, bool]]:
    run: list[str] = []
    run_cjk = False
    for ch in text:
        if _word_char(ch):
            cjk = _is_cjk(ch)
            if run and cjk != run_cjk:
                yield "".join(run), run_cjk
                run = []
            run.append(ch)
            run_cjk = cjk
        elif run:
            yield "".join(run), run_cjk
            run = []
    if run:
        yield "".join(run), run_cjk


_CJK_CLASS = (
    "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002fa1f]"
)


@functools.cache
def cjk_runs() -> re.Pattern[str]:
    """Maximal runs of CJK characters (the ranges of ``_is_cjk``). Compiled on first use: the
    class takes ~6 ms to compile (``re`` maps the whole BMP for it), a tenth of a search
    command's start-up, and an ASCII query never needs it."""
    return re.compile(_CJK_CLASS + "+")


def has_cjk(text: str) -> bool:
    return not text.isascii() and cjk_runs().search(text) is not None


def cjk_bigrams(run: str) -> list[str]:
    """Overlapping bigrams of one CJK run; a single character stays itself."""
    if len(run) < 2:
        return [run] if run else []
    return [run[i : i + 2] for i in range(len(run) - 1)]


def cjk_column(text: str) -> str | None:
    """The ``cjk`` column value for a chunk: space-separated bigrams, or None without CJK."""
    if text.isascii() or not has_cjk(text):  # isascii: one pass in C, most chunks
        return None
    grams: list[str] = []
    for run in cjk_runs().findall(text):
        grams.extend(cjk_bigrams(run))
    return " ".join(grams)


def document_field(title: str, description: str, path: str, first_section: str = "") -> str:
    """The ``doc`` column of a document's chunks: title, description and path, one per line.

    The title is left out when it already heads the breadcrumbs (``first_section`` is the first
    chunk's), so its words are not counted twice. The path's separators (``/ . _ -``) split
    into words under the index tokenizer: ``docs/collector/configuration.md`` is found by
    "collector configuration"."""
    if title and first_section.split(" > ", 1)[0] == title:
        title = ""
    return "\n".join(p for p in (title, description, path) if p)


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


# Linear time: a match may only start where a word starts (the look-behind), and the possessive
# runs never give characters back, so a long run of word characters fails once, not once per
# start position (the plain pattern is quadratic on "x" * 8192).
_IDENTIFIER = re.compile(r"(?<![^\W_])[^\W_]++(?:[_\-./:][^\W_]++)+")


@functools.lru_cache(maxsize=64)
def stop_words(query: str) -> frozenset[str]:
    """The stop words of ``query``: English's, plus the function words of the Latin-script
    language it is written in ("qué es un span": Spanish, so "qué", "es" and "un" go). Only the
    query's own language's are added, so an English question keeps "son" or "die". Cached: one
    search asks it for its terms, phrases, heading terms and compounds."""
    extra = language_stop_words(query_language(query[:MAX_QUERY_CHARS]))
    return _with_stop_words(extra) if extra else STOP_WORDS


@functools.cache
def _with_stop_words(extra: frozenset[str]) -> frozenset[str]:
    return STOP_WORDS | extra


# What-is questions, by language. ``term`` keeps the frame in the text (its words are stop
# words), ``abbr`` and ``def`` drop it (its words are not), ``bare`` is a CJK term without its
# frame (CJK text has no stop words: the frame's bigrams would be search terms).
_DEFINITIONS = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
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
)
_CJK_DEFINITIONS = tuple(
    re.compile(pattern)
    for pattern in (
        # ja: "スパンとは", "プロデューサースパンとは何ですか", "バゲッジって何", "スパンは何ですか"
        r"^\s*(?P<bare>.+?)\s*(?:とは(?:\s*(?:何|なに|なん))?|って\s*(?:何|なに|なん))"
        r"\s*(?:ですか|でしょうか|なの|か)?\s*[？?]?\s*$",
        r"^\s*(?P<bare>.+?)\s*は\s*(?:何|なん)\s*(?:ですか|でしょうか)\s*[？?]?\s*$",
        # zh: "什么是 Span", "什么叫实体", "Tracer Provider 是什么", "实体是什么意思？"
        r"^\s*(?:什么是|什麼是|什么叫做?|什麼叫做?|何为|何謂)\s*(?P<bare>.+?)\s*[？?]?\s*$",
        r"^\s*(?P<bare>.+?)\s*(?:是什么意思|是什麼意思|指的是什么|是指什么|是什么|是什麼|是啥)\s*(?:呢)?"
        r"\s*[？?]?\s*$",
    )
)
CJK_DEFINITION_CHARS = 40
"""A CJK what-is question is at most this long (its term has no spaces to count words by)."""


def singular(word: str) -> str:
    """An English plural folded to its singular, conservatively ("propagators" → "propagator",
    "policies" → "policy", "batches" → "batch"; "status", "analysis", "class" stay). Unlike
    the index's Porter stems it keeps words apart that only share a stem ("propagation" and
    "propagator" are both "propag")."""
    n = len(word)
    if n > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if n > 4 and word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if n > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def heading_key(text: str, stop: frozenset[str] = STOP_WORDS) -> tuple[str, ...]:
    """What a heading says, for matching it against a query's words: its words case-folded,
    stop words dropped (unless that leaves none), plurals folded (:func:`singular`). "What is
    Observability?" and "what is observability" share the key ("observability",); with the
    query's stop words (:func:`stop_words`), "Qu'est-ce que l'observabilité ?" and
    "observabilité" do."""
    plain = [unicodedata.normalize("NFC", w).casefold() for w, _ in words(fold_clitics(text))]
    kept = [w for w in plain if w not in stop] or plain
    return tuple(singular(w) for w in kept)


def may_have_key(heading: str, key: tuple[str, ...]) -> bool:
    """False only when ``heading_key(heading)`` cannot be ``key``: a cheap test first, for an
    ASCII heading (a word of the key is its heading word with a plural folded, so all of it but
    its last letter is in the heading with its clitics folded: "policy" from "policies",
    "shall" from "Shan't"). The heading boost asks it of
    200 candidates' headings per query; computing every key took a third of a search."""
    if not heading.isascii():
        return True
    low = fold_clitics(heading).lower()
    return all((w[:-1] or w) in low for w in key)


COMPOUND_WORDS = 3
"""Most words a query may have for :func:`compound_terms` to join them."""

_JOINED = re.compile(r"[^\W_][_./:]+[^\W_]")
"""Words joined as an identifier's parts are (``OTEL_SERVICE_NAME``, ``service.name``)."""


SHORT_QUERY_TERMS = 8
"""A query with more terms than this is a long one (a pasted paragraph, a fuzzer's string):
front ends may schedule it apart from ordinary searches (the language server does)."""

_RUN = re.compile(r"[^\W_]+")


def is_long_query(text: str) -> bool:
    """More than ``SHORT_QUERY_TERMS`` words that are not stop words (the query's own:
    :func:`stop_words`, so a Spanish question's function words do not make it long; a CJK run
    counts as its bigrams). Cheap on purpose — it stops counting at the limit — since a front
    end may ask on its event loop."""
    return _is_long(text, stop_words(text))


def _is_long(text: str, stop: frozenset[str]) -> bool:
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


def question_text(text: str) -> str:
    """``text`` without the frame of a question that only asks what a term means: "what does
    OTLP stand for" → "OTLP", "define resource detectors" → "resource detectors". The frame's
    words ("stand", "mean", "define") name no topic, and as rare words they outweighed the term
    in BM25 ("stand up an OpAMP server" ranked first). "what is X in Y" keeps its context. A
    long text is no such question, whatever its first words ("Definition of a large scale
    cyber attack is extremely vague ..."). A CJK question loses its frame: "スパンとは" →
    "スパン", "什么是实体" → "实体"."""
    clean = strip_controls(text[:MAX_QUERY_CHARS])
    m = _definition(clean, stop_words(clean))
    if m is None:
        return text
    found = m.groupdict()
    return found.get("abbr") or found.get("def") or found.get("bare") or text


def _definition(text: str, stop: frozenset[str]) -> re.Match[str] | None:
    """The what-is match of a short query (``_DEFINITIONS``; ``_CJK_DEFINITIONS`` for CJK);
    ``text`` has its controls stripped and is cut at ``MAX_QUERY_CHARS``."""
    if has_cjk(text):
        if len(text.strip()) > CJK_DEFINITION_CHARS:
            return None
        patterns = _CJK_DEFINITIONS
    elif _is_long(text, stop):
        return None
    else:
        patterns = _DEFINITIONS
    for pattern in patterns:
        m = pattern.match(text)
        if m is not None:
            return m
    return None


@dataclass(frozen=True)
class Asked:
    """One search string read once by the index's rules: the query side's terms, phrases,
    compound words and heading words all come from these fields, so one search normalises its
    text, finds its language's stop words, matches the what-is frame and splits the words once.

    ``question``: what a what-is frame leaves of the text (its controls stripped, cut at
    ``MAX_QUERY_CHARS``; :func:`question_text`), clitics folded; ``runs``: its words;
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
        """Search terms, NFC and case-folded, de-duplicated, stop words removed (unless all
        are), in order, then the CJK bigrams; at most ``MAX_TERMS``."""
        grams = [g for run, cjk in self.runs if cjk for g in cjk_bigrams(run)]
        kept = [w for w in self.folded if w not in self.stop] or list(self.folded)
        return list(dict.fromkeys([*kept, *grams]))[:MAX_TERMS]

    def compounds(self) -> list[str]:
        """See :func:`compound_terms`."""
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
        """The terms, then the compound words a short string spells (:func:`search_terms`)."""
        terms = self.terms()
        extra = [c for c in self.compounds() if c not in terms]
        return [*terms, *extra][:MAX_TERMS] if extra else terms

    def phrases(self) -> list[str]:
        """See :func:`query_phrases`."""
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
        """See :func:`heading_terms`."""
        if self.named is None:
            return []
        plain = [unicodedata.normalize("NFC", w).casefold() for w, _ in self.named]
        kept = [w for w in plain if w not in self.stop]
        return kept if 1 <= len(kept) <= 4 else []


def query_phrases(text: str) -> list[str]:
    """Phrases that earn a bonus on top of the single terms (pure proximity signals):

    * compound identifiers (``OTEL_EXPORTER_OTLP_ENDPOINT`` → "otel exporter otlp endpoint"), so
      a chunk holding the identifier outranks chunks sharing only its parts (every ``*_ENDPOINT``);
    * a short query (2–5 words, stop words dropped) as a whole, so "tail sampling" prefers the
      section that says it ("what is a span" is not a phrase: a sentence asking it is no answer).

    Bounded like the terms: at most ``MAX_PHRASES`` phrases of at most ``MAX_PHRASE_WORDS``
    words, each made only of words among the query's first ``MAX_TERMS`` terms (or stop words),
    so a query of many hyphenated pairs costs no more than one of ``MAX_TERMS`` plain words.
    A definitional question's frame is dropped first (:func:`question_text`).
    """
    return Asked.of(text).phrases()


def heading_terms(text: str) -> list[str]:
    """The words of a short query that a section heading would be (stop words dropped, at most
    four; none for longer queries, nor CJK ones but what-is questions): "what is a span" →
    ["span"]. A definitional question names its term: "what is a connector in the collector" →
    ["connector"], "what does OTLP stand for" → ["otlp"], "¿qué es un span?" → ["span"],
    "スパンとは" → ["スパン"]."""
    return Asked.of(text).heading_terms()


def query_terms(text: str) -> list[str]:
    """Search terms of a query, lower-cased, de-duplicated, stop words removed, in order (a
    definitional question's frame dropped: :func:`question_text`)."""
    return Asked.of(text).terms()


def search_terms(text: str) -> list[str]:
    """What the index is searched for: the query's terms (:func:`query_terms`), then the
    compound words a short query spells (:func:`compound_terms`)."""
    return Asked.of(text).search_terms()


def compound_terms(text: str) -> list[str]:
    """What a short query's words spell when written as one identifier: "prefix length" →
    "prefixlength", "batch span processor" → "batchspan", "spanprocessor",
    "batchspanprocessor". The index keeps ``PrefixLength`` and ``BatchSpanProcessor`` as one
    token each, so without these the words could never match the parameter or class they
    name. Only for 2 to ``COMPOUND_WORDS`` words apart from stop words, typed apart or with a
    hyphen ("self-signed"): an identifier such as ``OTEL_SERVICE_NAME`` is matched by its
    phrase instead, and a longer question's neighbouring words are no name (measured:
    bench/tuning.md, "words that spell an identifier")."""
    return Asked.of(text).compounds()


def or_expression(phrases: Sequence[str], terms: Sequence[str]) -> str:
    """The phrases and then the terms, each quoted, joined by OR, in the order given (FTS5
    numbers a query's phrases in that order, and ``bm25()`` sums them in it)."""
    return " OR ".join([*map(_quote, phrases), *map(_quote, terms)])
