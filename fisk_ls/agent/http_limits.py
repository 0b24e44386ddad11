"""Limits for the MCP server's HTTP side: connections and sessions cannot pile up.

uvicorn (h11) waits forever for a request's headers, so 250 connections that sent only a request
line starved real clients before the bearer check ever ran. ``GuardedH11`` closes a connection
that has not sent a whole request head within ``HEADER_TIMEOUT`` seconds (after connecting, or
after its previous response). At most ``MAX_CONNECTIONS`` are open, at most
``MAX_PER_CLIENT`` from one address; a new connection over either cap takes the room of the
connection that has waited longest without a request in progress (half-open, or idle between
requests), so connections re-opened as fast as they are closed cannot keep a client out (70 of
them let 2 of 50 initializes through when new connections were refused instead). Only
connections all busy with requests make a new one wait its turn (it is refused). Sessions of
the streamable HTTP transport expire after ``SESSION_IDLE_SECONDS`` idle and are capped at
``MAX_SESSIONS`` (2,000 sessions took the server from 76 to 154 MB).

A request's body must arrive whole within ``BODY_TIMEOUT`` seconds of its head (a deadline,
not an idle timeout: a byte every 2 s does not extend it), and until it has, the connection
counts as waiting, so it gives way like a half-open one: 128 connections that sent a head and
dribbled the body kept every other local client out for as long as they went on. Warnings
(a refused connection, uvicorn's "Invalid HTTP request received.") are throttled by
``LogThrottle``: one line per kind every ``LOG_INTERVAL`` seconds, the next saying how many
were left out (refusals had written 1,800 lines a second).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_TIMEOUT = 5.0
BODY_TIMEOUT = 10.0
LOG_INTERVAL = 10.0
MAX_CONNECTIONS = 256
MAX_PER_CLIENT = 128
SESSION_IDLE_SECONDS = 600.0
MAX_SESSIONS = 200

log = logging.getLogger(__name__)


class LogThrottle(logging.Filter):
    """At most one WARNING-or-worse record of each kind (logger and message template) every
    ``interval`` seconds of ``clock``; the next one let through says how many were left out."""

    def __init__(
        self, interval: float = LOG_INTERVAL, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__()
        self.interval = interval
        self.clock = clock
        self._last: dict[tuple[str, str], float] = {}
        self._left_out: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        kind = (record.name, str(record.msg))
        now = self.clock()
        with self._lock:
            last = self._last.get(kind)
            if last is not None and now - last < self.interval:
                self._left_out[kind] = self._left_out.get(kind, 0) + 1
                return False
            self._last[kind] = now
            left_out = self._left_out.pop(kind, 0)
        if left_out and last is not None:
            more = f" ({left_out} more like this in the {now - last:.0f} s before, not shown)"
            record.msg = str(record.msg) + more.replace("%", "%%")
        return True


def throttle_logs(*names: str, throttle: LogThrottle | None = None) -> LogThrottle:
    """Install one ``LogThrottle`` on this module's logger and the loggers ``names``."""
    throttle = throttle or LogThrottle()
    for name in (__name__, *names):
        logger = logging.getLogger(name)
        if not any(isinstance(f, LogThrottle) for f in logger.filters):
            logger.addFilter(throttle)
    return throttle


class GuardedH11(H11Protocol):
    header_timeout = HEADER_TIMEOUT
    body_timeout = BODY_TIMEOUT
    max_connections = MAX_CONNECTIONS
    max_per_client = MAX_PER_CLIENT

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._header_timer: asyncio.TimerHandle | None = None
        self.waiting_since = self.loop.time()
        if not self._make_room():
            log.warning(
                "refusing a connection from %s: %d open, all busy with requests",
                self.peer,
                len(self.connections) - 1,
            )
            transport.close()
            return
        self._arm()

    @property
    def waiting(self) -> bool:
        """No request being served: no whole request yet (no head, or a body still arriving
        and nothing answered), or idle after a response."""
        cycle = self.cycle
        if cycle is None or cycle.response_complete:
            return True
        return bool(cycle.more_body) and not cycle.response_started

    @property
    def peer(self) -> str | None:
        return self.client[0] if self.client else None

    def _make_room(self) -> bool:
        """False when this connection is over a cap and no waiting connection can make room."""
        others = [
            c
            for c in self.connections
            if c is not self and isinstance(c, GuardedH11) and not c.transport.is_closing()
        ]
        same = [c for c in others if c.peer == self.peer]
        if len(same) >= self.max_per_client:
            pool = same
        elif len(others) >= self.max_connections:
            pool = others
        else:
            return True
        waiting = [c for c in pool if c.waiting]
        if not waiting:
            return False
        oldest = min(waiting, key=lambda c: c.waiting_since)
        log.info("closing a waiting connection from %s to make room", oldest.peer)
        oldest.transport.close()
        return True

    def _arm(self) -> None:
        """The deadline of the next request head."""
        if self._header_timer is not None:
            self._header_timer.cancel()
        armed = self.cycle
        self._header_timer = self.loop.call_later(self.header_timeout, self._expire, armed)

    def _expire(self, armed: Any) -> None:
        self._header_timer = None
        if self.cycle is armed and not self.transport.is_closing():  # no new request head
            self.transport.close()

    def handle_events(self) -> None:
        before = self.cycle
        super().handle_events()
        cycle = self.cycle
        if cycle is not None and cycle is not before and cycle.more_body:
            # A new request whose body has not all arrived: the deadline of its body.
            if self._header_timer is not None:
                self._header_timer.cancel()
            self._header_timer = self.loop.call_later(self.body_timeout, self._body_expired, cycle)

    def _body_expired(self, cycle: Any) -> None:
        self._header_timer = None
        if self.cycle is cycle and cycle.more_body and not self.transport.is_closing():
            log.warning(
                "closing a connection from %s: its request body did not arrive within %gs",
                self.peer,
                self.body_timeout,
            )
            self.transport.close()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self.waiting_since = self.loop.time()
        if not self.transport.is_closing():
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        timer = getattr(self, "_header_timer", None)
        if timer is not None:
            timer.cancel()
        super().connection_lost(exc)
