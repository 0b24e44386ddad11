"""Waiting in tests: one hang guard and one way to wait for something the test can observe.

``HANG_GUARD`` bounds every wait in the suite (an event, a thread, a process, a reply, a
condition polled). It guards against a hang and is never a timing assertion: a test that passes
does so long before it, however loaded the machine, and a test that fails on it has hung.
Nothing is slept for a fixed time to let something happen: a test waits for it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import NoReturn, TypeVar

import pytest

HANG_GUARD = 60.0
"""Seconds any wait in the tests may last before the test fails as hung."""

T = TypeVar("T")


def _give_up(check: Callable[..., object], last: object) -> NoReturn:
    name = getattr(check, "__qualname__", repr(check))
    pytest.fail(f"{name} did not hold within {HANG_GUARD:g} s (hang guard; last: {last!r})")


def wait_until(check: Callable[[], T | None], every: float = 0.02) -> T:
    """Call ``check`` until it returns something truthy and return that; fail the test if it
    has not after ``HANG_GUARD`` seconds."""
    deadline = time.monotonic() + HANG_GUARD
    while not (value := check()):
        if time.monotonic() > deadline:
            _give_up(check, value)
        time.sleep(every)
    return value


async def wait_until_async(check: Callable[[], Awaitable[T | None]], every: float = 0.05) -> T:
    """``wait_until`` for a check that is a coroutine (an LSP or MCP request), in an event loop."""
    deadline = time.monotonic() + HANG_GUARD
    while not (value := await check()):
        if time.monotonic() > deadline:
            _give_up(check, value)
        await asyncio.sleep(every)
    return value
