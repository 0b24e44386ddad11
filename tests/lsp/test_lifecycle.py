"""Settings from the client, reindex, workspace symbols, and a clean shutdown."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.support.big_corpus import make_corpus
from tests.support.processes import processes_with
from tests.support.waiting import wait_until_async

from .conftest import (
    command,
    copy_fixture,
    ended_runs,
    lsp_session,
    search,
    server_env,
    wait_idle,
    wait_indexed,
)


async def test_configuration_paths_and_top_k(tmp_path: Path) -> None:
    root = copy_fixture("basic", tmp_path / "basic")
    configuration = {"paths": ["docs"], "topK": 1}
    async with lsp_session([root], tmp_path, "vscode", configuration=configuration) as client:
        status = await wait_indexed(client)
        assert status["roots"][0]["documents"] == 1
        assert (await search(client, "zeppelin"))["results"] == []
        result = await search(client, "upgrading install")
        assert [r["citation"] for r in result["results"]] == ["docs/install.md#0"]


@pytest.mark.parametrize("editor", ["neovim", "vscode"])
async def test_workspace_symbols(tmp_path: Path, editor: str) -> None:
    root = copy_fixture("basic", tmp_path / "basic")
    async with lsp_session([root], tmp_path, editor) as client:
        await wait_indexed(client)
        symbols = await client.workspace_symbol_async(
            types.WorkspaceSymbolParams(query="lighthouse")
        )
        assert symbols is not None
        first = symbols[0]
        assert isinstance(first, types.SymbolInformation)
        assert first.name == "Troubleshooting"
        assert first.container_name == "guide.md#2"
        start = first.location.range.start  # on the matched word, as the search selects
        assert (start.line, start.character) == (18, 53)
        assert await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="")) is None


async def test_workspace_symbols_off_by_initialization_option(tmp_path: Path) -> None:
    root = copy_fixture("basic", tmp_path / "basic")
    config = ClientServerConfig(
        server_command=[sys.executable, "-m", "fisk_ls.lsp"], server_env=server_env(tmp_path)
    )
    client = await config.start()
    assert isinstance(client, LanguageClient)
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=root.as_uri(),
            initialization_options={"workspaceSymbols": False},
        )
    )
    assert not result.capabilities.workspace_symbol_provider
    commands = result.capabilities.execute_command_provider
    assert commands is not None
    assert sorted(commands.commands) == [
        "fisk.knowledge.reindex",
        "fisk.knowledge.search",
        "fisk.knowledge.show",
        "fisk.knowledge.status",
    ]
    await client.shutdown_session()
    await client.stop()  # type: ignore[no-untyped-call]


async def test_reindex_joins_and_shutdown_leaves_nothing_behind(tmp_path: Path) -> None:
    root = make_corpus(tmp_path / "big", files=1200)
    marker = server_env(tmp_path)["FISK_AI_STORE_DIR"]
    async with lsp_session([root], tmp_path, "vscode") as client:
        await wait_indexed(client)
        first, second = await asyncio.gather(
            command(client, "fisk.knowledge.reindex", {"rebuild": True}),
            command(client, "fisk.knowledge.reindex", {}),
        )
        assert first == second
        assert first["files"] == 1200 and first["added"] == 1200
        assert set(first) == {"files", "added", "updated", "skipped", "removed", "chunks"}

        async def both_ended() -> bool:  # the end of a run's progress may trail its result
            return ended_runs(client) == 2

        await wait_until_async(both_ended)

        pending = asyncio.ensure_future(
            command(client, "fisk.knowledge.reindex", {"rebuild": True})
        )

        async def running() -> bool:
            return bool((await command(client, "fisk.knowledge.status"))["indexing"])

        await wait_until_async(running)
        assert len(processes_with(marker)) >= 1
    assert client._server is not None and client._server.returncode == 0
    with pytest.raises(BaseException):  # noqa: B017 - cancelled by the shutdown, not awaited
        await pending

    async def gone() -> bool:
        return not processes_with(marker)

    await wait_until_async(gone)


async def test_configuration_change_reopens_the_folder(tmp_path: Path) -> None:
    root = copy_fixture("basic", tmp_path / "basic")
    async with lsp_session([root], tmp_path, "neovim", configuration={}) as client:
        assert (await wait_indexed(client))["roots"][0]["documents"] == 4
        client.set_configuration({"fisk": {"paths": ["docs"]}})
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))

        async def narrowed() -> bool:
            status = await command(client, "fisk.knowledge.status")
            roots = status["roots"]  # empty for a moment while the folder is reopened
            return bool(roots) and not status["indexing"] and roots[0]["documents"] == 1

        await wait_until_async(narrowed)
        assert (await search(client, "zeppelin"))["results"] == []


async def test_workspace_folders_added_and_removed(tmp_path: Path) -> None:
    first = copy_fixture("basic", tmp_path / "basic")
    second = copy_fixture("other", tmp_path / "other")
    async with lsp_session([first], tmp_path, "vscode") as client:
        await wait_indexed(client)
        added = types.WorkspaceFolder(uri=second.as_uri(), name="other")
        client.workspace_did_change_workspace_folders(
            types.DidChangeWorkspaceFoldersParams(
                event=types.WorkspaceFoldersChangeEvent(added=[added], removed=[])
            )
        )

        async def narwhal() -> bool:
            return [r["citation"] for r in (await search(client, "narwhal"))["results"]] == [
                "handbook.md#0"
            ]

        await wait_until_async(narwhal)
        removed = types.WorkspaceFolder(uri=first.as_uri(), name="basic")
        client.workspace_did_change_workspace_folders(
            types.DidChangeWorkspaceFoldersParams(
                event=types.WorkspaceFoldersChangeEvent(added=[], removed=[removed])
            )
        )

        async def one_root() -> bool:
            status = await command(client, "fisk.knowledge.status")
            return [Path(r["root"]).name for r in status["roots"]] == ["other"]

        await wait_until_async(one_root)
        assert (await search(client, "zeppelin"))["results"] == []


async def test_a_bare_client_gets_no_progress_and_no_registration(tmp_path: Path) -> None:
    root = copy_fixture("basic", tmp_path / "basic")
    bare = types.ClientCapabilities()
    async with lsp_session([root], tmp_path, capabilities=bare) as client:
        status = await wait_idle(client)
        assert status["roots"][0]["documents"] == 4
        assert client.progress_reports == {}
        assert client.registrations == []
        assert [r["citation"] for r in (await search(client, "zeppelin"))["results"]] == [
            "guide.md#1"
        ]
