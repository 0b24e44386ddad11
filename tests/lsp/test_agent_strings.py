"""``fisk.knowledge.search`` with ``also``: fused extra strings, ``foundBy`` on each hit, the
limits as InvalidParams, and clients that send only ``query`` unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.support.agent_strings import ALSO, QUESTION, write_site

from .conftest import lsp_session, search, wait_indexed

pytestmark = pytest.mark.asyncio(loop_scope="function")


async def test_also_over_the_language_server(tmp_path: Path) -> None:
    root = write_site(tmp_path / "site").resolve()
    async with lsp_session([root], tmp_path, "vscode") as client:
        await wait_indexed(client)
        plain = await search(client, QUESTION, topK=1)
        helped = await search(client, QUESTION, topK=1, also=ALSO)
        for bad in (["x"] * 5, "x", ["x" * 2001]):
            with pytest.raises(JsonRpcException) as caught:
                await search(client, QUESTION, also=bad)
            assert caught.value.code == types.ErrorCodes.InvalidParams
            assert "also" in str(caught.value)
    assert plain["results"][0]["citation"].startswith("docs/display.md#")
    assert plain["results"][0]["foundBy"] == ["query"]
    first = helped["results"][0]
    assert first["citation"].startswith("docs/naming.md#") and "also[0]" in first["foundBy"]
