"""``fisk.knowledge.search`` with ``expand``: a chat server's strings (provider openai) or the
client's own model (provider editor, the ``fisk/expand`` request), fused like ``also``; the
cache, the gate, and failures that keep the plain results."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.support.agent_strings import ALSO, QUESTION, write_site
from tests.support.fake_chat_server import FakeChatServer, question_of

from .conftest import Client, lsp_session, search, wait_indexed

pytestmark = pytest.mark.asyncio(loop_scope="function")


@pytest.fixture
def chat() -> Iterator[tuple[FakeChatServer, str]]:
    server = FakeChatServer({QUESTION: ALSO})
    url = server.start()
    yield server, url
    server.stop()


def first(result: dict[str, Any]) -> str:
    return str(result["results"][0]["citation"])


async def test_expand_with_a_chat_server(tmp_path: Path, chat: tuple[FakeChatServer, str]) -> None:
    server, url = chat
    root = write_site(tmp_path / "site").resolve()
    options = {"expansion": {"provider": "openai", "baseUrl": url, "model": "fake-chat"}}
    async with lsp_session([root], tmp_path, "vscode", init_options=options) as client:
        await wait_indexed(client)
        plain = await search(client, QUESTION, topK=1)
        expanded = await search(client, QUESTION, topK=1, expand=True)
        again = await search(client, QUESTION, topK=1, expand=True)
        with pytest.raises(JsonRpcException) as caught:
            await search(client, QUESTION, expand="yes")
        assert caught.value.code == types.ErrorCodes.InvalidParams
        server.set_mode("status", status=503)
        failing = await search(client, "how do I keep only some of the traces", expand=True)
    assert (plain["expansion"], plain["expansionStrings"]) == ("off", [])
    assert first(plain).startswith("docs/display.md#")
    assert expanded["expansion"] == "used" and expanded["expansionStrings"] == ALSO
    assert first(expanded).startswith("docs/naming.md#")
    assert "also[0]" in expanded["results"][0]["foundBy"]
    assert again["expansion"] == "cached" and first(again) == first(expanded)
    assert failing["expansion"].startswith("failed: the chat server at 127.0.0.1:")
    assert "HTTP 503" in failing["expansion"] and failing["results"]
    assert server.calls == 2  # the question once, the failing one once


async def test_expand_with_the_editors_model(tmp_path: Path) -> None:
    root = write_site(tmp_path / "site").resolve()
    asked: list[str] = []
    options = {"expansion": {"provider": "editor", "timeout": 30}}
    async with lsp_session([root], tmp_path, "vscode", init_options=options) as client:
        assert isinstance(client, Client)

        @client.feature("fisk/expand")  # type: ignore[untyped-decorator]
        def expand(ls: Client, params: Any) -> dict[str, str]:
            question = params.question if hasattr(params, "question") else params["question"]
            prompt = params.prompt if hasattr(params, "prompt") else params["prompt"]
            asked.append(question)
            if "refuse" in question:
                raise RuntimeError("the user did not allow the language model")
            assert question_of(prompt) == question
            labels = ("keywords", "answer", "rephrasing")
            return {"text": "```json\n" + json.dumps(dict(zip(labels, ALSO, strict=True)))}

        await wait_indexed(client)
        expanded = await search(client, QUESTION, topK=1, expand=True)
        refused = await search(client, "please refuse this question", expand=True)
    assert expanded["expansion"] == "used" and first(expanded).startswith("docs/naming.md#")
    assert asked == [QUESTION, "please refuse this question"]
    assert refused["expansion"].startswith("failed: the editor's model:")
    assert "did not allow" in refused["expansion"]


async def test_expand_without_an_expander_is_off(tmp_path: Path) -> None:
    root = write_site(tmp_path / "site").resolve()
    async with lsp_session([root], tmp_path, "neovim") as client:
        await wait_indexed(client)
        result = await search(client, QUESTION, topK=1, expand=True)
    assert result["expansion"] == "off" and first(result).startswith("docs/display.md#")


async def test_bad_expansion_settings_are_named(tmp_path: Path) -> None:
    root = write_site(tmp_path / "site").resolve()
    options = {"expansion": {"provider": "openai", "model": "m"}}
    async with lsp_session([root], tmp_path, "vscode", init_options=options) as client:
        await wait_indexed(client)
        result = await search(client, QUESTION, topK=1, expand=True)
        messages = [m.message for m in client.messages]
    assert result["expansion"] == "off"
    assert any("fisk.expansion" in m and "baseUrl" in m for m in messages), messages
