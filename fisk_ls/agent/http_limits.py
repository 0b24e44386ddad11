"""Limits for the MCP server's HTTP side: half-open connections and sessions cannot pile up.

uvicorn (h11) waits forever for a request's headers, so 250 connections that sent only a request
line starved real clients before the bearer check ever ran. ``GuardedH11`` closes a connection
that has not sent a whole request head within ``HEADER_TIMEOUT`` seconds (after connecting, or
after its previous response), and refuses connections beyond ``MAX_CONNECTIONS``. Sessions of
the streamable HTTP transport expire after ``SESSION_IDLE_SECONDS`` idle and are capped at
``MAX_SESSIONS`` (2,000 sessions took the server from 76 to 154 MB).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_TIMEOUT = 10.0
MAX_CONNECTIONS = 64
SESSION_IDLE_SECONDS = 600.0
MAX_SESSIONS = 200

log = logging.getLogger(__name__)


class GuardedH11(H11Protocol):
    header_timeout = HEADER_TIMEOUT
    max_connections = MAX_CONNECTIONS

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._header_timer: asyncio.TimerHandle | None = None
        if len(self.connections) > self.max_connections:
            log.warning("refusing a connection: %d already open", len(self.connections) - 1)
            transport.close()
            return
        self._arm()

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
        if not self.transport.is_closing():
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        timer = getattr(self, "_header_timer", None)
        if timer is not None:
            timer.cancel()
        super().connection_lost(exc)
