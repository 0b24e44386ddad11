"""A search the client cancels stops (its deadline is set: deadline.py) and is answered
RequestCancelled; status and other searches are answered while costly ones run. The core's tests
(tests/knowledge/test_deadline.py) show a cancelled search stopping mid-statement; here the wiring,
through the real server. Nothing here times anything: a reply that crosses the cancel (the
search finished first) is as good as RequestCancelled."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.support.big_corpus import make_corpus
from tests.support.waiting import HANG_GUARD

from .conftest import command, lsp_session, search, wait_indexed

pytestmark = pytest.mark.asyncio(loop_scope="module")
COSTLY = {
    "query": "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor",
    "also": [
        "consectetur adipiscing elit sed do eiusmod tempor lorem ipsum dolor sit amet page",
        "sed do eiusmod tempor lorem ipsum dolor sit amet consectetur adipiscing elit section",
        "dolor sit amet consectetur adipiscing elit sed do eiusmod tempor lorem ipsum of",
    ],
    "paths": ["**/page1*.md", "**/page2*.md", "d1", "d2", "d3", "**/*.md"],
}
"""Words of every chunk, three more such strings and a scope over every document."""


async def test_cancelled_searches_stop_and_status_is_answered_meanwhile(tmp_path: Path) -> None:
    root = make_corpus(tmp_path / "big", files=300)
    async with lsp_session([root], tmp_path, "neovim", init_options={"watch": False}) as client:
        await wait_indexed(client)
        params = types.ExecuteCommandParams(command="fisk.knowledge.search", arguments=[COSTLY])
        ids = [f"costly-{i}" for i in range(6)]
        costly = [
            asyncio.ensure_future(
                client.protocol.send_request_async(types.WORKSPACE_EXECUTE_COMMAND, params, i)  # type: ignore[no-untyped-call]
            )
            for i in ids
        ]
        status = await asyncio.wait_for(command(client, "fisk.knowledge.status"), HANG_GUARD)
        assert status["roots"][0]["documents"] == 300
        for i in ids:
            client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=i))
        outcomes: list[Any] = await asyncio.wait_for(
            asyncio.gather(*costly, return_exceptions=True), HANG_GUARD
        )
        for got in outcomes:
            if isinstance(got, BaseException):
                assert isinstance(got, JsonRpcException), got
                assert got.code == types.LSPErrorCodes.RequestCancelled.value
            else:
                assert got["status"] == "ok"
        # Every lane is free again: ordinary searches are answered.
        found = await asyncio.wait_for(search(client, "unique123"), HANG_GUARD)
        assert [r["citation"] for r in found["results"]][:1] == ["d3/page123.md#0"]
