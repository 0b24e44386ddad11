"""Several workspace folders: one index each, searched together, citations in the right root."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import cast

import pytest
import pytest_asyncio
from lsprotocol import types

from tests.support.waiting import wait_until_async

from .conftest import (
    Session,
    citations,
    command,
    copy_fixture,
    lsp_session,
    save,
    search,
    wait_indexed,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=["neovim", "vscode"])
async def session(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Session]:
    base = tmp_path_factory.mktemp(f"multi-{request.param}")
    first = copy_fixture("basic", base / "basic")
    second = copy_fixture("other", base / "other")
    (second / "guide.md").write_text("# Second guide\n\nA guide in the second folder.\n")
    async with lsp_session([first, second], base, request.param) as client:
        await wait_indexed(client, runs=2)
        yield Session(client, first, base)


def other(session: Session) -> Path:
    return session.base / "other"


async def test_one_progress_run_per_root(session: Session) -> None:
    ends: list[types.WorkDoneProgressEnd] = [
        last
        for reports in session.client.progress_reports.values()
        if reports and isinstance(last := cast(object, reports[-1]), types.WorkDoneProgressEnd)
    ]
    assert len(ends) == 2
    labels = sorted((e.message or "").rsplit(" ", 1)[-1] for e in ends)
    assert labels == ["(basic)", "(other)"]


async def test_search_merges_roots(session: Session) -> None:
    result = await search(session.client, "narwhal")
    assert citations(result) == ["handbook.md#0"]
    assert (
        result["results"][0]["location"]["targetUri"] == (other(session) / "handbook.md").as_uri()
    )
    merged = await search(session.client, "guide", topK=10)
    uris = {r["location"]["targetUri"] for r in merged["results"]}
    assert (session.root / "guide.md").as_uri() in uris
    assert (other(session) / "guide.md").as_uri() in uris
    scores = [r["score"] for r in merged["results"]]
    assert scores == sorted(scores, reverse=True)


async def test_show_resolves_in_the_root_that_has_it(session: Session) -> None:
    shown = await command(session.client, "fisk.knowledge.show", {"citation": "handbook.md#0"})
    assert shown["location"]["targetUri"] == (other(session) / "handbook.md").as_uri()
    first = await command(session.client, "fisk.knowledge.show", {"citation": "guide.md#0"})
    assert first["location"]["targetUri"] == (session.root / "guide.md").as_uri()


async def test_status_lists_every_root(session: Session) -> None:
    status = await command(session.client, "fisk.knowledge.status")
    roots = {Path(r["root"]).name: r for r in status["roots"]}
    assert set(roots) == {"basic", "other"}
    assert roots["other"]["documents"] == 2
    assert roots["basic"]["store"] != roots["other"]["store"]


async def test_save_in_second_root(session: Session) -> None:
    path = other(session) / "handbook.md"
    path.write_text(path.read_text() + "\nThe expedition found a kraken.\n")
    save(session.client, path)

    async def found() -> bool:
        return citations(await search(session.client, "kraken")) == ["handbook.md#0"]

    await wait_until_async(found)


async def test_two_folders_of_one_repository_share_one_index(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """``repo/docs`` and ``repo/notes`` opened as two workspace folders are one project (the
    root rule finds the repository's top for both): one index, every hit once, and removing one
    folder keeps the other answering."""
    from lsprotocol import types

    from .conftest import citations, command, lsp_session, search, wait_indexed

    base = tmp_path_factory.mktemp("one-repo")
    repo = base / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "docs").mkdir()
    (repo / "notes").mkdir()
    (repo / "docs" / "a.md").write_text("# A\n\nThe pelican rule applies here.\n")
    (repo / "notes" / "b.md").write_text("# B\n\nNothing about birds.\n")
    async with lsp_session([repo / "docs", repo / "notes"], base) as client:
        await wait_indexed(client)
        status = await command(client, "fisk.knowledge.status")
        assert len(status["roots"]) == 1
        assert citations(await search(client, "pelican")) == ["docs/a.md#0"]
        removed = types.WorkspaceFolder(uri=(repo / "notes").as_uri(), name="notes")
        client.workspace_did_change_workspace_folders(
            types.DidChangeWorkspaceFoldersParams(
                event=types.WorkspaceFoldersChangeEvent(added=[], removed=[removed])
            )
        )
        assert citations(await search(client, "pelican")) == ["docs/a.md#0"]
