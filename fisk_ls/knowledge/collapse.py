"""Near-duplicate keys for search hits. Pure functions.

Versioned documentation keeps near-identical copies of a page (the PowerShell docs hold one per
Windows Server release, differing in link targets such as ``?view=windowsserver2019-ps`` or in a
link written as ``[text](url)`` in one copy and ``text (url)`` in another). Search shows such
copies as one hit with the other locations attached; two chunks are the same when their chunk
hashes are equal or their normalised text is: link targets and URLs dropped, case folded, runs
of anything but letters and digits collapsed to one space. The heading breadcrumb is part of the
text, so the same boilerplate under different headings (two cmdlets' "Inputs") stays apart.

A paragraph can stand in several documents whose chunks differ around it (npm repeats an option's
paragraph on every command page taking that option): :func:`paragraph_key` keys the part of a hit
that matched, normalised the same way, under its own heading, so search shows those hits as one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .digests import blake2b

_LINK_TARGET = re.compile(r"\]\([^)\s]*(?:\s+\"[^\"]*\")?\)")
_URL = re.compile(r"\b(?:https?|ftp)://\S+|\bwww\.\S+", re.IGNORECASE)
_WORD = re.compile(r"[^\W_]+")
_ASCII_WORDS = bytes(
    ord(chr(c).lower()) if chr(c).isascii() and chr(c).isalnum() else 32 for c in range(256)
)
"""A byte table: ASCII letters (lower-cased) and digits kept, every other byte a space."""


def normalised(section: str, body: str) -> str:
    """The text two near-identical chunks share (see the module docstring): link targets and
    URLs dropped, case folded, the words (runs of letters and digits) joined by one space.

    Computed for every chunk at index time, so it takes the cheap paths that give the same
    text: the URL pattern only runs when the text could hold one, and ASCII text (most
    documentation) is folded and split by one byte-table ``translate``."""
    text = f"{section}\n{body}"
    if "](" in text:
        text = _LINK_TARGET.sub("]", text)
    if "://" in text or "www." in text.lower():  # each URL form holds one of these
        text = _URL.sub(" ", text)
    if text.isascii():
        return " ".join(text.encode().translate(_ASCII_WORDS).decode().split())
    return " ".join(_WORD.findall(text.casefold()))


def probe(words: str) -> tuple[str, ...]:
    """The distinct words of a normalised text (:func:`normalised`), longest first: what
    :func:`may_hold` looks for."""
    return tuple(sorted(set(words.split(" ")), key=len, reverse=True))


def may_hold(folded: str, words: tuple[str, ...]) -> bool:
    """False when ``normalised("", text)`` cannot hold the normalised text whose
    :func:`probe` is ``words``, given ``folded`` = ``text.casefold()``: every word of a
    normalised text it holds is in ``folded``, since normalising drops text and folds case
    (character by character) but never joins two words. A few substring tests instead of
    normalising the text."""
    return all(w in folded for w in words)


class Probes:
    """The :func:`probe` of each of several normalised texts, grouped by their first (longest)
    word: :meth:`any_held` tests each distinct first word once for a text, and the rest of a
    group's words only when it is there (about nine in ten texts lack every first word)."""

    __slots__ = ("_groups",)

    def __init__(self, texts: Iterable[str]) -> None:
        groups: dict[str, list[tuple[str, ...]]] = {}
        for text in texts:
            first, *rest = probe(text)
            groups.setdefault(first, []).append(tuple(rest))
        self._groups = groups

    def any_held(self, folded: str) -> bool:
        """``any(may_hold(folded, probe(t)) for t in texts)``, with fewer tests."""
        for first, rests in self._groups.items():
            if first in folded and any(may_hold(folded, rest) for rest in rests):
                return True
        return False


def casefolded(text: str) -> str:
    """``text.casefold()``: for ASCII text (most documentation) its ``lower()``, the same
    string, taken by a faster path."""
    return text.lower() if text.isascii() else text.casefold()


def text_key(section: str, body: str) -> str:
    """A short digest of ``normalised(section, body)``: 64 bits (stored with every chunk; two
    different texts share a key, and show as one hit, with odds of about 1 in 10^9 for a
    150k-chunk index)."""
    digest = blake2b(normalised(section, body).encode(), digest_size=8)
    return "n:" + digest.hexdigest()


FOLD_MIN_WORDS = 8
"""A matched part folds other hits whose matched part is the same text only when it holds at
least this many words: a short one ("None.", "Default: true") says too little to stand for the
others, whose surroundings then tell them apart."""


def paragraph_key(heading: str, text: str, min_words: int = FOLD_MIN_WORDS) -> str | None:
    """The key of a matched part (``text``) under its own ``heading`` (the last of its heading
    path), normalised as :func:`normalised`; None when the part folds nothing: it holds fewer
    than ``min_words`` words, or it ends in a colon (it introduces what follows it, a list or
    a code block that may differ from page to page: "You can configure the sampler with
    environment variables:")."""
    found = paragraph(heading, text, min_words)
    return None if found is None else found[0]


def paragraph(heading: str, text: str, min_words: int = FOLD_MIN_WORDS) -> tuple[str, str] | None:
    """:func:`paragraph_key` and the part's normalised words (what :class:`Probes` looks for),
    normalised once; None as there."""
    if text.rstrip().endswith(":"):
        return None
    words = normalised("", text)
    if words.count(" ") + 1 < min_words:
        return None
    digest = blake2b(f"{normalised(heading, '')}\n{words}".encode(), digest_size=8)
    return "p:" + digest.hexdigest(), words
