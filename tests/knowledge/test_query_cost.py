"""Bounded query cost (issue 17): the postings one MATCH expression reads, and the lookups that
decide it, stay within their budgets for any query; which terms are kept never depends on what
earlier queries left in the cache. Structural only: no timing."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fisk_ls.knowledge import (
    Knowledge,
    SearchRequest,
    Settings,
    index_project,
    lexical,
    remove,
    resolve_settings,
)
from fisk_ls.knowledge.connect import scalar
from fisk_ls.knowledge.lexical import TermStats, indexed_rows, varint
from fisk_ls.knowledge.store import Snapshot
from fisk_ls.knowledge.topk import Plan

N_DOCS = 40
WORDS = [f"w{k}" for k in range(1, N_DOCS + 1)]
"""Word ``wk`` is in exactly ``k`` chunks (one chunk per document)."""

BUDGET = 30
LOOKUPS = 60


@pytest.fixture(scope="module")
def knowledge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Knowledge]:
    root = tmp_path_factory.mktemp("cost")
    project = root / "project"
    project.mkdir()
    for d in range(N_DOCS):
        present = " ".join(w for k, w in enumerate(WORDS, 1) if d < k)
        (project / f"d{d}.md").write_text(f"# Page {d}\n\nfiller {present}\n", encoding="utf-8")
    s = resolve_settings(cwd=project, store_base=root / "stores", discover=False)
    index_project(s)
    kb = Knowledge(s)
    yield kb
    kb.close()


def _true_count(snap: Snapshot, word: str) -> int:
    f = snap.tables.fts
    return int(scalar(snap.conn, f"SELECT count(*) FROM {f} WHERE {f} MATCH ?", (f'"{word}"',)))


def _estimate(snap: Snapshot, terms: list[str], phrases: list[str]) -> int:
    """What the kept items may read: each term's chunks, each phrase's rarest word's."""
    cost = sum(_true_count(snap, t) for t in terms)
    return cost + sum(min(_true_count(snap, w) for w in p.split()) for p in phrases)


words = st.sampled_from([*WORDS, "zzunknown", "qqnothing"])
queries = st.tuples(
    st.lists(words, min_size=1, max_size=40, unique=True),
    st.lists(st.lists(words, min_size=2, max_size=4).map(" ".join), max_size=8, unique=True),
)


