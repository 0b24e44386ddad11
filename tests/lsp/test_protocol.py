"""The pygls protocol fixes (fisk_ls/lsp/protocol.py): finished futures are forgotten."""

from __future__ import annotations

import concurrent.futures

import pytest

from fisk_ls.lsp.wiring import create_server
from tests.support.waiting import wait_until_async


@pytest.mark.parametrize("kind", ["coroutine", "thread"])
async def test_finished_handler_futures_are_forgotten(kind: str) -> None:
    ls = create_server()
    protocol = ls.protocol
    results: list[object] = []

    async def coroutine() -> int:
        return 1

    def thread() -> int:
        return 2

    handler = coroutine if kind == "coroutine" else ls.thread()(thread)
    for i in range(50):
        protocol._execute_handler(f"id-{i}", handler, callback=results.append)  # type: ignore[arg-type]

    async def settled() -> bool:
        return len(results) == 50 and not protocol._request_futures

    await wait_until_async(settled)
    assert len(results) == 50
    assert protocol._request_futures == {}
    ls.shutdown()  # type: ignore[no-untyped-call]


def test_a_replaced_entry_is_kept() -> None:
    ls = create_server()
    old: concurrent.futures.Future[int] = concurrent.futures.Future()
    new: concurrent.futures.Future[int] = concurrent.futures.Future()
    ls.protocol._request_futures["k"] = new
    ls.protocol._forget("k", old)  # type: ignore[attr-defined]  # FiskProtocol's own
    assert ls.protocol._request_futures == {"k": new}


def test_another_pygls_minor_version_is_refused() -> None:
    from fisk_ls.lsp.protocol import check_pygls

    check_pygls("2.1.1")
    check_pygls("2.1")
    for other in ("2.2.0", "2.0.9", "3.0.0", "2.10.0"):
        with pytest.raises(RuntimeError, match=r"pygls 2\.1\.x"):
            check_pygls(other)
