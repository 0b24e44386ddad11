"""A writer rebuilding while readers search: no errors, never empty, never "locked"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from fisk_ls.knowledge import (
    IndexLocked,
    Knowledge,
    SearchRequest,
    Settings,
    index_project,
    open_writer,
)
from fisk_ls.knowledge.lock import WriterLock
from tests.support.waiting import HANG_GUARD

pytestmark = pytest.mark.slow


def make_corpus(root: Path, files: int) -> None:
    for i in range(files):
        p = root / "docs" / f"d{i:04}.md"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(
            f"# Doc {i}\n\n## Body\n\nsteady anchor text {i} " + "filler words " * 80 + "\n"
        )


def test_readers_during_rebuilds(settings: Settings, project: Path) -> None:
    """Two in-process readers, the CLI and the language server search while a writer rebuilds
    (three --reindex runs and updates); the server's own background index shares the lock."""
    make_corpus(project, 600)
    index_project(settings)
    stop = threading.Event()
    errors: list[str] = []
    empties: list[str] = []
    counts = [0] * 4

    def reader(n: int) -> None:
        kb = Knowledge(settings)
        while not stop.is_set():
            try:
                res = kb.search(SearchRequest("steady anchor"))
                if res.status != "ok" or not res.hits:
                    empties.append(res.status)
                counts[n] += 1
            except Exception as exc:  # any reader error fails the test
                errors.append(repr(exc))
        kb.close()

    env = {**os.environ, "FISK_AI_STORE_DIR": str(settings.store_dir.parent)}

    def cli_reader() -> None:
        while not stop.is_set():
            out = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "fisk_ls.cli",
                    "knowledge",
                    "search",
                    "steady anchor",
                    "--json",
                ],
                cwd=project,
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
            )
            if out.returncode != 0:
                errors.append(out.stderr)
            elif not json.loads(out.stdout)["results"]:
                empties.append("cli")

    from tests.support.raw_lsp import RawClient, command

    lsp = RawClient(project, env)
    lsp.request(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": project.as_uri(),
            "capabilities": {},
            "initializationOptions": {"watch": False},
        },
    )
    lsp.notify("initialized", {})

    def lsp_reader() -> None:
        while not stop.is_set():
            msg = command(lsp, "fisk.knowledge.search", {"query": "steady anchor"})
            if "error" in msg:
                errors.append(str(msg["error"]))
            elif not msg["result"]["results"]:
                empties.append("lsp")

    threads = [threading.Thread(target=reader, args=(n,)) for n in range(2)]
    threads.append(threading.Thread(target=cli_reader))
    threads.append(threading.Thread(target=lsp_reader))
    for t in threads:
        t.start()
    try:
        for _ in range(3):  # the language server's own runs share the lock: wait politely
            index_project(settings, rebuild=True, wait=60)
            (project / "docs" / "d0001.md").write_text("# Doc 1\n\nsteady anchor changed\n")
            index_project(settings, wait=60)
    finally:
        stop.set()
        for t in threads:
            t.join(HANG_GUARD)
        lsp.close()
    assert not errors, errors[:3]
    assert not empties, empties[:3]
    assert all(c > 0 for c in counts[:2])


def test_two_writers(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    index_project(settings)
    refused = threading.Event()
    try_lock = WriterLock._try

    def observed(lock: WriterLock) -> bool:
        got = try_lock(lock)
        if not got and threading.current_thread() is not threading.main_thread():
            refused.set()
        return got

    with open_writer(settings.store_dir):
        with pytest.raises(IndexLocked):
            index_project(settings)
        monkeypatch.setattr(WriterLock, "_try", observed)
        result: list[object] = []

        def waiter() -> None:
            result.append(index_project(settings, wait=60))

        th = threading.Thread(target=waiter)
        th.start()
        assert refused.wait(HANG_GUARD)  # the waiter found the lock held and is waiting for it
        assert not result
    th.join(HANG_GUARD)
    assert result
