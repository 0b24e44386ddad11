"""``topk.best`` returns exactly what the plain ``ORDER BY bm25(…), rowid LIMIT n`` over the whole
OR returns (ids and scores, ties by rowid), on random corpora and queries, through the split
(the commonest term skipped) as well as without it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import apsw
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fisk_ls.knowledge import Knowledge, SearchRequest, Settings, index_project, topk
from fisk_ls.knowledge.schema import FTS_TOKENIZER
from fisk_ls.knowledge.search import BM25_WEIGHTS
from fisk_ls.knowledge.topk import Plan, best, scored

WORDS = ["the", "run", "task", "logon", "printer", "driver", "queue", "zebra", "amber", "quartz"]
"""Drawn with falling weights, so the first words are in most rows (idf floored at ~0) and the
last in few: the split is both possible and, often, proved safe."""


@dataclass
class _Tables:
    fts: str = "f"


@dataclass
class _Snap:
    conn: apsw.Connection
    tables: _Tables


def _snapshot(rows: list[tuple[str, str, str]]) -> _Snap:
    conn = apsw.Connection(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE f USING fts5(section, body, cjk, doc, content='',"
        f" contentless_delete=1, tokenize='{FTS_TOKENIZER}')"
    )
    for i, (section, body, doc) in enumerate(rows, 1):
        conn.execute(
            "INSERT INTO f(rowid, section, body, cjk, doc) VALUES (?, ?, ?, '', ?)",
            (i, section, body, doc),
        )
    return _Snap(conn, _Tables())


def _plan(snap: _Snap, terms: list[str], phrases: list[str]) -> Plan:
    def count(word: str) -> int:
        sql = "SELECT count(*) FROM f WHERE f MATCH ?"
        return int(snap.conn.execute(sql, ('"' + word + '"',)).get)

    total = int(snap.conn.execute("SELECT count(*) FROM f_docsize").get)
    return Plan(tuple(phrases), tuple(terms), tuple(count(t) for t in terms), total)


def _expressions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The MATCH expressions ``topk`` runs from now on (the AND pass shows the split ran)."""
    seen: list[str] = []
    real = topk.scored

    def spy(snap: object, expression: str, *args: object) -> list[tuple[int, float]]:
        seen.append(expression)
        return real(snap, expression, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(topk, "scored", spy)
    return seen


def _text(draw: st.DrawFn, most: int) -> str:
    n = draw(st.integers(0, most))
    weights = st.sampled_from([w for i, w in enumerate(WORDS) for _ in range(len(WORDS) - i)])
    return " ".join(draw(weights) for _ in range(n))


@st.composite
def corpora(draw: st.DrawFn) -> list[tuple[str, str, str]]:
    n = draw(st.integers(1, 60))
    rows = [(_text(draw, 4), _text(draw, 30), _text(draw, 3)) for _ in range(n)]
    # the commonest word in nearly every row: its idf is floored, the split is safe
    return [(s, ("the " + b) if i % 7 else b, d) for i, (s, b, d) in enumerate(rows)]


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    corpus=corpora(),
    terms=st.lists(st.sampled_from(WORDS), min_size=1, max_size=6, unique=True),
    phrase=st.booleans(),
    limit=st.integers(1, 12),
)
def test_the_top_is_the_plain_querys(
    corpus: list[tuple[str, str, str]], terms: list[str], phrase: bool, limit: int
) -> None:
    snap = _snapshot(corpus)
    phrases = [" ".join(terms[:2])] if phrase and len(terms) > 1 else []
    plan = _plan(snap, terms, phrases)
    plain = scored(snap, plan.expression(), BM25_WEIGHTS, limit)  # type: ignore[arg-type]
    assert best(snap, plan, limit, BM25_WEIGHTS) == plain  # type: ignore[arg-type]


def test_the_split_runs_and_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A corpus where the split is proved safe: it runs (an AND pass is issued), and the
    answer is the plain query's."""
    rows = [
        ("", "the run " * 3 + ("logon task" if i % 5 == 0 else "queue"), "") for i in range(200)
    ]
    rows += [("", "the " * 40, "") for _ in range(300)]
    snap = _snapshot(rows)
    plan = _plan(snap, ["the", "logon", "task", "queue"], [])
    seen = _expressions(monkeypatch)
    got = best(snap, plan, 10, BM25_WEIGHTS)  # type: ignore[arg-type]
    assert any(" AND " in e for e in seen), seen
    assert got == scored(snap, plan.expression(), BM25_WEIGHTS, 10)  # type: ignore[arg-type]


def test_an_unproved_split_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """The common term's own short rows outscore the essential part's 5th (long rows with the
    rare word once): its bound is above θ, so no split, and the answer holds those rows."""
    rows = [("", "zebra " + "amber " * 40, "")] * 6
    rows += [("", "queue queue queue", "")] * 30 + [("", "quartz", "")] * 64
    snap = _snapshot(rows)
    plan = _plan(snap, ["zebra", "queue"], [])
    seen = _expressions(monkeypatch)
    got = best(snap, plan, 5, BM25_WEIGHTS)  # type: ignore[arg-type]
    assert not any(" AND " in e for e in seen), seen
    plain = scored(snap, plan.expression(), BM25_WEIGHTS, 5)  # type: ignore[arg-type]
    assert got == plain
    assert any(rowid > 6 for rowid, _ in plain)  # a row of "queue" alone is in the top


def test_search_takes_the_split_on_a_real_index(
    settings: Settings, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the indexer and the term statistics search uses (a small read depth, so a small
    corpus can split): a query with one word in every chunk takes the split and gets the hits
    of the plain query."""
    from fisk_ls.knowledge import search

    for i in range(60):  # "run" in 28 of 60 chunks: common, yet not pruned (lexical.py)
        verb = "Run the thing." if i % 15 < 7 else "Stop the thing."
        extra = "The printer driver queue." if i % 12 == 0 else "Nothing else here."
        (project / f"page{i}.md").write_text(f"# Page {i}\n\n{verb} {extra}\n")
    index_project(settings)
    monkeypatch.setattr(search, "FANOUT", 4)
    monkeypatch.setattr(search, "DEEPER", 1)
    seen = _expressions(monkeypatch)
    kb = Knowledge(settings)
    try:
        split = kb.search(SearchRequest("run printer driver", top_k=4))
        assert any(" AND " in e for e in seen), seen
        monkeypatch.setattr(topk, "WORTH", float("inf"))  # never split
        plain = kb.search(SearchRequest("run printer driver", top_k=4))
    finally:
        kb.close()
    assert split.hits
    assert [(h.path, h.start_line, h.score) for h in split.hits] == [
        (h.path, h.start_line, h.score) for h in plain.hits
    ]
