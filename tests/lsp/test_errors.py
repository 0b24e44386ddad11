"""Bad parameters are JSON-RPC errors with clear messages; bad settings and stores never stop
the server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from fisk_ls.knowledge.location import zero_config_store
from tests.support.waiting import wait_until_async

from .conftest import (
    Session,
    command,
    copy_fixture,
    lsp_session,
    search,
    wait_indexed,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def session(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Session]:
    base = tmp_path_factory.mktemp("errors")
    root = copy_fixture("basic", base / "basic")
    async with lsp_session([root], base, "vscode") as client:
        await wait_indexed(client)
        yield Session(client, root, base)


BAD = [
    pytest.param("fisk.knowledge.search", None, "query: expected a string", id="search-no-args"),
    pytest.param("fisk.knowledge.search", {"query": 3}, "query: expected a string", id="query-int"),
    pytest.param(
        "fisk.knowledge.search",
        {"query": "x", "topK": 0},
        "topK: expected an integer from 1 to 20",
        id="topk-0",
    ),
    pytest.param(
        "fisk.knowledge.search",
        {"query": "x", "topK": "5"},
        "topK: expected an integer from 1 to 20",
        id="topk-str",
    ),
    pytest.param(
        "fisk.knowledge.search",
        {"query": "x", "topK": True},
        "topK: expected an integer from 1 to 20",
        id="topk-bool",
    ),
    pytest.param(
        "fisk.knowledge.search", {"query": "x", "top_k": 3}, "unknown argument", id="typo"
    ),
    pytest.param("fisk.knowledge.search", "just a string", "one object argument", id="not-object"),
    pytest.param("fisk.knowledge.show", {}, "citation is required", id="show-empty"),
    pytest.param(
        "fisk.knowledge.show", {"citation": "guide.md"}, "malformed citation", id="show-bad"
    ),
    pytest.param("fisk.knowledge.show", {"citation": "../x.md#1"}, "outside", id="show-outside"),
    pytest.param(
        "fisk.knowledge.show", {"citation": "guide.md#99"}, "no chunk matches", id="unknown"
    ),
    pytest.param("fisk.knowledge.reindex", {"rebuild": "yes"}, "rebuild must", id="rebuild-str"),
    pytest.param("fisk.knowledge.status", {"verbose": True}, "unknown argument", id="status-arg"),
]


@pytest.mark.parametrize(("name", "args", "message"), BAD)
async def test_bad_arguments_are_invalid_params(
    session: Session, name: str, args: Any, message: str
) -> None:
    with pytest.raises(JsonRpcInvalidParams, match=message):
        await command(session.client, name, args)


async def test_two_arguments_are_rejected(session: Session) -> None:
    params = types.ExecuteCommandParams(
        command="fisk.knowledge.search", arguments=[{"query": "a"}, {"query": "b"}]
    )
    with pytest.raises(JsonRpcInvalidParams, match="one object argument"):
        await session.client.workspace_execute_command_async(params)


async def test_unknown_command(session: Session) -> None:
    with pytest.raises(JsonRpcInvalidParams, match=r"'fisk\.knowledge\.nope' is not defined"):
        await command(session.client, "fisk.knowledge.nope", {})


async def test_server_still_answers_after_errors(session: Session) -> None:
    assert (await search(session.client, "zeppelin"))["status"] == "ok"


async def test_bad_settings_one_message_naming_the_fields(tmp_path: Path) -> None:
    root = copy_fixture("basic", tmp_path / "basic")
    options = {"topK": "ten", "watch": "yes", "embeddings": {"model": "m"}, "future": 1}
    async with lsp_session([root], tmp_path, "neovim", init_options=options) as client:
        await wait_indexed(client)
        warnings = [m for m in client.messages if m.type == types.MessageType.Warning]
        assert len(warnings) == 1
        for name in ("fisk.topK", "fisk.watch", "fisk.embeddings"):
            assert name in warnings[0].message
        result = await search(client, "zeppelin")
        assert result["tier"].startswith("lexical")
        assert result["status"] == "ok"


async def test_broken_store_one_message_and_server_stays_up(tmp_path: Path) -> None:
    root = copy_fixture("basic", tmp_path / "basic")
    store = zero_config_store(root, tmp_path / "stores")
    store.parent.mkdir(parents=True)
    store.write_text("not a directory")
    async with lsp_session([root], tmp_path, "neovim") as client:

        async def shown() -> list[types.ShowMessageParams]:
            return [m for m in client.messages if m.type == types.MessageType.Error]

        errors = await wait_until_async(shown)
        assert str(root) in errors[0].message
        with pytest.raises(JsonRpcException, match="not a directory") as failed:
            await command(client, "fisk.knowledge.reindex", {})
        assert failed.value.code == types.LSPErrorCodes.RequestFailed.value
        status = await command(client, "fisk.knowledge.status")
        assert status["roots"][0]["documents"] == 0
        assert "not a directory" in status["roots"][0]["error"].lower()
        assert len([m for m in client.messages if m.type == types.MessageType.Error]) == 1


async def test_broken_agent_yaml(tmp_path: Path) -> None:
    root = copy_fixture("basic", tmp_path / "basic")
    (root / "agent.yaml").write_text("harness:\n  knowledge:\n    enabled: maybe\n")
    async with lsp_session([root], tmp_path, "neovim") as client:

        async def shown() -> list[types.ShowMessageParams]:
            return [m for m in client.messages if m.type == types.MessageType.Error]

        (error,) = await wait_until_async(shown)
        assert "enabled" in error.message
        assert (await search(client, "zeppelin"))["status"] == "index_not_built"
