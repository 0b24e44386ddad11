"""The lexical arms of a search with ``also`` strings, side by side on worker threads
(arms.py): the same ranking as one after another, and never a mix of two states of the index
when a commit lands between the search's snapshot and a worker's."""

from __future__ import annotations

import contextlib
import random
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fisk_ls.knowledge.arms as arms
import fisk_ls.knowledge.search as search
from fisk_ls.knowledge import Knowledge, SearchRequest, index_project, resolve_settings
from fisk_ls.knowledge.arms import ArmPool
from fisk_ls.knowledge.deadline import Deadline
from fisk_ls.knowledge.location import Settings
from fisk_ls.knowledge.store import Snapshot
from tests.support.waiting import HANG_GUARD

WORDS = [
    "span",
    "trace",
    "metric",
    "exporter",
    "collector",
    "sampler",
    "resource",
    "attribute",
    "baggage",
    "context",
    "propagator",
    "processor",
    "batch",
    "endpoint",
    "protocol",
    "header",
    "service",
    "name",
    "instrument",
    "meter",
    "histogram",
    "counter",
    "gauge",
    "view",
    "signal",
    "pipeline",
    "receiver",
    "agent",
    "sidecar",
    "gateway",
]


def write_corpus(root: Path, pages: int = 40, seed: int = 7) -> Path:
    """Pages of random words from ``WORDS`` under a few headings (seeded: every run alike)."""
    rng = random.Random(seed)
    for i in range(pages):
        sections = []
        for j in range(4):
            heading = " ".join(rng.sample(WORDS, 2))
            body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 60)))
            sections.append(f"## {heading} {j}\n\n{body}\n")
        path = root / f"d{i % 4}" / f"page{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# Page {i} {rng.choice(WORDS)}\n\n" + "\n".join(sections))
    return root


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Settings, Knowledge]]:
    base = tmp_path_factory.mktemp("arms")
    s = resolve_settings(cwd=write_corpus(base / "site"), store_base=base / "stores")
    index_project(s)
    k = Knowledge(s)
    k.arms = ArmPool(k.store, workers=2, min_postings=0)
    yield s, k
    k.close()


def sequential(k: Knowledge, query: str, also: list[str]) -> Any:
    pool, k.arms = k.arms, None
    try:
        return k.search(SearchRequest(query, 10, also=also))
    finally:
        k.arms = pool


strings = st.lists(st.sampled_from(WORDS), min_size=0, max_size=6).map(" ".join)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(query=strings, also=st.lists(strings, min_size=1, max_size=4))
def test_side_by_side_ranks_as_one_after_another(
    site: tuple[Settings, Knowledge], query: str, also: list[str]
) -> None:
    _, k = site
    assert k.search(SearchRequest(query, 10, also=also)) == sequential(k, query, also)


