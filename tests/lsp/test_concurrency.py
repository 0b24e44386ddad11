"""A large index runs in the background: requests are answered meanwhile, and other writers
share the lock."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from lsprotocol import types

from tests.support.big_corpus import FILES, make_corpus
from tests.support.waiting import wait_until_async

from .conftest import (
    citations,
    ended_runs,
    lsp_session,
    save,
    search,
    server_env,
    wait_idle,
    wait_indexed,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return make_corpus(tmp_path / "big")


async def test_searches_are_answered_while_a_large_index_runs(corpus: Path, tmp_path: Path) -> None:
    async with lsp_session([corpus], tmp_path, "neovim") as client:
        during = 0  # searches answered before the run's end was reported: none waited for it
        while ended_runs(client) == 0:
            result = await search(client, "lorem topic12")
            if ended_runs(client) == 0:
                during += 1
                assert result["status"] in ("ok", "index_not_built", "index_empty")
        assert during >= 3, "the index run ended before searches could overlap it"
        await wait_idle(client)
        assert citations(await search(client, "unique1234")) == ["d14/page1234.md#0"]


async def test_cli_index_in_another_process_shares_the_lock(corpus: Path, tmp_path: Path) -> None:
    cli = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "fisk_ls.cli", "knowledge", "index", "--wait",
        cwd=corpus, env=server_env(tmp_path),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    async with lsp_session([corpus], tmp_path, "vscode") as client:
        edited = corpus / "d0" / "page0.md"
        edited.write_text(edited.read_text() + "\nA heron appears while both writers run.\n")
        save(client, edited)
        _, err = await cli.communicate()
        assert cli.returncode == 0, err.decode()
        await wait_indexed(client)

        async def heron() -> bool:
            return bool(citations(await search(client, "heron")))

        await wait_until_async(heron)
        status = await wait_idle(client)
        assert status["roots"][0]["documents"] == FILES
        for message in client.messages:
            assert message.type != types.MessageType.Error, message.message
