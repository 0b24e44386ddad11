"""Searches run in two lanes, so long queries can never hold up ordinary ones.

Every query is bounded (``lexical.TermStats.bound``), but a client can still send many long
ones at once (an agent pasting paragraphs, a fuzzer): in one shared pool they take every worker
thread and a plain search waits behind all of them. Here a long request (the core's rule,
``SearchRequest.long``: counted on the event loop, cheaply) runs in the long lane
(``LONG_THREADS`` threads, the rest queue there); every other one has the short lane's threads
to itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

SHORT_THREADS = 4
LONG_THREADS = 2


class SearchLanes:
    def __init__(self, short: int = SHORT_THREADS, long: int = LONG_THREADS) -> None:
        self.short = ThreadPoolExecutor(short, thread_name_prefix="fisk-search")
        self.long = ThreadPoolExecutor(long, thread_name_prefix="fisk-search-long")

    async def run(self, long: bool, fn: Callable[[], T]) -> T:
        """``fn`` (a search, ``long`` or not) on a thread of its lane."""
        lane = self.long if long else self.short
        return await asyncio.get_running_loop().run_in_executor(lane, fn)

    def close(self) -> None:
        """Queued searches are dropped; running ones finish (each is bounded)."""
        for pool in (self.short, self.long):
            pool.shutdown(wait=False, cancel_futures=True)