@pytest.mark.slow
@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(first=queries, second=queries)
def test_kept_terms_fit_the_budgets_and_ignore_the_cache(
    knowledge: Knowledge,
    first: tuple[list[str], list[str]],
    second: tuple[list[str], list[str]],
) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(lexical, "POSTING_BUDGET", BUDGET)
        mp.setattr(lexical, "LOOKUP_BUDGET", LOOKUPS)
        mp.setattr(lexical, "MIN_LOOKUP", 2)
        with knowledge.store.snapshot() as snap:
            assert snap is not None
            terms, phrases = first
            kept, kept_phrases = TermStats().bound(snap, terms, phrases)
            assert kept and [t for t in terms if t in kept] == kept
            assert [p for p in phrases if p in kept_phrases] == kept_phrases
            if len(kept) > 1 or kept_phrases:
                # Only a single term may exceed the budget alone (something must be searched);
                # a phrase whose rarest word matches nothing is free.
                paid = [p for p in kept_phrases if min(_true_count(snap, w) for w in p.split())]
                assert _estimate(snap, kept, paid) <= BUDGET or (len(kept) == 1 and not paid)
            # A word rarer than MIN_LOOKUP is always counted exactly: then no common one stays.
            if any(0 < _true_count(snap, t) < 2 for t in terms):
                assert all(_true_count(snap, t) <= N_DOCS // 2 for t in kept)
            warm = TermStats()
            warm.bound(snap, *second)  # another query fills the cache with other caps
            assert warm.bound(snap, terms, phrases) == (kept, kept_phrases)


def test_lookups_read_at_most_their_budget(
    knowledge: Knowledge, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Forty common words: each count stops at its cap, and once the lookup budget is spent the
    remaining words are counted only up to MIN_LOOKUP (a rare one is still known to be rare)."""
    monkeypatch.setattr(lexical, "POSTING_BUDGET", BUDGET)
    monkeypatch.setattr(lexical, "LOOKUP_BUDGET", LOOKUPS)
    monkeypatch.setattr(lexical, "MIN_LOOKUP", 2)
    caps: list[int] = []
    stats = TermStats()
    real = TermStats.count

    def spy(self: TermStats, snap: Snapshot, word: str, cap: int) -> tuple[int, bool]:
        caps.append(cap)
        return real(self, snap, word, cap)

    monkeypatch.setattr(TermStats, "count", spy)
    terms = [*reversed(WORDS[20:]), "w1"]  # the commonest first, one rare word last
    with knowledge.store.snapshot() as snap:
        assert snap is not None
        kept, _ = stats.bound(snap, terms, [])
    assert sum(min(c, N_DOCS) for c in caps) <= LOOKUPS + 2 * len(terms)
    assert caps[-1] == 2
    assert kept == ["w1"]


def test_a_query_of_common_words_only_keeps_some(knowledge: Knowledge) -> None:
    """Nothing rare to keep: words known only to be common are charged the whole index, so as
    many as fit the budget stay, in query order, and never none (the query is answered)."""
    with knowledge.store.snapshot() as snap:
        assert snap is not None
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(lexical, "POSTING_BUDGET", 2 * N_DOCS + 10)
            assert TermStats().bound(snap, ["w40", "w39", "w30", "w35"], []) == (
                ["w40", "w39"],
                [],
            )
            mp.setattr(lexical, "POSTING_BUDGET", 10)
            assert TermStats().bound(snap, ["w30", "w40"], []) == (["w30"], [])
    assert knowledge.search(SearchRequest("w40 w39")).hits


def test_the_deep_read_is_one_scan(knowledge: Knowledge, monkeypatch: pytest.MonkeyPatch) -> None:
    """A search whose candidates collapse reads deeper from the same scan, not a second one."""
    from fisk_ls.knowledge import search

    calls: list[int] = []
    real = search.bm25_ids

    def spy(
        snap: Snapshot, plan: Plan, limit: int, within: Sequence[int] | None = None
    ) -> list[tuple[int, float]]:
        calls.append(limit)
        return real(snap, plan, limit, within)

    monkeypatch.setattr(search, "bm25_ids", spy)
    assert knowledge.search(SearchRequest("filler", top_k=20)).hits
    assert calls == [search.FANOUT * search.DEEPER]


@given(st.integers(min_value=0, max_value=2**64 - 1))
def test_varint_reads_what_sqlite_writes(value: int) -> None:
    """The encoding of SQLite's sqlite3PutVarint: 7-bit groups, 8 bits in a 9th byte."""
    if value < 2**56:
        groups = [value & 0x7F]
        v = value >> 7
        while v:
            groups.append((v & 0x7F) | 0x80)
            v >>= 7
        data = bytes(reversed(groups))
    else:
        data = bytes([((value >> (8 + 7 * (7 - i))) & 0x7F) | 0x80 for i in range(8)])
        data += bytes([value & 0xFF])
    assert varint(data + b"\x00tail") == value


def test_the_indexed_row_count_follows_inserts_and_deletes(
    settings: Settings, project: Path
) -> None:
    index_project(settings)
    kb = Knowledge(settings)
    try:
        with kb.store.snapshot() as snap:
            assert snap is not None
            counted = scalar(snap.conn, f"SELECT count(*) FROM {snap.tables.rows}")
            assert indexed_rows(snap) == counted > 0
        first = next(p for p in sorted(project.rglob("*.md")))
        remove(settings, [str(first)], cwd=project)
        with kb.store.snapshot() as snap:
            assert snap is not None
            counted2 = scalar(snap.conn, f"SELECT count(*) FROM {snap.tables.rows}")
            assert indexed_rows(snap) == counted2 < counted
    finally:
        kb.close()
