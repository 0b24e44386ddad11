"""The server's search result and status say what is true: words no document holds are not "no
searchable words"; while a run goes on (here another writer's, held at its plan by an injected
reporter in this test process) a search says how far it got, and status reports the run from
the moment a folder is added, before any progress begins."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from lsprotocol import types

from fisk_ls.knowledge import RunReporter, index_project, resolve_settings
from fisk_ls.knowledge.notices import NO_MATCH, NO_TERMS_SENTENCE
from tests.support.waiting import HANG_GUARD, wait_until_async

from .conftest import command, copy_fixture, lsp_session, search, wait_idle, wait_indexed

pytestmark = pytest.mark.asyncio


@contextmanager
def held_run(root: Path, base: Path) -> Iterator[None]:
    """An index run of ``root`` in this process (another writer to the server), held at its
    plan until the block ends."""
    reached, release = threading.Event(), threading.Event()

    class Hold(RunReporter):
        def on_plan(self, files: int) -> None:
            reached.set()
            release.wait(HANG_GUARD)

    settings = resolve_settings(cwd=root, store_base=base / "stores")
    thread = threading.Thread(target=lambda: index_project(settings, reporter=Hold()))
    thread.start()
    try:
        assert reached.wait(HANG_GUARD)
        yield
    finally:
        release.set()
        thread.join(HANG_GUARD)


async def test_missing_words_and_no_words(tmp_path: Path) -> None:
    root = copy_fixture("basic", tmp_path / "basic")
    async with lsp_session([root], tmp_path) as client:
        await wait_indexed(client)
        missing = await search(client, "flibbertigibbet")
        assert (missing["status"], missing["note"], missing["results"]) == ("ok", NO_MATCH, [])
        assert missing["indexing"] is None
        nothing = await search(client, "?!")
        assert (nothing["status"], nothing["note"]) == ("no_terms", NO_TERMS_SENTENCE)
        assert (await search(client, "zeppelin"))["note"] is None


async def test_a_search_during_another_writers_run(tmp_path: Path) -> None:
    root = copy_fixture("basic", tmp_path / "basic")
    with held_run(root, tmp_path):
        async with lsp_session([root], tmp_path) as client:
            status = await command(client, "fisk.knowledge.status")
            assert status["indexing"] is True
            assert status["roots"][0]["run"] == {"files": 0, "total": 4}
            found = await search(client, "zeppelin")
            assert found["status"] == "index_empty"
            assert found["indexing"] == {"files": 0, "total": 4}
            assert found["note"] == "still indexing: 0 of 4 files; nothing is searchable yet"


async def test_a_folder_added_is_indexing_from_the_first_status(tmp_path: Path) -> None:
    first = copy_fixture("basic", tmp_path / "basic")
    second = copy_fixture("other", tmp_path / "other")
    async with lsp_session([first], tmp_path, "vscode") as client:
        await wait_indexed(client)
        with held_run(second, tmp_path):  # the new folder's first run waits for this writer
            added = types.WorkspaceFolder(uri=second.as_uri(), name="other")
            client.workspace_did_change_workspace_folders(
                types.DidChangeWorkspaceFoldersParams(
                    event=types.WorkspaceFoldersChangeEvent(added=[added], removed=[])
                )
            )
            assert (await command(client, "fisk.knowledge.status"))["indexing"] is True

            async def listed() -> dict[str, object] | None:
                status = await command(client, "fisk.knowledge.status")
                assert status["indexing"] is True
                roots = {Path(r["root"]).name: r for r in status["roots"]}
                return roots.get("other")

            other = await wait_until_async(listed)
            assert other["indexing"] is True and other["run"] is not None
        status = await wait_idle(client)
        assert [r["run"] for r in status["roots"]] == [None, None]
