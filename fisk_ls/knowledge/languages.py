"""Pure: translated copies of a documentation site, and which of them a query is asking for.

Doc sites keep one folder per language (Hugo ``content/en/``, ``content/ja/``; Docusaurus
``i18n/fr/``; mkdocs ``docs/de/``), so a question asked in English meets the Portuguese and
Japanese copies of the page it wants, and often one of them ranks first (it is shorter, or an
identifier is all its BM25 can match). A reader wants the copy in the language they asked in.

A *language folder* is a path segment that is a language tag (``ja``, ``pt-br``, ``zh_CN``);
the folders are only taken as translations when the candidates of one query hold at least two
different ones under the same parent, one of them in the query's language (so a repository
whose ``docs/ml/`` and ``docs/ts/`` are topics, not Malayalam and Tsonga, is left alone). The
query's language comes from its script (kana: Japanese, Hangul: Korean, other Han: Chinese) or,
for Latin script, from its function words. A query with none (an identifier, a bare term) says
nothing about its asker, so it only breaks near-ties: the language most of its candidates are
in (a site's source language, which has the most pages) wins when a copy in another language
scores within ``NEAR_TIE`` of it ("OTEL_EXPORTER_OTLP_ENDPOINT": the English table before its
shorter Portuguese copy). Treating such a query as English outright lost Japanese and Chinese
questions that were an identifier alone, asked of their own language's page; the near-tie rule
moved none of them (bench/tuning.md, "Clitics, the near-tie language rule").

When the front end knows the *reader's* language (the editor's display language from LSP's
``initialize``, or the locale, ``LC_ALL`` / ``LC_MESSAGES`` / ``LANG``, a command runs in), a
query in no language takes that one as a query in it would: "OTEL_EXPORTER_OTLP_ENDPOINT" from
a Japanese editor shows the Japanese page, from an English one the English page (bench/tuning.md,
"the reader's language"). The query's own words still win over it: a French question from an English
desktop is French. A ``C`` or ``POSIX`` locale says nothing.
"""

from __future__ import annotations

import functools
import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence

LANGUAGES = frozenset(
    {
        *("ar", "bg", "bn", "ca", "cs", "da", "de", "el", "en", "es", "et", "fa", "fi", "fr"),
        *("he", "hi", "hr", "hu", "id", "it", "ja", "ko", "lt", "lv", "ms", "nb", "nl", "no"),
        *("pl", "pt", "ro", "ru", "sk", "sl", "sr", "sv", "th", "tr", "uk", "ur", "vi", "zh"),
    }
)
"""ISO 639-1 codes of the languages documentation sites are commonly translated into."""

_TAG = re.compile(r"^(?P<base>[a-z]{2})(?:[-_][a-z]{2,4})?$", re.IGNORECASE)

OTHER_LANGUAGE = 0.5
"""Score factor for a translated copy in another language than the query's."""

NEAR_TIE = 0.95
"""Score factor, for a query in no known language, of a copy outside the candidates' most common
language: only copies within 5% of another candidate change places (0.9 began to move French
and Japanese identifier questions off their own page; 0.98 moved half as many English ones)."""

_FUNCTION_WORDS: dict[str, frozenset[str]] = {
    lang: frozenset(words.split())
    for lang, words in {
        "en": "the a an is are was what how why when where which who does do can should i my to"
        " of in for with and or not it this that from on by",
        "es": "el la los las de del que en y un una por con para es se su al lo como más pero"
        " sus cuando está qué cómo cuándo dónde porque sin sobre este esta entre también hay"
        " puedo puede debo cuál",
        "pt": "o os as de do da dos das que em e um uma por com para é se seu sua ao como mais"
        " mas quando está não qual quais onde porque sem sobre este esta entre também posso"
        " pode devo",
        "fr": "le la les de du des que et un une est en pour avec dans sur pas ne qui ce cette"
        " comment quand où pourquoi je peut dois quel quelle sont",
        "de": "der die das den dem des und ist ein eine einen mit für nicht ich wie was wann wo"
        " warum kann muss auf im zu von",
        "it": "il lo la gli le di del della che e un una è per con non come quando dove perché"
        " posso può devo sono nel nella",
    }.items()
}
"""Frequent function words per language (Latin script), to tell the query's language."""

