"""Pure: dated posts (a site's blog or news) rank below the reference pages.

A documentation site often keeps its blog beside its docs (Hugo ``content/en/blog/2024/``,
Docusaurus ``blog/``, Jekyll ``_posts/``, mkdocs-material ``docs/blog/posts/``). A post tells
one story, with the product's words on every line, so BM25 and the embedding model both like
it; but the question "what is a span" wants the page that defines spans, and a post from 2022
may describe what has changed since. So a chunk of a post keeps ``POST_WEIGHT`` of its fused
score: a reference page that answers about as well comes first, and a question only the blog
answers still finds the blog (posts keep their order among themselves, and an index of posts
alone ranks as before). Measured on the dev sets in bench/tuning.md ("dated posts").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

POST_WEIGHT = 0.7
"""Score factor for a chunk of a dated post (0.6-0.8 gave the same dev-set ranks, all up)."""

_POST_FOLDER = re.compile(r"(?:^|/)(?:blogs?|news|_?posts)/", re.IGNORECASE)


def is_post(path: str) -> bool:
    """Whether the document at ``path`` (relative, ``/``-separated) sits in a folder of posts."""
    return _POST_FOLDER.search(path) is not None


def lower_posts(
    fused: Sequence[tuple[int, float]], paths: dict[int, str]
) -> list[tuple[int, float]]:
    """``fused`` with the chunks of posts scored down by ``POST_WEIGHT`` and re-sorted (ties by
    id); unchanged, in the same order, when no candidate is a post."""
    if not any(is_post(paths.get(cid, "")) for cid, _ in fused):
        return list(fused)
    out = [(cid, s * POST_WEIGHT if is_post(paths.get(cid, "")) else s) for cid, s in fused]
    return sorted(out, key=lambda item: (-item[1], item[0]))
