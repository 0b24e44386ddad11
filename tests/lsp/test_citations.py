"""Citation tokens in an open document: documentLink, definition and hover (with the next
chunk's first lines); ``fisk.knowledge.show`` with ``context``."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from .conftest import Session, command, copy_fixture, lsp_session, wait_indexed

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=["neovim", "vscode"])
async def session(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Session]:
    base = tmp_path_factory.mktemp(f"cite-{request.param}")
    root = copy_fixture("basic", base / "basic")
    async with lsp_session([root], base, request.param) as client:
        await wait_indexed(client)
        doc = root / "links.md"
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=doc.as_uri(), language_id="markdown", version=1, text=doc.read_text()
                )
            )
        )
        yield Session(client, root, base)


def doc_id(session: Session) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=(session.root / "links.md").as_uri())


LINE = "See docs/install.md#0 for installing, and guide.md#1 for configuration."


async def test_document_links_for_known_citations_only(session: Session) -> None:
    links = await session.client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=doc_id(session))
    )
    assert links is not None
    spans = [
        (link.range.start.line, link.range.start.character, link.range.end.character)
        for link in links
    ]
    start = LINE.index("docs/install.md#0")
    second = LINE.index("guide.md#1")
    assert spans == [(2, start, start + 17), (2, second, second + 10)]
    assert links[0].target == (session.root / "docs" / "install.md").as_uri() + "#L1"
    assert links[1].target == (session.root / "guide.md").as_uri() + "#L9"


async def test_definition_is_a_location_link_to_the_cited_lines(session: Session) -> None:
    position = types.Position(line=2, character=LINE.index("guide.md#1") + 3)
    result = await session.client.text_document_definition_async(
        types.DefinitionParams(text_document=doc_id(session), position=position)
    )
    assert isinstance(result, list) and len(result) == 1
    link = result[0]
    assert isinstance(link, types.LocationLink)
    assert link.target_uri == (session.root / "guide.md").as_uri()
    assert (link.target_range.start.line, link.target_range.end.line) == (8, 15)
    assert link.target_selection_range.start.line == 8
    assert link.origin_selection_range is not None
    assert link.origin_selection_range.start.character == LINE.index("guide.md#1")


async def test_hover_shows_heading_path_and_first_lines(session: Session) -> None:
    position = types.Position(line=2, character=LINE.index("docs/install.md#0"))
    hover = await session.client.text_document_hover_async(
        types.HoverParams(text_document=doc_id(session), position=position)
    )
    assert hover is not None
    assert isinstance(hover.contents, types.MarkupContent)
    assert hover.contents.value.startswith("**Installation > Upgrading**")  # a merged chunk
    assert "marmalade" in hover.contents.value


async def _hover(session: Session, token: str) -> str:
    position = types.Position(line=2, character=LINE.index(token) + 1)
    hover = await session.client.text_document_hover_async(
        types.HoverParams(text_document=doc_id(session), position=position)
    )
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    return hover.contents.value


async def test_hover_also_shows_the_next_chunk_s_first_lines(session: Session) -> None:
    text = await _hover(session, "guide.md#1")
    cited, _, following = text.partition("Next:")
    assert "zeppelin" in cited and "Troubleshooting" not in cited
    assert "Guide > Troubleshooting" in following and "guide.md#2" in following
    assert "When the index looks stale" in following
    body = following.split("\n\n", 1)[1].rstrip()
    assert body.endswith("…") and len(body.removesuffix("…").strip().splitlines()) == 3  # bounded
    last = await _hover(session, "docs/install.md#0")  # the document's last chunk
    assert "marmalade" in last and "Next:" not in last


async def test_show_takes_context_and_returns_the_neighbours(session: Session) -> None:
    shown = await command(
        session.client, "fisk.knowledge.show", {"citation": "guide.md#1", "context": 1}
    )
    assert shown["citation"] == "guide.md#1" and "zeppelin" in shown["content"]
    assert [c["citation"] for c in shown["before"]] == ["guide.md#0"]
    assert [c["citation"] for c in shown["after"]] == ["guide.md#2"]
    assert shown["after"][0]["location"]["targetUri"] == (session.root / "guide.md").as_uri()
    assert shown["after"][0]["location"]["targetRange"]["start"]["line"] == 16
    last = await command(
        session.client, "fisk.knowledge.show", {"citation": "guide.md#2", "context": 5}
    )
    assert [c["citation"] for c in last["before"]] == ["guide.md#0", "guide.md#1"]
    assert last["after"] == []
    plain = await command(
        session.client, "fisk.knowledge.show", {"citation": "guide.md#1", "context": 0}
    )
    assert "before" not in plain and plain["citation"] == "guide.md#1"
    for bad in (6, -1, "1", True):
        with pytest.raises(JsonRpcInvalidParams, match="context: expected an integer from 0 to 5"):
            await command(
                session.client, "fisk.knowledge.show", {"citation": "guide.md#1", "context": bad}
            )


async def test_nothing_for_unknown_citation_or_plain_text(session: Session) -> None:
    for line, character in [(3, 26), (0, 2)]:
        position = types.Position(line=line, character=character)
        params = types.HoverParams(text_document=doc_id(session), position=position)
        assert await session.client.text_document_hover_async(params) is None
        definition = types.DefinitionParams(text_document=doc_id(session), position=position)
        assert await session.client.text_document_definition_async(definition) is None


async def test_document_link_reads_no_target_file(tmp_path_factory: pytest.TempPathFactory) -> None:
    """200 citations of an indexed file whose path is now a FIFO: reading the target would hang
    the request, so links must come from the index alone."""
    import asyncio
    import os

    base = tmp_path_factory.mktemp("cite-fifo")
    root = base / "proj"
    root.mkdir()
    target = root / "big.md"
    target.write_text("# Big\n\n" + "A paragraph of the big target. " * 30_000 + "\n")
    async with lsp_session([root], base, init_options={"watch": False}) as client:
        await wait_indexed(client)
        target.unlink()
        os.mkfifo(target)
        text = "\n".join(f"See big.md#0 (note {i})." for i in range(200)) + "\n"
        doc = root / "cites.md"
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=doc.as_uri(), language_id="markdown", version=1, text=text
                )
            )
        )
        links = await asyncio.wait_for(
            client.text_document_document_link_async(
                types.DocumentLinkParams(text_document=types.TextDocumentIdentifier(doc.as_uri()))
            ),
            timeout=30,
        )
        assert links is not None and len(links) == 200
        assert all(link.target and link.target.endswith("big.md#L1") for link in links)
        target.unlink()
