"""The watcher (checklist 48–51): coalesced per-path updates, lock politeness."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from fisk_ls.knowledge import (
    IndexLocked,
    Knowledge,
    KnowledgeError,
    Settings,
    index,
    update_paths,
)
from fisk_ls.knowledge.index.watcher import watch


def wait_for(cond: Callable[[], bool], timeout: float = 10.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


def docs(settings: Settings) -> set[str]:
    return {s.path for s in Knowledge(settings).sources() or []}


def test_debounce_minimum(settings: Settings) -> None:  # 48
    with pytest.raises(KnowledgeError, match="at least 100ms"):
        watch(settings.roots, settings.store_dir, lambda p: None, debounce=0.01)  # type: ignore[arg-type,return-value]


def test_only_missing_roots(settings: Settings, tmp_path: Path) -> None:  # 50
    with pytest.raises(KnowledgeError, match="none of the knowledge paths exist"):
        watch((tmp_path / "nope",), settings.store_dir, lambda p: None, debounce=0.2)  # type: ignore[arg-type,return-value]


class Runner:
    def __init__(self, settings: Settings, roots: tuple[Path, ...], apply=None) -> None:  # type: ignore[no-untyped-def]
        self.stop = threading.Event()
        self.warnings: list[str] = []
        self.batches: list[set[Path]] = []
        self.errors: list[BaseException] = []
        apply = apply or (lambda batch: update_paths(settings, batch))

        def run() -> None:
            try:
                watch(
                    roots,
                    settings.store_dir,
                    apply,
                    debounce=0.2,
                    stop=self.stop,
                    on_detect=self.batches.append,
                    on_warn=self.warnings.append,
                    retry_delay=0.2,
                )
            except BaseException as exc:  # pragma: no cover - surfaced by the assert below
                self.errors.append(exc)

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        time.sleep(0.5)  # let the OS watches settle

    def close(self) -> None:
        self.stop.set()
        self.thread.join(10)
        assert not self.thread.is_alive() and not self.errors


def test_create_change_delete(settings: Settings, project: Path) -> None:  # 49, 51
    index(settings)
    runner = Runner(settings, (*settings.roots, project / "missing"))
    try:
        assert any("missing" in w for w in runner.warnings)
        (project / "new.md").write_text("# New\n\nwombat facts\n")
        assert wait_for(lambda: "new.md" in docs(settings))
        (project / "new.md").write_text("# New\n\nquokka facts\n")
        assert wait_for(lambda: bool(Knowledge(settings).search("quokka").hits))
        (project / "new.md").unlink()
        assert wait_for(lambda: "new.md" not in docs(settings))
        (project / "docs").rename(project / "moved")
        assert wait_for(
            lambda: "moved/design.md" in docs(settings) and "docs/design.md" not in docs(settings)
        )
    finally:
        runner.close()


def test_burst_is_coalesced(settings: Settings, project: Path) -> None:
    index(settings)
    runner = Runner(settings, settings.roots)
    try:
        for i in range(50):
            (project / f"burst{i}.md").write_text(f"# B{i}\n")
        assert wait_for(lambda: sum(p.startswith("burst") for p in docs(settings)) == 50)
        assert len(runner.batches) < 10
    finally:
        runner.close()


def test_locked_batches_are_kept(settings: Settings, project: Path) -> None:
    index(settings)
    calls = {"n": 0}

    def flaky(batch: set[Path]):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] <= 2:
            raise IndexLocked("busy")
        return update_paths(settings, batch)

    runner = Runner(settings, settings.roots, flaky)
    try:
        (project / "late.md").write_text("# Late\n\nnot lost\n")
        (project / "notes.txt").unlink()
        assert wait_for(lambda: "late.md" in docs(settings) and "notes.txt" not in docs(settings))
        assert any("another knowledge writer" in w for w in runner.warnings)
    finally:
        runner.close()
