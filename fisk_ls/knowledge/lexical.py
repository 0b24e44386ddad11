"""Lexical helpers over one snapshot: document frequencies for term pruning (cached per state
of the index), the index's row count, and the headings a chunk's label starts."""

from __future__ import annotations

import contextlib
import threading
from typing import TYPE_CHECKING

from .connect import scalar
from .topk import Plan

if TYPE_CHECKING:
    from .store import Snapshot

COMMON_FRACTION = 0.5
"""A query term in more than this share of chunks is dropped when the query has rarer ones.

FTS5's BM25 floors the IDF of such a term at ~0, so it cannot change the ranking; it only costs
a scan of a huge posting list ("set", "input", "the" in command reference docs)."""

POSTING_BUDGET = 50_000
"""Postings one MATCH expression may read: its terms' chunk counts plus, for each phrase, the
count of its rarest word (FTS5 drives a phrase by seeking in the others). Terms are kept rarest
first while they fit, then phrases in order; at least one term is always kept, so the most a
query reads is max(budget, one term's postings). BM25 scores every row an expression matches,
about 0.7 µs a row on the 2-core bench machine: ~0.04 s of CPU for the whole budget (see
bench/tuning.md, "Hostile queries")."""

LOOKUP_BUDGET = 200_000
"""Doclist entries the chunk counts of one query may read (a capped count costs about 0.1 µs
an entry). A cached count is charged as if read, so the kept terms never depend on what an
earlier query happened to count."""

MIN_LOOKUP = 1_000
"""Each word is counted up to at least this many chunks, even once ``LOOKUP_BUDGET`` is spent,
so a rare word late in a long query is still known to be rare (and kept)."""


def indexed_rows(snap: Snapshot) -> int:
    """How many chunks the full-text index holds: the row count FTS5 keeps for BM25 at the
    head of its averages record (``%_data`` row 1, an SQLite varint), one primary-key read. A
    ``count(*)`` reads every chunk row (0.26 s for 150k chunks in a new process) and is only
    the fallback, for an index without the record."""
    row = snap.conn.execute(f"SELECT block FROM {snap.tables.fts}_data WHERE id = 1").fetchone()
    if row and isinstance(row[0], bytes) and row[0]:
        with contextlib.suppress(IndexError):
            return varint(row[0])
    return int(scalar(snap.conn, f"SELECT count(*) FROM {snap.tables.rows}"))


def varint(data: bytes) -> int:
    """The SQLite varint at the start of ``data``: big-endian 7-bit groups, the high bit set
    on all but the last; a 9th byte carries 8 bits."""
    value = 0
    for i in range(8):
        byte = data[i]
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value
    return (value << 8) | data[8]


