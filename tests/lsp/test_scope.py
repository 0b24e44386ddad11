"""``fisk.knowledge.search`` with ``paths``: relative to each project's root, or an editor's
absolute folder (which picks the project that holds it); with ``tags``: pages whose front matter
lists one of them, in every project; bad paths and tags are InvalidParams."""

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
    (first / "tagged.md").write_text("---\ntags: [Beta]\n---\n\nThe walrus tagged page.\n")
    (second / "docs" / "walrus.md").write_text("---\ntags: beta api\n---\n\nA walrus here.\n")
    (second / "walrus.md").write_text("# Walrus\n\nThe walrus, untagged.\n")
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
        (["/nowhere/at/all"], "outside the project root"),
        ("docs", "expected a list"),
        (["x"] * 17, "at most 16"),
    ],
)
async def test_bad_paths_are_invalid_params(session: Session, paths: object, message: str) -> None:
    with pytest.raises(JsonRpcInvalidParams, match=message):
        await search(session.client, "upgrading", paths=paths)


async def test_tags_keep_to_tagged_pages_in_every_project(session: Session) -> None:
    every = await search(session.client, "walrus", topK=10)
    assert len(every["results"]) == 3
    beta = await search(session.client, "walrus", topK=10, tags=["#BETA"])
    assert {r["location"]["targetUri"] for r in beta["results"]} == {
        (session.root / "tagged.md").as_uri(),
        (session.base / "other" / "docs" / "walrus.md").as_uri(),
    }
    both = await search(session.client, "walrus", topK=10, tags=["beta"], paths=["docs"])
    assert [r["location"]["targetUri"] for r in both["results"]] == [
        (session.base / "other" / "docs" / "walrus.md").as_uri()
    ]
    none = await search(session.client, "walrus", tags=["nothing"])
    assert none["status"] == "ok" and none["results"] == []


@pytest.mark.parametrize(
    ("tags", "message"),
    [
        ("beta", "tags: expected a list"),
        (["x"] * 17, "tags: at most 16 tags"),
        (["x" * 101], r"tags\[0\]: expected a tag of at most 100"),
    ],
)
async def test_bad_tags_are_invalid_params(session: Session, tags: object, message: str) -> None:
    with pytest.raises(JsonRpcInvalidParams, match=message):
        await search(session.client, "walrus", tags=tags)
