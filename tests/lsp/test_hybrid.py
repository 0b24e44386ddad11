"""Embeddings settings from the client reach the core: hybrid tier, then degraded search."""

from __future__ import annotations

from pathlib import Path

from tests.support.fake_embed_server import FakeEmbedServer
from tests.support.waiting import wait_until_async

from .conftest import copy_fixture, lsp_session, search, wait_embedded, wait_indexed


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

    root = copy_fixture("basic", tmp_path / "basic")
    options = {"embeddings": {"baseUrl": fake_embed.base_url, "model": "fake-embed"}}
    async with lsp_session([root], tmp_path, "neovim", init_options=options) as client:
        await wait_indexed(client)
        status = await wait_embedded(client)
        assert "chunks embedded" not in status["tier"]  # complete: the plain hybrid line
        titles = [
            r.title  # type: ignore[attr-defined]  # pytest-lsp keeps each report's value
            for reports in client.progress_reports.values()
            for r in reports
            if isinstance(r, types.WorkDoneProgressBegin)
        ]
        assert "Embedding docs" in titles and "Indexing docs" in titles
        result = await search(client, "zeppelin airship")
        assert result["results"][0]["citation"] == "guide.md#1"


async def test_turning_embeddings_on_at_run_time_adds_vectors_in_place(
    tmp_path: Path, fake_embed: FakeEmbedServer
) -> None:
    """`fisk.embeddings.provider` set while the server runs on a lexical index: search keeps
    answering (lexically, saying how many chunks have vectors) and the vectors fill in place,
    with no reindex and no error."""
    from lsprotocol import types

    root = copy_fixture("basic", tmp_path / "basic")
    async with lsp_session([root], tmp_path, "neovim", configuration={}) as client:
        assert (await wait_indexed(client))["tier"].startswith("lexical")
        embeddings = {"provider": "openai", "baseUrl": fake_embed.base_url, "model": "fake-embed"}
        client.set_configuration({"fisk": {"embeddings": embeddings}})
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        status = await wait_embedded(client)
        assert status["tier"].startswith("hybrid")
        result = await search(client, "zeppelin airship")
        assert result["status"] == "ok" and not result["degraded"]
        assert result["results"][0]["citation"] == "guide.md#1"
        assert not [m for m in client.messages if m.type == types.MessageType.Error]


async def test_a_missing_runtime_is_one_message(tmp_path: Path) -> None:
    """The built-in provider without onnxruntime: one short message naming the extra (no
    traceback), the folder indexed and searchable lexically."""
    from lsprotocol import types

    root = copy_fixture("basic", tmp_path / "basic")
    blocker = tmp_path / "no-onnxruntime" / "onnxruntime"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text(
        "raise ImportError(\"No module named 'onnxruntime'\", name='onnxruntime')\n"
    )
    import os

    env = {"PYTHONPATH": os.pathsep.join([str(blocker.parent), os.environ.get("PYTHONPATH", "")])}
    model = tmp_path / "model"
    model.mkdir()
    (model / "model.onnx").write_bytes(b"x")
    (model / "tokenizer.json").write_text("{}")
    options = {"embeddings": {"provider": "builtin", "modelPath": str(model)}}
    async with lsp_session([root], tmp_path, "neovim", init_options=options, env=env) as client:
        await wait_indexed(client)

        async def told() -> list[types.ShowMessageParams]:
            return [m for m in client.messages if "onnxruntime" in m.message]

        messages = await wait_until_async(told)
        result = await search(client, "zeppelin airship")
        assert result["results"][0]["citation"] == "guide.md#1"
        assert len(messages) == 1 and "embed extra" in messages[0].message
        assert "Traceback" not in messages[0].message and "\n" not in messages[0].message
