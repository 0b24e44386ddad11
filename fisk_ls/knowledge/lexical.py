"""Lexical helpers over one snapshot: document frequencies for term pruning (cached per state
of the index) and the index tokenizer's stems for heading matches."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from .store import scalar

if TYPE_CHECKING:
    from .store import Snapshot

FTS5_TOKENIZE_QUERY = 0x0001


COMMON_FRACTION = 0.5
"""A query term in more than this share of chunks is dropped when the query has rarer ones.

FTS5's BM25 floors the IDF of such a term at ~0, so it cannot change the ranking; it only costs
a scan of a huge posting list ("set", "input", "the" in command reference docs)."""


class TermStats:
    """Document frequencies of index terms and the chunk count, cached per state of the index
    (a long-lived reader pays each lookup once, and sees incremental updates).

    The state is the generation plus FTS5's structure record (``%_data`` row 10), which changes
    whenever the full-text index does (an insert, a delete, a merge): one primary-key read."""

    def __init__(self) -> None:
        self._state: tuple[int, bytes] | None = None
        self._total = 0
        self._df: dict[str, int] = {}
        self._lock = threading.Lock()

    def _refresh(self, snap: Snapshot) -> int:
        """The chunk count of this snapshot; drops the cache when the index changed."""
        row = snap.conn.execute(
            f"SELECT block FROM {snap.tables.fts}_data WHERE id = 10"
        ).fetchone()
        state = (snap.manifest.generation, bytes(row[0]) if row and row[0] is not None else b"")
        with self._lock:
            if state == self._state:
                return self._total
        total = int(scalar(snap.conn, f"SELECT count(*) FROM {snap.tables.chunks}"))
        with self._lock:
            self._state, self._total, self._df = state, total, {}
        return total

    def prune(self, snap: Snapshot, terms: list[str]) -> list[str]:
        """``terms`` without those in over ``COMMON_FRACTION`` of the chunks, as long as a term
        that does match some chunk and is not common remains (else ``terms`` unchanged: a tiny
        corpus, where every word of the question is everywhere, still gets an answer)."""
        if len(terms) < 2:
            return terms
        try:
            total = self._refresh(snap)
            dfs = [self._df_of(snap, t) for t in terms]
        except Exception:  # an index without a vocabulary table: no pruning
            return terms
        limit = total * COMMON_FRACTION
        if not any(df != 0 and df <= limit for df in dfs):
            return terms
        return [t for t, df in zip(terms, dfs, strict=True) if df <= limit]

    def _df_of(self, snap: Snapshot, term: str) -> int:
        """Chunks holding ``term``; -1 when it is not one index token (unknown: never pruned)."""
        with self._lock:
            df = self._df.get(term)
        if df is not None:
            return df
        tok = snap.conn.fts5_tokenizer("porter", ["unicode61", "remove_diacritics", "2"])
        tokens = list(
            tok(
                term.encode(),
                FTS5_TOKENIZE_QUERY,
                None,
                include_offsets=False,
                include_colocated=False,
            )
        )
        df = -1
        if len(tokens) == 1:
            row = snap.conn.execute(
                f"SELECT doc FROM {snap.tables.vocab} WHERE term = ?", (str(tokens[0]),)
            ).fetchone()
            df = int(row[0]) if row else 0
        with self._lock:
            self._df[term] = df
        return df


class Stemmer:
    """The index tokenizer's terms of short texts, each text tokenized once."""

    def __init__(self, snap: Snapshot) -> None:
        self._tok = snap.conn.fts5_tokenizer("porter", ["unicode61", "remove_diacritics", "2"])
        self._seen: dict[str, frozenset[str]] = {}

    def __call__(self, text: str) -> frozenset[str]:
        stems = self._seen.get(text)
        if stems is None:
            tokens = self._tok(
                text.encode(),
                FTS5_TOKENIZE_QUERY,
                None,
                include_offsets=False,
                include_colocated=False,
            )
            stems = self._seen[text] = frozenset(str(t) for t in tokens)
        return stems


def own_headings(section: str) -> list[str]:
    """The headings a chunk's label names as its own: the last of its breadcrumb, and every
    merged one ("Traces > Context Propagation; Spans" → ["Context Propagation", "Spans"])."""
    return [part.rsplit(" > ", 1)[-1] for part in section.split("; ")] if section else []
