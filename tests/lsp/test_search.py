"""Initialize, index in the background with progress, search and show."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.support.repeated import PAGES, QUERY, option_lines, write_repeated

from .conftest import citations, command, copy_fixture, lines_of, lsp_session, search, wait_indexed

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=["neovim", "vscode"])
async def client(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[LanguageClient]:
    base = tmp_path_factory.mktemp("search")
    root = copy_fixture("basic", base / "basic")
    async with lsp_session([root], base, request.param) as client:
        await wait_indexed(client)
        yield client


async def test_progress_begins_reports_and_ends(client: LanguageClient) -> None:
    (reports,) = [r for r in client.progress_reports.values() if r]
    assert isinstance(reports[0], types.WorkDoneProgressBegin)
    assert reports[0].title == "Indexing docs"
    assert any(
        isinstance(r, types.WorkDoneProgressReport) and r.message == "4/4 files" for r in reports
    )
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)


async def test_search_returns_location_links_to_the_cited_lines(client: LanguageClient) -> None:
    result = await search(client, "zeppelin airship")
    assert result["status"] == "ok"
    assert result["tier"].startswith("lexical")
    assert result["degraded"] is False and result["reason"] is None
    top = result["results"][0]
    assert top["citation"] == "guide.md#1"
    assert top["section"] == "Guide > Configuring the harness"
    assert "zeppelin" in top["snippet"]
    assert 0 <= top["score"] <= 1
    loc = top["location"]
    assert loc["targetUri"].endswith("/basic/guide.md")
    text = lines_of(loc)
    assert text.startswith("## Configuring the harness")
    assert "zeppelin option" in text
    sel = loc["targetSelectionRange"]  # the paragraph that matched, inside the chunk
    assert (sel["start"]["line"], sel["end"]["line"]) == (10, 15)
    assert loc["targetRange"]["start"]["line"] <= 10 and loc["targetRange"]["end"]["line"] >= 15
    words = {top["snippet"][a:b].casefold() for a, b in top["highlights"]}
    assert words == {"zeppelin", "airship"}


async def test_search_top_k_and_no_terms(client: LanguageClient) -> None:
    assert len((await search(client, "the", topK=1))["results"]) <= 1
    assert (await search(client, "   "))["status"] == "no_terms"


async def test_show_returns_the_chunk(client: LanguageClient) -> None:
    shown = await command(client, "fisk.knowledge.show", {"citation": "docs/install.md#0"})
    assert shown["citation"] == "docs/install.md#0"
    assert "marmalade" in shown["content"]
    assert shown["stale"] is False
    assert "marmalade" in lines_of(shown["location"])


async def test_status(client: LanguageClient) -> None:
    status = await command(client, "fisk.knowledge.status")
    assert status["indexing"] is False
    (root,) = status["roots"]
    assert root["root"].endswith("/basic")
    assert root["documents"] == 4
    assert root["chunks"] >= 4
    assert Path(root["store"]).is_dir()


async def test_text_files_are_searchable(client: LanguageClient) -> None:
    assert citations(await search(client, "quokka")) == ["notes.txt#0"]


async def test_a_hit_selects_the_paragraph_that_matched(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The matching words are in the 4th paragraph of a long section: the LocationLink's
    selection is that paragraph, not the chunk's first line."""
    base = tmp_path_factory.mktemp("para")
    root = base / "proj"
    root.mkdir()
    paragraphs = [
        "The service keeps a small amount of state in memory and on disk.",
        "Operators normally never need to touch it during daily work.",
        "Logs rotate every night and are kept for two weeks by default.",
        "To drain a node before a restart, cordon it and wait for the queue to empty.",
        "Afterwards the node rejoins the cluster on its own.",
    ]
    (root / "ops.md").write_text("# Operations\n\n## Restarts\n\n" + "\n\n".join(paragraphs) + "\n")
    async with lsp_session([root], base) as client:
        await wait_indexed(client)
        top = (await search(client, "drain a node before a restart"))["results"][0]
    sel = top["location"]["targetSelectionRange"]
    assert (sel["start"]["line"], sel["end"]["line"]) == (10, 11)  # 0-based line 10 = line 11
    assert top["section"] == "Operations > Restarts"
    assert top["snippet"].startswith("To drain a node")


