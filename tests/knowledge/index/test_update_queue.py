"""The core update queue (the freshness engine `watch` and the language server share):
coalescing, polite locking, joining and cancelling full runs, pruning, stopping."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from fisk_ls.knowledge import (
    IndexStats,
    Knowledge,
    SearchRequest,
    Settings,
    index_project,
    open_writer,
    resolve_settings,
    update_paths,
)
from fisk_ls.knowledge.index.hooks import QueueHooks, RunReporter
from fisk_ls.knowledge.index.ignore import IgnoreRules
from fisk_ls.knowledge.index.queue import UpdateQueue
from fisk_ls.knowledge.project import Project
from tests.support.waiting import HANG_GUARD, wait_until


def hits(settings: Settings, query: str) -> list[str]:
    knowledge = Knowledge(settings)
    try:
        return [h.citation for h in knowledge.search(SearchRequest(query)).hits]
    finally:
        knowledge.close()


def sources(settings: Settings) -> list[str]:
    knowledge = Knowledge(settings)
    try:
        return [s.path for s in knowledge.sources() or []]
    finally:
        knowledge.close()


class ManualClock:
    """A clock the test moves; the queue's coalescing windows follow it, not wall time."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def queue(settings: Settings) -> Iterator[UpdateQueue]:
    q = UpdateQueue(settings)
    q.start()
    q.request_full().result(timeout=HANG_GUARD)
    yield q
    q.stop()


def recording(q: UpdateQueue) -> list[set[Path]]:
    seen: list[set[Path]] = []

    def run(settings: Settings, paths: Iterable[Path], **kwargs: Any) -> IndexStats:
        batch = set(paths)
        seen.append(batch)
        return update_paths(settings, batch, **kwargs)

    q.run_update = run
    return seen


def test_a_burst_is_one_pass_over_just_those_files(settings: Settings, project: Path) -> None:
    clock = ManualClock()
    q = UpdateQueue(settings, clock=clock, delay=1.0, max_delay=5.0)
    q.start()
    try:
        q.request_full().result(timeout=HANG_GUARD)
        passes = recording(q)
        paths = []
        for i in range(30):
            path = project / "burst" / f"n{i}.md"
            path.parent.mkdir(exist_ok=True)
            path.write_text(f"# N{i}\n\nThe gannet colony, note {i}.\n")
            paths.append(path)
            q.add([path])
            clock.now += 0.1  # each change well inside the quiet window of the last
        assert passes == []  # the clock has not reached the end of the quiet window
        clock.now += 1.0
        with q._cond:
            q._cond.notify_all()
        assert q.wait_idle(HANG_GUARD)
        assert passes == [set(paths)]
        assert len(hits(settings, "gannet")) == 5
    finally:
        q.stop()


def test_a_steady_stream_still_gets_a_pass_at_max_delay(settings: Settings, project: Path) -> None:
    clock = ManualClock()
    q = UpdateQueue(settings, clock=clock, delay=1.0, max_delay=2.0)
    q.start()
    try:
        q.request_full().result(timeout=HANG_GUARD)
        passes = recording(q)
        path = project / "stream.md"
        path.write_text("# Stream\n\nkittiwake\n")
        for _ in range(4):
            q.add([path])
            clock.now += 0.6  # never quiet for a whole second
        with q._cond:
            q._cond.notify_all()
        wait_until(lambda: bool(passes))
        assert passes[0] == {path}
    finally:
        q.stop()


def test_paths_outside_the_roots_are_ignored(settings: Settings, tmp_path: Path) -> None:
    q = UpdateQueue(settings.with_overrides(roots=(settings.project_root / "docs",)))
    assert q.add([settings.project_root / "notes.txt", tmp_path / "elsewhere.md"]) == 0
    assert q.add([settings.project_root / "docs" / "design.md"]) == 1


@pytest.mark.slow
def test_a_locked_store_keeps_changes_and_retries(
    queue: UpdateQueue, settings: Settings, project: Path
) -> None:
    locked = threading.Event()
    queue.hooks = QueueHooks(on_locked=locked.set)
    path = project / "notes.txt"
    with open_writer(settings.store_dir):
        path.write_text("Notes about the puffin, written while another writer runs.\n")
        queue.add([path])
        assert locked.wait(HANG_GUARD)
        assert queue.busy
        assert hits(settings, "puffin") == []
    wait_until(lambda: hits(settings, "puffin") == ["notes.txt#0"])
    assert queue.wait_idle(HANG_GUARD)


