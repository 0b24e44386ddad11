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
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_TIMEOUT = 5.0
MAX_CONNECTIONS = 256
MAX_PER_CLIENT = 128
SESSION_IDLE_SECONDS = 600.0
MAX_SESSIONS = 200

log = logging.getLogger(__name__)


class GuardedH11(H11Protocol):
    header_timeout = HEADER_TIMEOUT
    max_connections = MAX_CONNECTIONS
    max_per_client = MAX_PER_CLIENT

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._header_timer: asyncio.TimerHandle | None = None
        self.waiting_since = self.loop.time()
        if not self._make_room():
            log.warning("refusing a connection: %d open, all busy", len(self.connections) - 1)
            transport.close()
            return
        self._arm()

    @property
    def waiting(self) -> bool:
        """No request in progress: no whole request head yet, or idle after a response."""
        return self.cycle is None or self.cycle.response_complete

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
        if self._header_timer is not None:
            self._header_timer.cancel()
        armed = self.cycle
        self._header_timer = self.loop.call_later(self.header_timeout, self._expire, armed)

    def _expire(self, armed: Any) -> None:
        self._header_timer = None
        if self.cycle is armed and not self.transport.is_closing():  # no new request head
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
