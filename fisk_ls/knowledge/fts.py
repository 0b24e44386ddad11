"""The index's idea of a word, and user text → a safe FTS5 MATCH expression. Pure functions.

The tokenizer of the index is ``porter unicode61``, which makes one token of a whole unspaced run
of Chinese or Japanese. So each chunk also carries a ``cjk`` column with overlapping character
bigrams of its CJK runs (as Lucene's CJK analyzer does), and a query's CJK runs become the same
bigrams. Every term in the expression is double-quoted, so no input string can produce FTS5
syntax: quotes, operators (AND/OR/NOT/NEAR), ``*``, ``^``, ``:``, parentheses and control
characters are all just separators or quoted text.

The same rules (clitics, the word characters, CJK runs and bigrams, the stop words, a heading's
key) make the document side (``cjk_column``, ``document_field``, written by the indexer) and the
query side (question.py reads a search string with them; ``or_expression`` quotes what it
gives), so a rule changed here changes both sides at once. Other languages' function words are
in languages.py.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterator, Sequence

from .languages import language_stop_words, query_language
from .settings_schema import QUERY

MAX_TERMS = 40
"""Terms kept in one expression (after stop words and duplicates are removed)."""

MAX_QUERY_CHARS = int(QUERY.max_length or 2000)
"""The longest query any front end accepts (``settings_checks.check_query``: CLI, language
server, agent tool, MCP). The core also cuts here, so a caller that skips the check (a
benchmark, an in-process agent) still pays a bounded cost."""


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
    exactly ``[A-Za-z0-9]``, and it holds no mark and no CJK.
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
    """Maximal runs of CJK characters (the ranges of ``_is_cjk``). Compiled on first use
    (``re`` maps the whole BMP for the class), since an ASCII query never needs it."""
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


@functools.lru_cache(maxsize=8192)
def heading_key(text: str, stop: frozenset[str] = STOP_WORDS) -> tuple[str, ...]:
    """What a heading says, for matching it against a query's words: its words case-folded,
    stop words dropped (unless that leaves none), plurals folded (:func:`singular`). "What is
    Observability?" and "what is observability" share the key ("observability",); with the
    query's stop words (:func:`stop_words`), "Qu'est-ce que l'observabilité ?" and
    "observabilité" do.

    Remembered per heading: the heading boost asks it of the candidates' headings that may
    match (a translated heading always may: the cheap test is for ASCII), and a reader sees
    the same headings again."""
    plain = [unicodedata.normalize("NFC", w).casefold() for w, _ in words(fold_clitics(text))]
    kept = [w for w in plain if w not in stop] or plain
    return tuple(singular(w) for w in kept)


def may_have_key(heading: str, key: tuple[str, ...]) -> bool:
    """False only when ``heading_key(heading)`` cannot be ``key``: a cheap test first, for an
    ASCII heading (a word of the key is its heading word with a plural folded, so all of it but
    its last letter is in the heading with its clitics folded: "policy" from "policies",
    "shall" from "Shan't"), so the heading boost computes the keys of few of its candidates'
    headings."""
    if not heading.isascii():
        return True
    low = fold_clitics(heading).lower()
    return all((w[:-1] or w) in low for w in key)


def or_expression(phrases: Sequence[str], terms: Sequence[str]) -> str:
    """The phrases and then the terms, each quoted, joined by OR, in the order given (FTS5
    numbers a query's phrases in that order, and ``bm25()`` sums them in it)."""
    return " OR ".join([*map(_quote, phrases), *map(_quote, terms)])