def test_save_passes_and_full_runs_ask_the_queues_own_ignore_rules(
    queue: UpdateQueue, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The queue's rules stay current by themselves; no run rebuilds them (nor spawns git)."""
    built: list[Path] = []
    for_project = IgnoreRules.for_project.__func__  # type: ignore[attr-defined]

    def counted(cls: type[IgnoreRules], root: Path, exclude: Iterable[str] = ()) -> IgnoreRules:
        built.append(root)
        return for_project(cls, root, exclude)  # type: ignore[no-any-return]

    monkeypatch.setattr(IgnoreRules, "for_project", classmethod(counted))
    path = project / "notes.txt"
    path.write_text("Notes about the kingfisher.\n")
    queue.add([path])
    assert queue.wait_idle(HANG_GUARD)
    queue.request_full().result(timeout=HANG_GUARD)
    assert hits(queue.settings, "kingfisher") == ["notes.txt#0"]
    assert built == []


@pytest.mark.slow
def test_a_failing_pass_keeps_its_paths_and_reports_once(
    queue: UpdateQueue, settings: Settings, project: Path
) -> None:
    errors: list[Exception] = []
    queue.hooks = QueueHooks(on_error=errors.append)
    calls = {"n": 0}

    def flaky(settings: Settings, paths: Iterable[Path], **kwargs: Any) -> IndexStats:
        calls["n"] += 1
        if calls["n"] == 1:
            raise OSError("disk hiccup")
        return update_paths(settings, paths, **kwargs)

    queue.run_update = flaky
    path = project / "late.md"
    path.write_text("# Late\n\nthe albatross, not lost\n")
    queue.add([path])
    wait_until(lambda: hits(settings, "albatross") == ["late.md#0"])
    assert len(errors) == 1 and "disk hiccup" in str(errors[0])


class Gate(RunReporter):
    """Holds a full run at its plan step until released."""

    started = threading.Event()
    release = threading.Event()

    def on_plan(self, files: int) -> None:
        Gate.started.set()
        Gate.release.wait(HANG_GUARD)


@pytest.fixture
def gate() -> Iterator[type[Gate]]:
    Gate.started, Gate.release = threading.Event(), threading.Event()
    yield Gate
    Gate.release.set()


def test_a_second_full_run_joins_the_running_one(settings: Settings, gate: type[Gate]) -> None:
    q = UpdateQueue(settings, QueueHooks(reporter=gate))
    q.start()
    try:
        first = q.request_full()
        assert gate.started.wait(HANG_GUARD)
        assert q.request_full() is first
        rebuild = q.request_full(rebuild=True)
        assert rebuild is not first
        assert q.request_full() is first
        assert q.request_full(rebuild=True) is rebuild
        gate.release.set()
        assert first.result(HANG_GUARD).files == rebuild.result(HANG_GUARD).files == 3
    finally:
        q.stop()


def test_cancel_stops_the_running_full_run(settings: Settings, gate: type[Gate]) -> None:
    ended: list[str] = []

    class Reporter(Gate):
        def end(self, message: str) -> None:
            ended.append(message)

    q = UpdateQueue(settings, QueueHooks(reporter=Reporter))
    q.start()
    try:
        run = q.request_full()
        assert gate.started.wait(HANG_GUARD)
        assert q.cancel()
        gate.release.set()
        with pytest.raises(Exception, match="cancelled"):
            run.result(HANG_GUARD)
        assert ended == ["cancelled"]
        assert q.request_full() is not run  # a new request starts a new run
    finally:
        q.stop()


def test_stop_cancels_and_joins(settings: Settings) -> None:
    q = UpdateQueue(settings)
    q.start()
    q.stop(timeout=5)
    assert not q._thread.is_alive()


def test_a_full_run_over_the_configured_paths_prunes_what_they_no_longer_cover(
    project: Path, store_base: Path
) -> None:
    everything = resolve_settings(cwd=project, store_base=store_base)
    index_project(everything)
    assert "notes.txt" in sources(everything)
    narrowed = everything.with_overrides(roots=(project / "docs",))
    q = UpdateQueue(narrowed)
    q.start()
    try:
        stats = q.request_full().result(timeout=HANG_GUARD)
    finally:
        q.stop()
    assert stats.removed == 1
    assert sources(everything) == ["docs/design.md", "docs/ops/runbook.md"]


def test_watch_and_the_language_server_queue_leave_the_same_index(
    tmp_path: Path, store_base: Path
) -> None:
    """Same config, same index: `fisk-ai knowledge watch` (``Project.watch``) and the language
    server (an ``UpdateQueue`` per folder) run the same engine, pruning included."""
    from tests.conftest import write_docs

    indexes: list[list[str]] = []
    for name in ("cli", "lsp"):
        root = tmp_path / name
        root.mkdir()
        write_docs(root)
        (root / "agent.yaml").write_text(
            "identity: same\nharness:\n  knowledge:\n    enabled: true\n    paths: [docs]\n"
        )
        settings = resolve_settings(cwd=root, store_base=store_base / name)
        index_project(settings, (root,))  # explicit roots: everything, nothing pruned
        assert "notes.txt" in sources(settings)
        if name == "cli":
            stop = threading.Event()
            done: list[IndexStats] = []

            def initial(
                stats: IndexStats, stop: threading.Event = stop, done: list[IndexStats] = done
            ) -> None:
                done.append(stats)
                stop.set()

            with Project(settings) as p:
                p.watch(debounce=0.2, stop=stop, on_initial=initial)
            assert done and done[0].removed == 1
        else:
            q = UpdateQueue(settings)
            q.start()
            try:
                assert q.request_full().result(timeout=HANG_GUARD).removed == 1
            finally:
                q.stop()
        indexes.append(sources(settings))
    assert indexes[0] == indexes[1] == ["docs/design.md", "docs/ops/runbook.md"]
