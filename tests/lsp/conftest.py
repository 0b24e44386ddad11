"""pytest-lsp helpers: a real ``fisk-ls`` process on a temporary workspace.

Each session gets its own store directory (``FISK_AI_STORE_DIR``) and cache directory, so tests
never touch the user's cache. Waiting polls for what the test needs (tests/support/waiting.py),
never sleeps a fixed time.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import register_lsp_features

from tests.support.waiting import wait_until_async

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lsp"
EDITORS = {"neovim": "neovim", "vscode": "visual-studio-code", "emacs": "emacs"}


# The modules here that test the server's parts in this process; the others start a real
# server, so their tests are slow (left out of the fast subset, tests/README.md).
IN_PROCESS = {
    "test_hover_images.py",
    "test_options.py",
    "test_protocol.py",
    "test_results.py",
    "test_tokens.py",
}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """LSP specification warnings (results the client's capabilities forbid) fail the test."""
    here = Path(__file__).parent
    for item in items:
        if here in item.path.parents:
            item.add_marker(pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"))
            if item.path.name not in IN_PROCESS:
                item.add_marker(pytest.mark.slow)


@dataclass
class Session:
    client: LanguageClient
    root: Path
    base: Path


class Client(LanguageClient):
    """pytest-lsp's client, also answering ``client/registerCapability`` (and recording it)."""

    def __init__(self) -> None:
        super().__init__(converter_factory=default_converter)
        self.registrations: list[types.Registration] = []


def make_client() -> Client:
    client = Client()
    register_lsp_features(client)

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)  # type: ignore[untyped-decorator]
    def register_capability(client: Client, params: types.RegistrationParams) -> None:
        client.registrations.extend(params.registrations)

    return client


def copy_fixture(name: str, dest: Path) -> Path:
    shutil.copytree(FIXTURES / name, dest)
    return dest.resolve()


def server_env(base: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FISK_AI_")}
    env["FISK_AI_STORE_DIR"] = str(base / "stores")
    env["XDG_CACHE_HOME"] = str(base / "cache")
    return env


@contextlib.asynccontextmanager
async def lsp_session(
    folders: list[Path],
    base: Path,
    editor: str = "neovim",
    *,
    init_options: Any = None,
    configuration: dict[str, Any] | None = None,
    capabilities: types.ClientCapabilities | None = None,
    locale: str | None = None,
    env: dict[str, str] | None = None,
) -> AsyncIterator[Client]:
    """Start fisk-ls, initialize it on ``folders`` and shut it down cleanly afterwards.
    ``locale`` is the client's display language; ``env`` replaces the server's environment
    variables it names."""
    config = ClientServerConfig(
        server_command=[sys.executable, "-m", "fisk_ls.lsp"],
        server_env={**server_env(base), **(env or {})},
        client_factory=make_client,
    )
    client = await config.start()
    assert isinstance(client, Client)
    if configuration is not None:
        client.set_configuration({"fisk": configuration})
    await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities or client_capabilities(EDITORS[editor]),
            root_uri=folders[0].as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in folders],
            initialization_options=init_options,
            locale=locale,
        )
    )
    try:
        yield client
    finally:
        await client.shutdown_session()
        await client.stop()  # type: ignore[no-untyped-call]


def ended_runs(client: LanguageClient) -> int:
    return sum(
        1
        for reports in client.progress_reports.values()
        if any(isinstance(r, types.WorkDoneProgressEnd) for r in reports)
    )


async def wait_indexed(client: LanguageClient, runs: int = 1) -> dict[str, Any]:
    """Wait for ``runs`` index runs to send their progress end, then for the queues to drain;
    returns the final ``fisk.knowledge.status``."""

    async def ended() -> bool:
        return ended_runs(client) >= runs

    await wait_until_async(ended)
    return await wait_idle(client)


async def wait_idle(client: LanguageClient) -> dict[str, Any]:
    async def idle() -> dict[str, Any] | None:
        status = await command(client, "fisk.knowledge.status")
        return None if status["indexing"] else status

    return await wait_until_async(idle)


async def wait_embedded(client: LanguageClient) -> dict[str, Any]:
    """The ``fisk.knowledge.status`` once the first root's chunks all have vectors and nothing
    is embedding."""

    async def embedded() -> dict[str, Any] | None:
        status = await command(client, "fisk.knowledge.status")
        roots = status["roots"]
        vectors = roots[0]["vectors"] if roots else None
        done = vectors and vectors["embedded"] == vectors["chunks"] == roots[0]["chunks"]
        return status if done and not roots[0]["embedding"] else None

    return await wait_until_async(embedded)


async def command(client: LanguageClient, name: str, args: Any = None) -> Any:
    params = types.ExecuteCommandParams(command=name, arguments=None if args is None else [args])
    return await client.workspace_execute_command_async(params)


async def search(client: LanguageClient, query: str, **extra: Any) -> dict[str, Any]:
    result: dict[str, Any] = await command(
        client, "fisk.knowledge.search", {"query": query, **extra}
    )
    return result


def citations(result: dict[str, Any]) -> list[str]:
    return [r["citation"] for r in result["results"]]


def save(client: LanguageClient, path: Path) -> None:
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=path.as_uri())
        )
    )


def watched(client: LanguageClient, *changes: tuple[Path, types.FileChangeType]) -> None:
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=p.as_uri(), type=t) for p, t in changes]
        )
    )


def lines_of(location: dict[str, Any], key: str = "targetRange") -> str:
    """The text of a LocationLink's targetRange (or ``key``), read from disk."""
    path = Path(location["targetUri"].removeprefix("file://"))
    rng = location[key]
    lines = path.read_text(encoding="utf-8").splitlines()
    return "\n".join(lines[rng["start"]["line"] : rng["end"]["line"]])
