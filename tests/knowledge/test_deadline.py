"""A search stops at its deadline (deadline.py): cancelled mid-statement by the progress handler,
on the searching thread and on the arm pool's workers, and the reader answers the next search.

Deadlines here run on counting clocks (each look at the deadline is one tick), so what is
asserted is how many looks a search took, never how long it ran."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from fisk_ls.knowledge import (
    Cancelled,
    Knowledge,
    SearchCancelled,
    SearchRequest,
    index_project,
    resolve_settings,
    store,
)
from fisk_ls.knowledge.arms import ArmPool
from fisk_ls.knowledge.deadline import Deadline
from fisk_ls.knowledge.location import Settings
from fisk_ls.knowledge.scope import Scope
from tests.support.big_corpus import make_corpus
from tests.support.restricted import scoped_request
from tests.support.waiting import HANG_GUARD

COSTLY = "lorem ipsum dolor sit amet consectetur adipiscing elit tempor"
"""Words of every chunk: each one is read and scored (a costly search of this corpus)."""
ALSO = ["consectetur adipiscing elit", "sed do eiusmod tempor", "lorem dolor amet ipsum"]


class Ticks:
    """A clock that counts the looks at a deadline: ``now`` is how many were taken."""

    def __init__(self) -> None:
        self.now = 0
        self.lock = threading.Lock()

    def __call__(self) -> float:
        with self.lock:
            self.now += 1
            return float(self.now)


@pytest.fixture(autouse=True)
def often(monkeypatch: pytest.MonkeyPatch) -> None:
    """A look every 500 SQLite steps (not ``PROGRESS_STEPS``): many looks in a search of this
    small corpus, so it can be stopped at several points of one statement."""
    monkeypatch.setattr(store, "PROGRESS_STEPS", 500)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Settings, Knowledge]]:
    base = tmp_path_factory.mktemp("deadline")
    settings = resolve_settings(cwd=make_corpus(base / "site", 120), store_base=base / "stores")
    index_project(settings)
    k = Knowledge(settings)
    yield settings, k
    k.close()


def looks(k: Knowledge, query: str, also: list[str] | None = None) -> int:
    """How many looks at its deadline a whole search takes (its term counts cached first, as
    for the searches that follow)."""
    k.search(SearchRequest(query, 10, also=also or []))
    ticks = Ticks()
    result = k.search(
        SearchRequest(query, 10, also=also or [], deadline=Deadline(float("inf"), clock=ticks))
    )
    assert result.status == "ok" and result.hits
    return ticks.now


def test_a_deadline_is_a_cancel_token_and_a_time_limit() -> None:
    d = Deadline()
    assert not d.expired()
    d.cancel()
    assert d.expired() and not d.timed_out
    with pytest.raises(SearchCancelled, match="cancelled"):
        d.check()
    ticks = Ticks()
    timed = Deadline.after(2, clock=ticks)  # at tick 3
    assert not timed.expired() and timed.expired()
    assert timed.timed_out and timed.event.is_set()
    with pytest.raises(SearchCancelled, match="time limit") as caught:
        timed.check()
    assert isinstance(caught.value, Cancelled)  # the front ends' one kind of "stopped"


def test_a_costly_search_is_interrupted_mid_statement(
    corpus: tuple[Settings, Knowledge],
) -> None:
    _, k = corpus
    whole = looks(k, COSTLY)
    assert whole > 20  # the progress handler looks many times during one search
    ticks = Ticks()
    with pytest.raises(SearchCancelled, match="time limit"):
        k.search(SearchRequest(COSTLY, 10, deadline=Deadline(whole // 2, clock=ticks)))
    assert ticks.now == whole // 2  # stopped at the first look past it: no tick after
    # The reader's connection is left clean: the next search answers in full.
    assert (
        k.search(SearchRequest(COSTLY, 10)).hits
        == k.search(SearchRequest(COSTLY, 10, deadline=Deadline())).hits
    )


def test_a_search_cancelled_from_another_thread_ends(corpus: tuple[Settings, Knowledge]) -> None:
    """The searching thread is held inside the progress handler (a statement running) while
    another thread cancels; the search then ends with SearchCancelled."""
    _, k = corpus
    inside, go = threading.Event(), threading.Event()
    outcome: list[BaseException | None] = []

    def clock() -> float:
        if not inside.is_set():
            inside.set()
            assert go.wait(HANG_GUARD)
        return 0.0

    deadline = Deadline(1.0, clock=clock)

    def run() -> None:
        try:
            k.search(SearchRequest(COSTLY, 10, deadline=deadline))
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    assert inside.wait(HANG_GUARD)
    deadline.cancel()
    go.set()
    thread.join(HANG_GUARD)
    assert not thread.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], SearchCancelled)
    assert str(outcome[0]) == "the search was cancelled"


def test_the_arm_pool_workers_stop_too(corpus: tuple[Settings, Knowledge]) -> None:
    settings, _ = corpus
    k = Knowledge(settings)
    k.arms = ArmPool(k.store, workers=2, min_postings=0)
    try:
        whole = looks(k, COSTLY, ALSO)
        for stop in (1, 3, whole // 3, whole // 2, whole * 3 // 4):  # whole varies by a few
            ticks = Ticks()
            with pytest.raises(SearchCancelled):
                k.search(SearchRequest(COSTLY, 10, also=ALSO, deadline=Deadline(stop, clock=ticks)))
            # No connection looked again once it had passed (the other two threads may each
            # have been looking at that very moment).
            assert stop <= ticks.now <= stop + 2
        # Workers and connections are fine afterwards: the same ranking as before.
        want = k.search(SearchRequest(COSTLY, 10, also=ALSO))
        assert k.search(SearchRequest(COSTLY, 10, also=ALSO, deadline=Deadline())) == want
    finally:
        k.close()


def test_a_scope_over_many_documents_checks_the_deadline(
    corpus: tuple[Settings, Knowledge],
) -> None:
    """Matching every document's path against the scope's patterns is a Python loop: it looks
    at the deadline as it goes, so a cancelled search stops before reading any chunk."""
    _, k = corpus
    scope = Scope.build(["**/page1*.md", "**/page2*.md"])
    d = Deadline()
    d.cancel()
    with pytest.raises(SearchCancelled):
        k.search(scoped_request(COSTLY, 10, scope)._replace(deadline=d))
    assert k.search(scoped_request(COSTLY, 10, scope)).hits


def test_a_deadline_already_passed_reads_nothing(tmp_path: Path) -> None:
    settings = resolve_settings(cwd=make_corpus(tmp_path / "s", 3), store_base=tmp_path / "st")
    index_project(settings)
    k = Knowledge(settings)
    try:
        d = Deadline()
        d.cancel()
        with pytest.raises(SearchCancelled):
            k.search(SearchRequest("lorem", deadline=d))
        assert k.search(SearchRequest("lorem")).hits
    finally:
        k.close()