_MORE_STOP_WORDS: dict[str, str] = {
    "es": "son mi mis me le les o u ni cual cuales cuáles quién quien donde esto eso ese esa"
    " estos estas ya muy tiene",
    "pt": "são no na nos nas pelo pela pelos pelas num numa ou eu meu minha meus minhas isso"
    " isto esse essa há tem",
    "fr": "quoi qu au aux se sa son ses il elle on ou mon ma mes nous vous leur leurs y ces"
    " cet par si faut",
    "de": "einer eines zum zur über bei oder wir man sie es",
    "it": "cosa cos i uno nei nelle al alla gli o si mio mia",
}
"""Function words that only the stop words add: left out of the detection lists above, where
some would outvote English ("me", "no", "son" in an English question)."""


@functools.cache
def language_stop_words(lang: str | None) -> frozenset[str]:
    """The function words of a Latin-script language other than English, which carry no topic
    in a query written in it ("qué es un span": "qué", "es", "un"); empty for English (its list
    is ``fts.STOP_WORDS``), CJK and unknown languages."""
    if lang is None or lang == "en" or lang not in _FUNCTION_WORDS:
        return frozenset()
    return _FUNCTION_WORDS[lang] | frozenset(_MORE_STOP_WORDS.get(lang, "").split())


_WORD = re.compile(r"[^\W\d_]+")
"""A word, cut at apostrophes like the index's tokenizer: "qu'est-ce" counts "est" and "ce"."""


def language_of_path_segment(segment: str) -> str | None:
    """The base language code a folder name stands for (``pt-BR`` → ``pt``), else None."""
    m = _TAG.match(segment)
    if m is None:
        return None
    base = m.group("base").lower()
    return base if base in LANGUAGES else None


_LANGUAGES_OF: dict[str, tuple[str, ...]] = {
    w: tuple(lang for lang, fw in _FUNCTION_WORDS.items() if w in fw)
    for w in frozenset().union(*_FUNCTION_WORDS.values())
}
"""Each function word → the languages whose list holds it, in ``_FUNCTION_WORDS`` order: a
query's words are looked up once each, not once per language."""

_ASCII_LETTER = re.compile(r"[A-Za-z]")


def query_language(text: str) -> str | None:
    """The language a query is written in, or None when its script says nothing we handle."""
    if text.isascii():  # no kana, hangul or han; its letters are Latin
        return _latin_language(text) if _ASCII_LETTER.search(text) else None
    kana = hangul = han = latin = 0
    for ch in text:
        o = ord(ch)
        if 0x3040 <= o <= 0x30FF or 0x31F0 <= o <= 0x31FF:
            kana += 1
        elif 0xAC00 <= o <= 0xD7AF or 0x1100 <= o <= 0x11FF:
            hangul += 1
        elif 0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF:
            han += 1
        elif (ch.isascii() and ch.isalpha()) or 0xC0 <= o <= 0x24F:
            latin += 1
    if kana:
        return "ja"
    if hangul:
        return "ko"
    if han:
        return "zh"
    if not latin:
        return None
    return _latin_language(text)


def _latin_language(text: str) -> str | None:
    """The language of a query in Latin script, by the function words it holds."""
    counts = dict.fromkeys(_FUNCTION_WORDS, 0)
    for w in _WORD.findall(text):
        for lang in _LANGUAGES_OF.get(w.casefold(), ()):
            counts[lang] += 1
    best = max(counts.values())
    if best == 0:  # an identifier or a bare term: any language's page may be the one wanted
        return None
    leaders = [lang for lang, n in counts.items() if n == best]
    if "en" in leaders:
        return "en"
    return leaders[0] if len(leaders) == 1 else None


def locale_language(tag: str | None) -> str | None:
    """The base language of a locale or language tag (``ja_JP.UTF-8``, ``pt-BR``, ``zh-cn``,
    ``en``), or None for none we know (``C``, ``POSIX``, ``C.UTF-8``, empty)."""
    if not tag:
        return None
    base = tag.strip().split(".", 1)[0].split("@", 1)[0]
    return language_of_path_segment(base)


LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")
"""The locale variables that name the language a program talks in, strongest first (POSIX)."""