class TermStats:
    """Chunk counts of query words (capped: only "how many, up to N" is ever needed) and the
    chunk count of the index, cached per state of the index (a long-lived reader pays each
    lookup once, and sees incremental updates).

    The state is the generation plus FTS5's structure record (``%_data`` row 10), which changes
    whenever the full-text index does (an insert, a delete, a merge): one primary-key read."""

    def __init__(self) -> None:
        self._state: tuple[int, bytes] | None = None
        self._total = 0
        self._counts: dict[str, tuple[int, int]] = {}
        """word → (chunks counted, the cap it was counted up to); exact when below the cap."""
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
        total = indexed_rows(snap)
        with self._lock:
            self._state, self._total, self._counts = state, total, {}
        return total

    def prune(self, snap: Snapshot, terms: list[str]) -> list[str]:
        """``terms`` as :meth:`bound` keeps them (no phrases)."""
        return self.bound(snap, terms, [])[0]

    def bound(
        self, snap: Snapshot, terms: list[str], phrases: list[str]
    ) -> tuple[list[str], list[str]]:
        """The terms and phrases :meth:`plan` keeps, in query order."""
        plan = self.plan(snap, terms, phrases)
        return list(plan.terms), list(plan.phrases)

    def plan(
        self,
        snap: Snapshot,
        terms: list[str],
        phrases: list[str],
        budget: int | None = None,
    ) -> Plan:
        """The terms and phrases of one expression, its cost bounded (``budget`` postings,
        default ``POSTING_BUDGET``), with
        the kept terms' row counts (``topk.best`` skips rows with them).

        Terms in over ``COMMON_FRACTION`` of the chunks go as long as a term that does match
        some chunk and is not common remains (else every term may stay: a tiny corpus, where
        every word of the question is everywhere, still gets an answer). Of the rest, the rarest
        are kept while their postings fit the budget (the commonest carry the least BM25
        weight); a word whose count could not be learnt within ``LOOKUP_BUDGET`` counts as
        expensive. Phrases follow in order while the budget lasts. Order is kept."""
        budget = POSTING_BUDGET if budget is None else budget
        unknown = Plan.uncounted(phrases if terms else [], terms)
        if not terms or (len(terms) == 1 and not phrases):
            return unknown  # what one term reads is the floor: nothing to count or choose
        try:
            total = self._refresh(snap)
        except Exception:  # an index without FTS5's structure record: nothing to count with
            return unknown
        common = total * COMMON_FRACTION
        counter = _Counter(self, snap, int(min(common, budget)) + 1)
        counts = {t: counter.count(t) for t in terms}

        def cost(term: str) -> int:
            n, exact = counts[term]
            return n if exact else total  # known only to be at least n: up to every chunk

        rare = any(exact and 0 < n <= common for n, exact in counts.values())
        candidates = [t for t in terms if not rare or (counts[t][1] and cost(t) <= common)]
        spent = 0
        kept: set[str] = set()
        # Rarest first; a word known only as "at least n" sorts by that n, so when the lookups
        # ran out the word most likely to be rare is the one a query of common words keeps.
        for t in sorted(candidates, key=lambda t: counts[t][0]):
            if kept and spent + cost(t) > budget:
                break
            kept.add(t)
            spent += cost(t)
        kept_phrases: list[str] = []
        for p in phrases:
            known = [n for n, exact in map(counter.count, dict.fromkeys(p.split())) if exact]
            if known and spent + min(known) <= budget:
                kept_phrases.append(p)
                spent += min(known)
        order = [t for t in terms if t in kept]
        return Plan(tuple(kept_phrases), tuple(order), tuple(counts[t][0] for t in order), total)

    def count(self, snap: Snapshot, word: str, cap: int) -> tuple[int, bool]:
        """Chunks matching ``word`` (as one quoted FTS5 phrase), counted up to ``cap``; and
        whether that is exact (below the cap). Reads at most ``cap`` doclist entries."""
        with self._lock:
            cached = self._counts.get(word)
        if cached is not None and (cached[0] < cached[1] or cached[1] >= cap):
            n = min(cached[0], cap)
            return n, n < cap
        f = snap.tables.fts
        n = int(
            scalar(
                snap.conn,
                f"SELECT count(*) FROM (SELECT rowid FROM {f} WHERE {f} MATCH ? LIMIT ?)",
                ('"' + word.replace('"', '""') + '"', cap),
            )
        )
        with self._lock:
            self._counts[word] = (n, cap)
        return n, n < cap


class _Counter:
    """The counts of one query's words, spending at most ``LOOKUP_BUDGET`` doclist entries:
    (count, exact); not exact means "at least count" (its cap was reached)."""

    def __init__(self, stats: TermStats, snap: Snapshot, enough: int) -> None:
        self.stats, self.snap, self.enough = stats, snap, enough
        self.left = LOOKUP_BUDGET
        self.seen: dict[str, tuple[int, bool]] = {}

    def count(self, word: str) -> tuple[int, bool]:
        got = self.seen.get(word)
        if got is None:
            cap = min(self.enough, max(MIN_LOOKUP, self.left))
            got = self.seen[word] = self.stats.count(self.snap, word, cap)
            self.left = max(0, self.left - got[0])  # cached or not: same caps, same answer
        return got


def own_headings(section: str) -> list[str]:
    """The headings a chunk's label names as its own: the last of its breadcrumb, and every
    merged one ("Traces > Context Propagation; Spans" → ["Context Propagation", "Spans"])."""
    return [part.rsplit(" > ", 1)[-1] for part in section.split("; ")] if section else []


def started_headings(section: str, before: str | None) -> list[str]:
    """The headings whose section begins in a chunk labelled ``section``, given the label of
    the document's previous chunk (``before``; None for the first chunk): its own headings
    (:func:`own_headings`) except the first when the chunk continues the section the previous
    chunk ended in (the heading line was in an earlier chunk): "Exporters > OTLP" after
    "Exporters > OTLP" starts nothing; "Terms > Propagators; Proto" after "Terms > OTLP;
    Propagators" starts "Proto". A document's first chunk begins every section its label
    names, the title's too: "New-NetFirewallRule > SYNOPSIS; SYNTAX" (a page with no text
    before its first heading) starts "New-NetFirewallRule", "SYNOPSIS" and "SYNTAX"."""
    own = own_headings(section)
    if before is None:
        return [*section.split("; ", 1)[0].split(" > ")[:-1], *own] if section else []
    if own and own_headings(before)[-1:] == own[:1]:
        return own[1:]
    return own
