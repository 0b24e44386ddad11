"""Changes on disk with no client notification at all reach the index (the server's watcher)."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
import pytest_asyncio

from tests.support.waiting import wait_until_async

from .conftest import Session, citations, copy_fixture, lsp_session, search, wait_indexed

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def session(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Session]:
    base = tmp_path_factory.mktemp("watch")
    root = copy_fixture("basic", base / "basic")
    async with lsp_session([root], base, "neovim") as client:
        await wait_indexed(client)
        yield Session(client, root, base)


def finds(session: Session, query: str, expected: list[str]) -> Callable[[], Awaitable[bool]]:
    async def check() -> bool:
        return citations(await search(session.client, query)) == expected

    return check


async def test_edit_on_disk_is_picked_up(session: Session) -> None:
    path = session.root / "notes.txt"
    path.write_text("Plain text notes about the flamingo census instead.\n")
    await wait_until_async(finds(session, "flamingo", ["notes.txt#0"]))
    assert citations(await search(session.client, "quokka")) == []


async def test_new_folder_and_folder_delete(session: Session) -> None:
    folder = session.root / "added"
    (folder / "deep").mkdir(parents=True)
    (folder / "deep" / "a.md").write_text("# A\n\nThe capybara almanac, first volume.\n")
    (folder / "b.markdown").write_text("# B\n\nThe capybara almanac, second volume.\n")
    expected = sorted(["added/deep/a.md#0", "added/b.markdown#0"])

    async def both() -> bool:
        return sorted(citations(await search(session.client, "capybara almanac"))) == expected

    await wait_until_async(both)
    shutil.rmtree(folder)
    await wait_until_async(finds(session, "capybara", []))


async def test_rename_on_disk(session: Session) -> None:
    (session.root / "docs" / "install.md").rename(session.root / "setup.md")
    await wait_until_async(finds(session, "marmalade", ["setup.md#0"]))


async def test_non_documents_are_ignored(session: Session) -> None:
    (session.root / "script.py").write_text("# marker: a python file about the ocelot\n")
    (session.root / "trigger.md").write_text("# Trigger\n\nThe ocelot trigger document.\n")
    await wait_until_async(finds(session, "ocelot", ["trigger.md#0"]))