def test_workers_take_arms_when_nothing_changed(
    site: tuple[Settings, Knowledge], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, k = site
    threads: list[str] = []
    searching = threading.current_thread()
    worker_ran = threading.Event()
    arm = search.lexical_arm

    def recorded(snap: Snapshot, *a: Any) -> list[tuple[int, float]]:
        if threading.current_thread() is searching:
            assert worker_ran.wait(HANG_GUARD)  # its first arm taken, the rest are left to a worker
        else:
            worker_ran.set()
        threads.append(threading.current_thread().name)
        return arm(snap, *a)

    also = ["span exporter collector", "trace context propagator header", "metric view"]
    want = sequential(k, "how is a span exported", also)
    monkeypatch.setattr(search, "lexical_arm", recorded)
    before = k.arms.fallbacks if k.arms else 0
    got = k.search(SearchRequest("how is a span exported", 10, also=also))
    assert got == want
    assert any(t.startswith("fisk-arm") for t in threads)
    assert k.arms is not None and k.arms.fallbacks == before


def test_a_worker_that_cannot_open_the_store_leaves_the_arms_to_the_search(
    site: tuple[Settings, Knowledge], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store replaced or damaged after the search's snapshot opened: the worker's open
    fails, and the search still answers from its own snapshot, as without workers."""
    _, k = site
    assert k.arms is not None
    query, also = "span exporter", ["collector pipeline receiver", "span batch processor"]
    want = sequential(k, query, also)
    searching = threading.current_thread()
    real_snapshot = k.store.snapshot
    tried = threading.Event()

    @contextlib.contextmanager
    def snapshot(deadline: Deadline | None = None) -> Iterator[Snapshot | None]:
        if threading.current_thread() is not searching:
            tried.set()
            raise OSError("the store was replaced")
        with real_snapshot(deadline) as snap:
            yield snap

    real_arm = search.lexical_arm

    def arm(snap: Snapshot, *a: Any) -> list[tuple[int, float]]:
        assert tried.wait(HANG_GUARD)  # the worker has tried before the search takes any arm
        return real_arm(snap, *a)

    fallbacks = k.arms.fallbacks
    monkeypatch.setattr(k.store, "snapshot", snapshot)
    monkeypatch.setattr(search, "lexical_arm", arm)
    assert k.search(SearchRequest(query, 10, also=also)) == want
    assert k.arms.fallbacks > fallbacks


def test_a_commit_between_the_snapshots_falls_back_to_the_search_s_own(
    site: tuple[Settings, Knowledge], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker opens its snapshot only after a write has committed: it must take no arm,
    and the search answers from the state its own snapshot read (before the write)."""
    s, k = site
    assert k.arms is not None
    query, also = "span exporter", ["collector pipeline receiver", "span batch processor"]
    before = sequential(k, query, also)
    reached, go, decided = threading.Event(), threading.Event(), threading.Event()
    searching = threading.current_thread()
    real_snapshot = k.store.snapshot
    real_state = arms.state
    real_arm = search.lexical_arm
    threads: list[str] = []

    @contextlib.contextmanager
    def snapshot(deadline: Deadline | None = None) -> Iterator[Snapshot | None]:
        if threading.current_thread() is not searching:
            reached.set()  # the search's snapshot is open; the worker's is not yet
            assert go.wait(HANG_GUARD)
        with real_snapshot(deadline) as snap:
            yield snap

    def state(snap: Snapshot) -> arms.State:
        got = real_state(snap)
        if threading.current_thread() is not searching:
            decided.set()
        return got

    def arm(snap: Snapshot, *a: Any) -> list[tuple[int, float]]:
        if threading.current_thread() is searching:
            assert decided.wait(HANG_GUARD)  # keep every arm for the worker until it has checked
        threads.append(threading.current_thread().name)
        return real_arm(snap, *a)

    page = Path(s.project_root) / "d0" / "new.md"

    def write() -> None:
        assert reached.wait(HANG_GUARD)
        page.write_text("# Span exporter\n\nspan exporter span exporter collector pipeline\n")
        index_project(s)
        go.set()

    monkeypatch.setattr(k.store, "snapshot", snapshot)
    monkeypatch.setattr(arms, "state", state)
    monkeypatch.setattr(search, "lexical_arm", arm)
    fallbacks = k.arms.fallbacks
    writer = threading.Thread(target=write)
    writer.start()
    try:
        got = k.search(SearchRequest(query, 10, also=also))
    finally:
        go.set()
        writer.join(HANG_GUARD)
        monkeypatch.undo()
        page.unlink()
        index_project(s)
    assert not writer.is_alive()
    assert got == before  # not a mix of the two states
    assert all(h.path != "d0/new.md" for h in got.hits)
    assert k.arms.fallbacks > fallbacks
    assert threads and all(t == searching.name for t in threads)


def test_close_ends_the_workers(tmp_path: Path) -> None:
    s = resolve_settings(cwd=write_corpus(tmp_path / "site", pages=8), store_base=tmp_path / "st")
    index_project(s)
    running = set(threading.enumerate())
    k = Knowledge(s)
    k.arms = ArmPool(k.store, workers=1, min_postings=0)
    k.search(SearchRequest("span", 5, also=["trace metric", "collector"]))
    assert [t for t in set(threading.enumerate()) - running if t.name.startswith("fisk-arm")]
    k.close()
    assert not [t for t in set(threading.enumerate()) - running if t.name.startswith("fisk-arm")]
