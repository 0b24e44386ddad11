"""Embeddings settings from the client reach the core: hybrid tier, then degraded search."""

from __future__ import annotations

from pathlib import Path

from tests.support.fake_embed_server import FakeEmbedServer

from .conftest import copy_fixture, lsp_session, search, wait_indexed


async def test_hybrid_then_degraded(tmp_path: Path, fake_embed: FakeEmbedServer) -> None:
    root = copy_fixture("basic", tmp_path / "basic")
    options = {"embeddings": {"baseUrl": fake_embed.base_url, "model": "fake-embed"}}
    async with lsp_session([root], tmp_path, "neovim", init_options=options) as client:
        status = await wait_indexed(client)
        assert status["tier"].startswith("hybrid"), status
        assert "fake-embed" in status["tier"]
        result = await search(client, "zeppelin airship")
        assert result["status"] == "ok" and not result["degraded"]
        assert result["results"][0]["citation"] == "guide.md#1"
        fake_embed.set_mode("refuse")
        degraded = await search(client, "zeppelin airship")
        assert degraded["degraded"] is True and degraded["reason"]
        assert degraded["results"][0]["citation"] == "guide.md#1"


async def test_garbage_answers_degrade(tmp_path: Path, fake_embed: FakeEmbedServer) -> None:
    """An HTML page with status 200 (a proxy's login page) is not a server error: the search
    answers lexically, flagged degraded (issue 17)."""
    root = copy_fixture("basic", tmp_path / "basic")
    options = {"embeddings": {"baseUrl": fake_embed.base_url, "model": "fake-embed"}}
    async with lsp_session([root], tmp_path, "neovim", init_options=options) as client:
        await wait_indexed(client)
        fake_embed.set_mode("html")
        degraded = await search(client, "zeppelin airship")
        assert degraded["degraded"] is True and "JSON" in degraded["reason"]
        assert degraded["results"][0]["citation"] == "guide.md#1"


async def test_vectors_fill_in_behind_a_searchable_index(
    tmp_path: Path, fake_embed: FakeEmbedServer
) -> None:
    from lsprotocol import types

    from .conftest import command, poll

    root = copy_fixture("basic", tmp_path / "basic")
    options = {"embeddings": {"baseUrl": fake_embed.base_url, "model": "fake-embed"}}
    async with lsp_session([root], tmp_path, "neovim", init_options=options) as client:
        await wait_indexed(client)

        async def embedded() -> dict[str, object] | None:
            status = await command(client, "fisk.knowledge.status")
            entry = status["roots"][0]
            vectors = entry["vectors"]
            done = vectors and vectors["embedded"] == vectors["chunks"] == entry["chunks"]
            return status if done and not entry["embedding"] else None

        status = await poll(embedded, 30.0)
        assert "chunks embedded" not in status["tier"]  # complete: the plain hybrid line
        titles = [
            r.title
            for reports in client.progress_reports.values()
            for r in reports
            if isinstance(r, types.WorkDoneProgressBegin)
        ]
        assert "Embedding docs" in titles and "Indexing docs" in titles
        result = await search(client, "zeppelin airship")
        assert result["results"][0]["citation"] == "guide.md#1"
