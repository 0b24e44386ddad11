"""A search during an index run answers with the results so far and says how far the run got:
from the update queue in this process (from the moment the run is scheduled), from the record
another writer keeps beside the store otherwise. Runs are held at a step by injected reporters,
never by sleeps."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fisk_ls.knowledge import (
    IndexRun,
    Knowledge,
    Project,
    QueueHooks,
    RunReporter,
    SearchRequest,
    Settings,
    Status,
    index_project,
    search_notice,
)
from fisk_ls.knowledge.lock import WriterLock
from fisk_ls.knowledge.progress import (
    RUN_NAME,
    RunRecord,
    parse_record,
    recorded_run,
    run_path,
)
from tests.support.waiting import HANG_GUARD


class Hold(RunReporter):
    """Holds a run at its ``at``-th file (0: at its plan) until released."""

    at = 0
    reached = threading.Event()
    release = threading.Event()

    def on_plan(self, files: int) -> None:
        if Hold.at == 0:
            Hold.reached.set()
            Hold.release.wait(HANG_GUARD)

    def on_file(self, done: int, key: str) -> None:
        if done == Hold.at:
            Hold.reached.set()
            Hold.release.wait(HANG_GUARD)


@pytest.fixture
def hold() -> Iterator[type[Hold]]:
    Hold.at, Hold.reached, Hold.release = 0, threading.Event(), threading.Event()
    yield Hold
    Hold.release.set()


def test_a_scheduled_run_is_known_before_its_walk(settings: Settings) -> None:
    with Project(settings) as project:
        project.updates(watch=False)
        assert project.indexing() is None
        project.request_full()  # scheduled; the queue is not even started
        assert project.indexing() == IndexRun()
        found = project.reader.search(SearchRequest("backpressure"))
        assert found.status == Status.INDEX_NOT_BUILT and found.indexing == IndexRun()
        assert search_notice(found) == "still indexing: counting files; nothing is searchable yet"


def test_the_first_run_says_how_far_it_got_instead_of_not_built(
    settings: Settings, hold: type[Hold]
) -> None:
    with Project(settings) as project:
        project.updates(QueueHooks(reporter=hold), watch=False)
        done = project.start()
        assert hold.reached.wait(HANG_GUARD)
        found = project.reader.search(SearchRequest("backpressure"))
        assert found.status == Status.INDEX_EMPTY  # the store exists; nothing is written yet
        assert found.indexing == IndexRun(0, 3)
        assert search_notice(found) == "still indexing: 0 of 3 files; nothing is searchable yet"
        hold.release.set()
        assert done is not None and done.result(HANG_GUARD).files == 3
        after = project.reader.search(SearchRequest("backpressure"))
        assert after.status == Status.OK and after.hits and after.indexing is None
        assert search_notice(after) is None


def test_a_search_during_a_run_answers_the_results_so_far(
    settings: Settings, hold: type[Hold]
) -> None:
    index_project(settings)
    hold.at = 2
    with Project(settings) as project:
        project.updates(QueueHooks(reporter=hold), watch=False)
        project.start()
        assert hold.reached.wait(HANG_GUARD)
        found = project.reader.search(SearchRequest("backpressure"))
        assert found.status == Status.OK and [h.path for h in found.hits] == ["docs/design.md"]
        assert found.indexing == IndexRun(2, 3)
        assert search_notice(found) == "still indexing: 2 of 3 files; these are the results so far"
        missing = project.reader.search(SearchRequest("zeppelin"))
        assert search_notice(missing) == (
            "no document indexed so far contains these words (still indexing: 2 of 3 files)"
        )
        hold.release.set()


def test_another_writers_run_is_read_from_its_record(settings: Settings, hold: type[Hold]) -> None:
    """A reader with no queue of its own (the CLI, the MCP server) reads the record the writer
    keeps while it holds the lock (here the writer is a thread: another open of the lock file
    conflicts just as another process's does)."""
    failures: list[BaseException] = []

    def writer() -> None:
        try:
            index_project(settings, reporter=hold())
        except BaseException as exc:
            failures.append(exc)

    thread = threading.Thread(target=writer)
    thread.start()
    kb = Knowledge(settings)
    try:
        assert hold.reached.wait(HANG_GUARD)
        assert run_path(settings.store_dir).is_file()
        assert kb.search(SearchRequest("backpressure")).indexing == IndexRun(0, 3)
        hold.release.set()
        thread.join(HANG_GUARD)
        assert not failures
        assert not run_path(settings.store_dir).exists()  # removed at the run's end
        assert kb.search(SearchRequest("backpressure")).indexing is None
    finally:
        hold.release.set()
        thread.join(HANG_GUARD)
        kb.close()


def test_a_record_left_by_a_killed_run_says_nothing(settings: Settings) -> None:
    index_project(settings)
    path = run_path(settings.store_dir)
    path.write_text(json.dumps({"pid": 1, "files": 3, "total": 9}))
    assert recorded_run(settings.store_dir) is None  # nobody holds the lock
    with WriterLock(settings.store_dir) as lock:
        lock.acquire()
        assert recorded_run(settings.store_dir) == IndexRun(3, 9)


def test_a_dry_run_records_nothing(settings: Settings, hold: type[Hold]) -> None:
    seen: list[bool] = []

    class Look(RunReporter):
        def on_plan(self, files: int) -> None:
            seen.append(run_path(settings.store_dir).exists())

    index_project(settings, dry_run=True, reporter=Look())
    assert seen == [False]


def test_the_record_is_rewritten_at_most_every_half_second(tmp_path: Path) -> None:
    now = [0.0]
    record = RunRecord(tmp_path, clock=lambda: now[0])
    record.start()
    record.plan(100)
    writes = []
    for done in range(1, 101):
        now[0] += 0.01
        before = (tmp_path / RUN_NAME).read_bytes()
        record.file(done)
        writes.append((tmp_path / RUN_NAME).read_bytes() != before)
    assert sum(writes) == 2  # at 0.5 s and 1.0 s of a 1 s run
    assert parse_record((tmp_path / RUN_NAME).read_bytes()) == IndexRun(100, 100)
    record.end()
    assert list(tmp_path.iterdir()) == []


@given(st.binary(max_size=200))
def test_any_record_reads_as_a_run(raw: bytes) -> None:
    run = parse_record(raw)
    assert run.files >= 0
    assert run.total is None or 0 <= run.files <= run.total


@given(
    st.integers(min_value=-5, max_value=10**9) | st.none() | st.booleans() | st.text(max_size=3),
    st.integers(min_value=-5, max_value=10**9) | st.none() | st.booleans() | st.text(max_size=3),
)
def test_any_json_record_reads_as_a_run(files: object, total: object) -> None:
    run = parse_record(json.dumps({"files": files, "total": total}).encode())
    assert run.files >= 0
    assert run.total is None or 0 <= run.files <= run.total
    describe = run.describe()
    assert describe.startswith("still indexing: ")


def test_runs_of_several_projects_join() -> None:
    assert IndexRun.joined([None, None]) is None
    assert IndexRun.joined([IndexRun(2, 5), None, IndexRun(1, 4)]) == IndexRun(3, 9)
    assert IndexRun.joined([IndexRun(2, 5), IndexRun()]) == IndexRun(2, None)