async def test_near_duplicate_copies_are_one_result_with_their_locations_in_copies(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Versioned copies of a page are one result; ``copies`` lists the other copies, each with a
    LocationLink to its chunk selecting the matched lines at the same place."""
    base = tmp_path_factory.mktemp("copies")
    root = base / "proj"
    page = (
        "# Widgets\n\n## Restarts\n\n"
        "The service keeps a small amount of state.\n\n"
        "Operators rarely touch it.\n\n"
        "Logs rotate every night.\n\n"
        "To drain a frobnicator, cordon it and wait for the queue to empty.\n"
    )
    for version in ("v1", "v2", "v3"):
        (root / version).mkdir(parents=True)
        link = f"[docs](https://example.invalid/{version}/widgets)"  # differs per copy
        (root / version / "widgets.md").write_text(page + f"\nSee {link}.\n")
    (root / "other.md").write_text("# Other\n\nA frobnicator is drained before upgrades.\n")
    async with lsp_session([root], base) as client:
        await wait_indexed(client)
        found = (await search(client, "drain frobnicator"))["results"]
    copies = [r for r in found if "/widgets.md#" in r["citation"]]
    assert len(copies) == 1, "the three copies are one result"
    (top,) = copies
    copies = top["copies"]
    where = {top["citation"], *(a["citation"] for a in copies)}
    assert where == {f"{v}/widgets.md#0" for v in ("v1", "v2", "v3")}
    selected = top["location"]["targetSelectionRange"]
    assert (selected["start"]["line"], selected["end"]["line"]) == (10, 11)
    for other in copies:
        link = other["location"]
        assert link["targetUri"] == (root / other["citation"].split("#")[0]).resolve().as_uri()
        assert link["targetRange"] == top["location"]["targetRange"]  # same layout
        assert link["targetSelectionRange"] == selected
        assert "drain a frobnicator" in lines_of(link, "targetSelectionRange")
    assert next(r for r in found if r["citation"] == "other.md#0")["copies"] == []


async def test_a_repeated_paragraph_is_one_result_with_its_other_places_in_copies(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """A paragraph in three documents whose chunks differ around it is one result; each place
    under ``copies`` links to its own chunk, selecting the paragraph there."""
    base = tmp_path_factory.mktemp("fold")
    root = write_repeated(base / "proj")
    async with lsp_session([root], base) as client:
        await wait_indexed(client)
        found = (await search(client, QUERY))["results"]
    option = [r for r in found if r["citation"].split("#")[0] in PAGES]
    assert len(option) == 1, [r["citation"] for r in found]
    (top,) = option
    copies = top["copies"]
    assert {top["citation"], *(a["citation"] for a in copies)} == {f"{p}#0" for p in PAGES}
    assert len(copies) == 2
    for other in [top, *copies]:
        link = other["location"]
        path = other["citation"].split("#")[0]
        assert link["targetUri"] == (root / path).resolve().as_uri()
        first, last = option_lines(root, path)
        sel = link["targetSelectionRange"]
        assert (sel["start"]["line"], sel["end"]["line"]) == (first - 1, last)
        assert "keeps a copy of every tarball" in lines_of(link)


LINE = "Straße 😀 — the lighthouse keeper logs the zeppelin."
"""The matched word "lighthouse" follows ß (2 UTF-8 bytes), 😀 (4 bytes, 2 UTF-16 units) and
an em dash (3 bytes): its column is 15 code points, 16 UTF-16 units, 21 bytes."""


@pytest.mark.parametrize(
    ("offered", "column"),
    [
        pytest.param(None, 16, id="default-utf-16"),
        pytest.param(["utf-16"], 16, id="utf-16"),
        pytest.param(["utf-8", "utf-16"], 21, id="utf-8"),
        pytest.param(["utf-32"], 15, id="utf-32"),
    ],
)
async def test_a_hit_lands_on_the_first_matched_word_in_the_negotiated_encoding(
    tmp_path: Path, offered: list[str] | None, column: int
) -> None:
    """The selection of a search hit (and of its copies, and a workspace symbol's location)
    starts at the first matched word, counted in the position encoding the client and server
    agreed on at initialize, not at column 0."""
    root = tmp_path / "proj"
    for copy in ("v1", "v2"):
        (root / copy).mkdir(parents=True)
        (root / copy / "ops.md").write_text(
            "# Ops\n\nNothing to see in this first paragraph.\n\n" + LINE + "\n", encoding="utf-8"
        )
    general = types.GeneralClientCapabilities(position_encodings=offered) if offered else None
    capabilities = types.ClientCapabilities(
        general=general,
        workspace=types.WorkspaceClientCapabilities(
            symbol=types.WorkspaceSymbolClientCapabilities()
        ),
        window=types.WindowClientCapabilities(work_done_progress=True),
    )
    async with lsp_session([root], tmp_path, capabilities=capabilities) as client:
        await wait_indexed(client)
        (top,) = (await search(client, "lighthouse keeper"))["results"]
        symbols = await client.workspace_symbol_async(
            types.WorkspaceSymbolParams(query="lighthouse")
        )
    start = {"line": 4, "character": column}
    assert top["location"]["targetSelectionRange"]["start"] == start
    assert top["location"]["targetRange"]["start"] == {"line": 0, "character": 0}
    (copy,) = top["copies"]
    assert copy["location"]["targetSelectionRange"]["start"] == start
    assert symbols is not None
    locations = [s.location for s in symbols if isinstance(s.location, types.Location)]
    assert len(locations) == len(symbols)  # each with its range
    assert {(loc.range.start.line, loc.range.start.character) for loc in locations} == {(4, column)}
