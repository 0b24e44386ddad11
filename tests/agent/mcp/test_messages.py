"""`fisk-ai mcp` notes say what is true: words no document holds are not "no searchable words",
and a search while another process indexes says how far that run got (the run, in this test
process, is held at its plan by an injected reporter)."""

from __future__ import annotations

import threading
from pathlib import Path

import anyio

from fisk_ls.agent.tool import NAME
from fisk_ls.knowledge import RunReporter, index_project, resolve_settings
from fisk_ls.knowledge.notices import NO_MATCH, NO_TERMS_SENTENCE
from tests.support.waiting import HANG_GUARD

from .conftest import outcome, stdio


async def test_missing_words_are_not_no_searchable_words(built: Path) -> None:
    async with stdio(built) as client:
        missing = outcome(await client.call_tool(NAME, {"query": "zeppelin"}))
        assert (missing["status"], missing["note"], missing["results"]) == ("ok", NO_MATCH, [])
        nothing = outcome(await client.call_tool(NAME, {"query": "?!"}))
        assert (nothing["status"], nothing["note"]) == ("no_terms", NO_TERMS_SENTENCE)


async def test_a_search_while_another_process_indexes(kb: Path) -> None:
    reached, release = threading.Event(), threading.Event()

    class Hold(RunReporter):
        def on_plan(self, files: int) -> None:
            reached.set()
            release.wait(HANG_GUARD)

    settings = resolve_settings(cwd=kb)
    thread = threading.Thread(target=lambda: index_project(settings, reporter=Hold()))
    async with stdio(kb) as client:
        thread.start()
        try:
            assert await anyio.to_thread.run_sync(reached.wait, 30)
            out = outcome(await client.call_tool(NAME, {"query": "backpressure"}))
            assert out["status"] == "index_empty"
            total = out["indexing"]["total"]
            assert out["indexing"] == {"files": 0, "total": total} and total > 3
            assert out["note"] == (f"still indexing: 0 of {total} files; nothing is searchable yet")
        finally:
            release.set()
            await anyio.to_thread.run_sync(thread.join, 60)
        after = outcome(await client.call_tool(NAME, {"query": "backpressure"}))
        assert after["status"] == "ok" and "indexing" not in after and "note" not in after
