"""Long queries never hold up ordinary ones (issue 17: four 5 MB searches took every worker
thread and a plain search waited 83 s). The lanes are driven with searches that block on events,
so what is asserted is which searches could run, never how long anything took."""

from __future__ import annotations

import asyncio
import threading

import pytest

from fisk_ls.knowledge import SearchRequest
from fisk_ls.knowledge.question import SHORT_QUERY_TERMS
from fisk_ls.lsp.lanes import SearchLanes
from tests.support.waiting import HANG_GUARD

from .conftest import citations, lsp_session, search, wait_indexed

LONG = " ".join(f"word{i}-pair{i}" for i in range(100))  # 1,379 characters: accepted


def is_long_query(text: str) -> bool:
    return SearchRequest(text).long


def test_what_counts_as_long() -> None:
    assert not is_long_query("how does tail sampling work")
    assert not is_long_query("¿qué es la propagación de contexto en el SDK de Java?")  # es words
    assert not is_long_query("OTEL_EXPORTER_OTLP_ENDPOINT port")
    assert not is_long_query("x" * 2000)  # one term, however long
    assert is_long_query(LONG)
    assert is_long_query(" ".join(f"w{i}" for i in range(SHORT_QUERY_TERMS + 1)))
    assert is_long_query("数据库设计文档的结构和索引")  # CJK bigrams count as terms


@pytest.mark.asyncio
async def test_short_searches_run_while_long_ones_hold_every_long_thread() -> None:
    lanes = SearchLanes(short=1, long=2)
    release = threading.Event()
    inside = threading.Semaphore(0)
    entered: list[int] = []

    def long_search() -> str:
        entered.append(1)
        inside.release()
        assert release.wait(HANG_GUARD)
        return "long"

    try:
        longs = [asyncio.ensure_future(lanes.run(True, long_search)) for _ in range(6)]
        for _ in range(2):  # both long threads are taken
            assert await asyncio.to_thread(inside.acquire, timeout=HANG_GUARD)
        short = await asyncio.wait_for(lanes.run(False, lambda: "short"), HANG_GUARD)
        assert short == "short"
        assert len(entered) == 2 and not any(f.done() for f in longs)  # the rest queue
        release.set()
        assert await asyncio.wait_for(asyncio.gather(*longs), HANG_GUARD) == ["long"] * 6
    finally:
        release.set()
        lanes.close()


@pytest.mark.asyncio
async def test_the_server_answers_every_search_while_long_ones_are_in_flight(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    base = tmp_path_factory.mktemp("lanes")
    root = base / "docs"
    root.mkdir()
    (root / "sampling.md").write_text("# Tail sampling\n\nTail sampling keeps whole traces.\n")
    async with lsp_session([root], base, "neovim", init_options={"watch": False}) as client:
        await wait_indexed(client)
        longs = [asyncio.ensure_future(search(client, LONG)) for _ in range(12)]
        assert citations(await search(client, "tail sampling")) == ["sampling.md#0"]
        for result in await asyncio.gather(*longs):
            assert result["status"] in ("ok", "no_terms")