def environment_language(environ: Mapping[str, str]) -> str | None:
    """The reader's language from a process environment: the first of ``LOCALE_VARIABLES``
    that is set decides (an ``LC_ALL=C`` overrides ``LANG=ja_JP.UTF-8``, as for any program)."""
    for name in LOCALE_VARIABLES:
        value = environ.get(name, "").strip()
        if value:
            return locale_language(value)
    return None


@functools.lru_cache(maxsize=8192)
def copies_language(path: str) -> tuple[tuple[str, str], ...]:
    """(parent folder, language) for each language folder in ``path``; remembered per path (a
    search asks it of each candidate, and a long-lived server sees the same paths again)."""
    parts = path.split("/")[:-1]
    out: list[tuple[str, str]] = []
    for i, part in enumerate(parts):
        lang = language_of_path_segment(part)
        if lang is not None:
            out.append(("/".join(parts[:i]), lang))
    return tuple(out)


def most_common_language(where: Mapping[int, Sequence[tuple[str, str]]]) -> str | None:
    """The language folder most candidates are in (each counted by its outermost one), or None
    on a tie."""
    votes = Counter(found[0][1] for found in where.values() if found)
    top = votes.most_common(2)
    if not top or (len(top) == 2 and top[0][1] == top[1][1]):
        return None
    return top[0][0]


def prefer_query_language(
    fused: Sequence[tuple[int, float]],
    paths: dict[int, str],
    query: str,
    reader: str | None = None,
) -> list[tuple[int, float]]:
    """``fused`` with translated copies in other languages than the query's scored down by
    ``OTHER_LANGUAGE`` and re-sorted (ties by id). A query in no known language takes the
    ``reader``'s language (a base code, see :func:`locale_language`) when the candidates hold
    translations into it, else (a reader whose language has no copy) the candidates' most
    common language, the site's main one; with no reader known, copies outside that language
    keep ``NEAR_TIE`` of their score. A page with no copy in the wanted language shows its
    copy in the main language first (its other copies are scored down once more). Unchanged
    when the candidates show no translations, or no
    language is known and none is the most common."""
    where: dict[int, tuple[tuple[str, str], ...]] = {}
    seen: dict[str, set[str]] = defaultdict(set)
    for cid, _ in fused:
        found = copies_language(paths.get(cid, ""))
        if found:
            where[cid] = found
            for parent, lang in found:
                seen[parent].add(lang)
    if not any(len(langs) >= 2 for langs in seen.values()):
        return list(fused)  # no translations among the candidates (most projects)
    want, factor = query_language(query), OTHER_LANGUAGE
    if want is None and reader is not None:
        if any(reader in langs for langs in seen.values() if len(langs) >= 2):
            want = reader
        else:  # no copy in the reader's language: the site's main one, not the best scored
            want = most_common_language(where)
    if want is None:
        want, factor = most_common_language(where), NEAR_TIE
        if want is None:
            return list(fused)
    roots = {parent for parent, langs in seen.items() if len(langs) >= 2 and want in langs}
    if not roots:
        return list(fused)
    # A page with no copy in the wanted language: its copy in the site's main language comes
    # first among its copies (the others lose the factor once more), not the best scored.
    main = most_common_language(where)
    wanted_pages = {
        page_key(paths[cid], parent)
        for cid, found in where.items()
        for parent, lang in found
        if parent in roots and lang == want
    }
    out = []
    for cid, score in fused:
        other = [(p, lang) for p, lang in where.get(cid, ()) if p in roots and lang != want]
        if other:
            parent, lang = other[0]
            score *= factor
            if lang != main and page_key(paths[cid], parent) not in wanted_pages:
                score *= factor
        out.append((cid, score))
    return sorted(out, key=lambda item: (-item[1], item[0]))


def page_key(path: str, parent: str) -> str:
    """``path`` without its language folder under ``parent``: what the copies of one page share
    (``content/pt/docs/a.md`` and ``content/en/docs/a.md`` → ``content/docs/a.md``)."""
    rest = path[len(parent) + 1 :] if parent else path
    tail = rest.split("/", 1)[1] if "/" in rest else rest
    return f"{parent}/{tail}" if parent else tail
