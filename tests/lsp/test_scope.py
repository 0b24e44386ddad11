"""``fisk.knowledge.search`` with ``paths``: relative to each project's root, or an editor's
absolute folder (which picks the project that holds it); bad paths are InvalidParams."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from pygls.exceptions import JsonRpcInvalidParams

from .conftest import Session, citations, copy_fixture, lsp_session, search, wait_indexed

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def session(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Session]:
    base = tmp_path_factory.mktemp("scope")
    first = copy_fixture("basic", base / "basic")
    second = copy_fixture("other", base / "other")
    (second / "docs").mkdir()
    (second / "docs" / "upgrade.md").write_text("# Upgrade\n\nUpgrading the narwhal.\n")
    async with lsp_session([first, second], base, "vscode") as client:
        await wait_indexed(client, runs=2)
        yield Session(client, first, base)


async def test_relative_paths_apply_in_every_project(session: Session) -> None:
    everywhere = await search(session.client, "upgrading", topK=10)
    assert len({r["location"]["targetUri"] for r in everywhere["results"]}) >= 2
    docs = await search(session.client, "upgrading", topK=10, paths=["docs"])
    uris = {r["location"]["targetUri"] for r in docs["results"]}
    assert uris == {
        (session.root / "docs" / "install.md").as_uri(),
        (session.base / "other" / "docs" / "upgrade.md").as_uri(),
    }
    glob = await search(session.client, "quokka", paths=["**/*.txt"])
    assert citations(glob) == ["notes.txt#0"]


async def test_an_absolute_folder_searches_only_its_project(session: Session) -> None:
    other = session.base / "other" / "docs"
    found = await search(session.client, "upgrading", topK=10, paths=[str(other)])
    assert [r["location"]["targetUri"] for r in found["results"]] == [
        (other / "upgrade.md").as_uri()
    ]


async def test_an_empty_scope_answers_no_hits(session: Session) -> None:
    empty = await search(session.client, "upgrading", paths=["nowhere"])
    assert empty["status"] == "ok" and empty["results"] == []


@pytest.mark.parametrize(
    ("paths", "message"),
    [
        (["../basic"], "outside the project root"),
        (["/nowhere/at/all"], "in no open project"),
        ("docs", "expected a list"),
        (["x"] * 17, "at most 16"),
    ],
)
async def test_bad_paths_are_invalid_params(session: Session, paths: object, message: str) -> None:
    with pytest.raises(JsonRpcInvalidParams, match=message):
        await search(session.client, "upgrading", paths=paths)
