"""Citation features stay linear and bounded: one line of 5,000 citations, a 10 MB document,
documents the editor never opened (links out, FIFOs, files outside the project)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types

from fisk_ls.lsp import citations
from tests.support.waiting import wait_until_async

from .conftest import Session, copy_fixture, lsp_session, wait_indexed

pytestmark = pytest.mark.asyncio(loop_scope="module")

LONG_LINE = "docs/install.md#0 " + " ".join(f"guide.md#{i}" for i in range(5000))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def session(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Session]:
    base = tmp_path_factory.mktemp("cite-limits")
    root = copy_fixture("basic", base / "basic")
    async with lsp_session([root], base, "vscode") as client:
        await wait_indexed(client)
        yield Session(client, root, base)


def open_text(session: Session, name: str, text: str) -> types.TextDocumentIdentifier:
    uri = (session.root / name).as_uri()
    session.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="markdown", version=1, text=text
            )
        )
    )
    return types.TextDocumentIdentifier(uri=uri)


async def links(session: Session, doc: types.TextDocumentIdentifier) -> list[types.DocumentLink]:
    found = await session.client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=doc)
    )
    return list(found or [])


async def hover(session: Session, doc: types.TextDocumentIdentifier, line: int = 0) -> str:
    found = await session.client.text_document_hover_async(
        types.HoverParams(text_document=doc, position=types.Position(line=line, character=2))
    )
    assert found is not None and isinstance(found.contents, types.MarkupContent)
    return found.contents.value


async def test_one_line_of_5000_citations_is_answered_partially_and_says_so(
    session: Session,
) -> None:
    doc = open_text(session, "generated.md", LONG_LINE + "\n")
    found = await links(session, doc)
    targets = {link.target for link in found}
    assert (session.root / "docs" / "install.md").as_uri() + "#L1" in targets
    assert (session.root / "guide.md").as_uri() + "#L9" in targets

    async def said() -> list[str]:
        return [m.message for m in session.client.messages if "generated.md" in m.message]

    (message,) = await wait_until_async(said)
    assert f"more than {citations.MAX_LINK_CITATIONS:,} distinct citations" in message
    assert "Installation" in await hover(session, doc)


async def test_a_10_mb_document_answers(session: Session) -> None:
    line = "docs/install.md#0 and guide.md#1, " * 10 + "plain words " * 40 + "\n"
    text = line * (10_000_000 // len(line))
    doc = open_text(session, "huge.md", text)
    found = await links(session, doc)
    assert len(found) == citations.MAX_LINKS
    assert "Installation" in await hover(session, doc, line=text.count("\n") - 1)


async def test_documents_never_opened_are_read_only_inside_the_project(
    session: Session, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("docs/install.md#0\n")
    inside = session.root / "closed.md"
    inside.write_text("docs/install.md#0\n")
    link = session.root / "link-out.md"
    link.symlink_to(outside)
    fifo = session.root / "fifo.md"
    os.mkfifo(fifo)
    for path in (outside, link, fifo, Path("/proc/self/environ")):
        doc = types.TextDocumentIdentifier(uri=path.as_uri())
        assert await links(session, doc) == [], path
    closed = types.TextDocumentIdentifier(uri=inside.as_uri())
    assert [link.target for link in await links(session, closed)] == [
        (session.root / "docs" / "install.md").as_uri() + "#L1"
    ]
