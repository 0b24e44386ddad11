"""A search string's parts by name, for tests that check one rule at a time: each reads the
text once with the core's ``Asked`` (question.py), as a search does."""

from __future__ import annotations

from fisk_ls.knowledge.question import Asked


def query_terms(text: str) -> list[str]:
    return Asked.of(text).terms()


def search_terms(text: str) -> list[str]:
    return Asked.of(text).search_terms()


def compound_terms(text: str) -> list[str]:
    return Asked.of(text).compounds()


def query_phrases(text: str) -> list[str]:
    return Asked.of(text).phrases()


def heading_terms(text: str) -> list[str]:
    return Asked.of(text).heading_terms()


def question_text(text: str) -> str:
    """What a what-is frame leaves of ``text`` (clitics folded)."""
    return Asked.of(text).question
