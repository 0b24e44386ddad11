"""``anchored.anchored`` (an extra string's lexical arm) returns exactly the full OR query's top
over the rows that match the plan's rarest terms (ids and bit-identical scores, ties by rowid),
and the full query's own top whenever it says that is proved, on random corpora and queries;
and a search with extra strings takes it for them only."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fisk_ls.knowledge import Knowledge, SearchRequest, Settings, anchored, index_project, search
from fisk_ls.knowledge.anchored import anchored as anchored_best
from fisk_ls.knowledge.search import BM25_WEIGHTS
from fisk_ls.knowledge.topk import best, scored

from .test_topk import WORDS, _plan, _snapshot, corpora


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    corpus=corpora(),
    terms=st.lists(st.sampled_from(WORDS), min_size=1, max_size=7, unique=True),
    phrase=st.booleans(),
    limit=st.integers(1, 12),
    postings=st.integers(0, 200),
)
def test_the_top_over_the_anchors_rows_is_the_full_querys(
    corpus: list[tuple[str, str, str]],
    terms: list[str],
    phrase: bool,
    limit: int,
    postings: int,
) -> None:
    snap = _snapshot(corpus)
    phrases = [" ".join(terms[:2])] if phrase and len(terms) > 1 else []
    plan = _plan(snap, terms, phrases)
    got, proved = anchored_best(snap, plan, limit, BM25_WEIGHTS, None, postings)  # type: ignore[arg-type]
    every = scored(snap, plan.expression(), BM25_WEIGHTS, None)  # type: ignore[arg-type]
    plain = every[:limit]
    if proved:
        assert got == plain
        return
    # Not proved: the rows left out are those matching none of the anchors (nor a phrase).
    order = plan.ordered
    counts = dict(zip(plan.terms, plan.counts, strict=True))
    cut, read = 1, counts[order[0]]
    while cut < len(order) and read + counts[order[cut]] <= postings:
        read += counts[order[cut]]
        cut += 1
    anchors = plan.expression(order[:cut])
    rows = {r for r, _ in scored(snap, anchors, BM25_WEIGHTS, None)}  # type: ignore[arg-type]
    assert got == [(r, s) for r, s in every if r in rows][:limit]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    corpus=corpora(),
    terms=st.lists(st.sampled_from(WORDS), min_size=1, max_size=7, unique=True),
    limit=st.integers(1, 12),
)
def test_a_plan_within_the_budget_is_the_exact_top(
    corpus: list[tuple[str, str, str]], terms: list[str], limit: int
) -> None:
    """Every term fits the anchors' postings: the plain query's top, proved."""
    snap = _snapshot(corpus)
    plan = _plan(snap, terms, [])
    got = anchored_best(snap, plan, limit, BM25_WEIGHTS, None, 10**9)  # type: ignore[arg-type]
    assert got == (best(snap, plan, limit, BM25_WEIGHTS), True)  # type: ignore[arg-type]


def test_a_row_of_common_terms_alone_is_left_out_only_when_it_could_rank() -> None:
    """Short rows of two common words outscore the rare word's long rows: not proved, and they
    are the rows missing (the rare word's rows keep their full scores)."""
    rows = [("", "zebra " + "amber " * 40 + "queue", "")] * 6
    rows += [("", "queue run", "")] * 30 + [("", "quartz", "")] * 64
    snap = _snapshot(rows)
    plan = _plan(snap, ["zebra", "queue", "run"], [])
    got, proved = anchored_best(snap, plan, 5, BM25_WEIGHTS, None, 6)  # type: ignore[arg-type]
    assert not proved
    plain = scored(snap, plan.expression(), BM25_WEIGHTS, 5)  # type: ignore[arg-type]
    assert all(rowid > 6 for rowid, _ in plain)
    assert [rowid for rowid, _ in got] == [1, 2, 3, 4, 5]
    full = dict(scored(snap, plan.expression(), BM25_WEIGHTS, None))  # type: ignore[arg-type]
    assert all(full[rowid] == score for rowid, score in got)


def test_only_the_extra_strings_are_anchored(
    settings: Settings, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through a real index: the question's arm reads with ``topk.best`` and each extra
    string's anchored, as deep; a search without extra strings anchors none and ranks as with
    anchoring off."""
    for i in range(40):
        extra = "The printer driver queue." if i % 6 == 0 else "Nothing else here."
        (project / f"page{i}.md").write_text(f"# Page {i}\n\nRun the task. {extra}\n")
    index_project(settings)
    calls: list[int] = []
    real = anchored.anchored

    def spy(*args: object, **kwargs: object) -> object:
        calls.append(int(args[2]))  # type: ignore[call-overload]
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(search, "anchored", spy)
    kb = Knowledge(settings)
    try:
        plain = kb.search(SearchRequest("printer driver", top_k=5))
        assert calls == []
        fused = kb.search(SearchRequest("printer driver", top_k=5, also=("run task", "queue")))
        assert calls == [search.FANOUT * search.DEEPER] * 2
        monkeypatch.setattr(search, "ANCHORED", False)
        unanchored = kb.search(SearchRequest("printer driver", top_k=5))
    finally:
        kb.close()
    assert plain.hits and fused.hits
    assert [(h.path, h.score) for h in plain.hits] == [(h.path, h.score) for h in unanchored.hits]
