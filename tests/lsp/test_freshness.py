"""Saves, client file events and the server's own watcher keep the index fresh."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
import pytest_asyncio
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.support.waiting import wait_until_async

from .conftest import (
    Client,
    Session,
    citations,
    copy_fixture,
    lsp_session,
    save,
    search,
    wait_indexed,
    watched,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")
DELETED = types.FileChangeType.Deleted
CREATED = types.FileChangeType.Created


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=["neovim", "vscode"])
async def session(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Session]:
    base = tmp_path_factory.mktemp(f"fresh-{request.param}")
    root = copy_fixture("basic", base / "basic")
    async with lsp_session([root], base, request.param, init_options={"watch": False}) as client:
        await wait_indexed(client)
        yield Session(client, root, base)


def finds(
    client: LanguageClient, query: str, citation: str | None
) -> Callable[[], Awaitable[bool]]:
    async def check() -> bool:
        found = citations(await search(client, query))
        return citation in found if citation else not found

    return check


async def test_did_save_makes_new_text_searchable(session: Session) -> None:
    client, root = session.client, session.root
    word = "pelican"
    path = root / "docs" / "install.md"
    path.write_text(path.read_text() + f"\nThe {word} appears after a save.\n")
    save(client, path)
    await wait_until_async(finds(client, word, "docs/install.md#0"))


async def test_delete_through_watched_files(session: Session) -> None:
    client, root = session.client, session.root
    doomed = root / "doomed.md"
    doomed.write_text("# Doomed\n\nThe walrus ledger lives here only briefly.\n")
    watched(client, (doomed, CREATED))
    await wait_until_async(finds(client, "walrus", f"{doomed.name}#0"))
    doomed.unlink()
    watched(client, (doomed, DELETED))
    await wait_until_async(finds(client, "walrus", None))


async def test_rename_through_watched_files(session: Session) -> None:
    client, root = session.client, session.root
    old = root / "old.md"
    new = root / "docs" / "new.md"
    old.write_text("# Moving\n\nThe albatross chapter moves to another folder.\n")
    watched(client, (old, CREATED))
    await wait_until_async(finds(client, "albatross", f"{old.name}#0"))
    old.rename(new)
    watched(client, (old, DELETED), (new, CREATED))
    await wait_until_async(finds(client, "albatross", f"docs/{new.name}#0"))
    assert citations(await search(client, "albatross")) == [f"docs/{new.name}#0"]


async def test_watched_files_registration(session: Session) -> None:
    client = session.client
    assert isinstance(client, Client)
    workspace = client.capabilities.workspace if client.capabilities else None
    dynamic = bool(
        workspace
        and workspace.did_change_watched_files
        and workspace.did_change_watched_files.dynamic_registration
    )
    if not dynamic:
        assert client.registrations == []
        return
    (registration,) = client.registrations
    assert registration.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
    options = registration.register_options
    assert options is not None
    watchers = options["watchers"] if isinstance(options, dict) else options.watchers
    assert [w["globPattern"] if isinstance(w, dict) else w.glob_pattern for w in watchers] == [
        "**/*.{md,markdown,txt,text}",
        "**/{.gitignore,.fiskignore}",
    ]


async def test_an_edited_fiskignore_takes_effect_without_a_reindex(session: Session) -> None:
    """Issue 16: saving .fiskignore prunes what it now ignores; removing it brings it back."""
    client, root = session.client, session.root
    kept = root / "kept" / "heron.md"
    kept.parent.mkdir(exist_ok=True)
    kept.write_text("# Heron\n\nThe heron roost moves with the tide.\n")
    watched(client, (kept, CREATED))
    await wait_until_async(finds(client, "heron", "kept/heron.md#0"))
    rules = root / ".fiskignore"
    rules.write_text("kept/\n")
    save(client, rules)
    await wait_until_async(finds(client, "heron", None))
    rules.unlink()
    watched(client, (rules, DELETED))
    await wait_until_async(finds(client, "heron", "kept/heron.md#0"))
