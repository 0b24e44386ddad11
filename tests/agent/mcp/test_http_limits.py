"""The connection caps of MCP over HTTP (``GuardedH11``), on fake transports: a new connection
over a cap takes the room of the one that has waited longest with no request in progress, and
is refused only when every connection is busy. No sockets, no clock: the loop is never run."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("uvicorn")

from uvicorn.config import Config
from uvicorn.server import ServerState

from fisk_ls.agent.http_limits import GuardedH11


class FakeTransport(asyncio.Transport):
    def __init__(self, peer: str, port: int) -> None:
        super().__init__()
        self.peer = (peer, port)
        self.closed = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": self.peer, "sockname": ("127.0.0.1", 8080)}.get(name, default)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def pause_reading(self) -> None: ...

    def resume_reading(self) -> None: ...

    def write(self, data: Any) -> None: ...


class Limited(GuardedH11):
    max_connections = 4
    max_per_client = 3


async def _app(scope: Any, receive: Any, send: Any) -> None: ...


@pytest.fixture
def connect() -> Iterator[Any]:
    loop = asyncio.new_event_loop()
    config = Config(app=_app, http=Limited, log_config=None)
    config.load()
    state = ServerState()
    made: list[tuple[Limited, FakeTransport]] = []

    def connect(peer: str = "127.0.0.1") -> tuple[Limited, FakeTransport]:
        protocol = Limited(config=config, server_state=state, app_state={}, _loop=loop)
        transport = FakeTransport(peer, len(made))
        protocol.connection_made(transport)
        made.append((protocol, transport))
        return protocol, transport

    yield connect
    for protocol, _ in made:
        protocol.connection_lost(None)
    loop.close()


class Busy:
    """A request cycle whose response is still being sent."""

    response_complete = False
    response_started = True
    more_body = False
    keep_alive = False

    class message_event:
        @staticmethod
        def set() -> None: ...


def test_a_new_connection_takes_the_room_of_the_longest_waiting(connect: Any) -> None:
    first, first_t = connect("10.0.0.1")
    second, second_t = connect("10.0.0.2")
    third, _ = connect("10.0.0.3")
    fourth, _ = connect("10.0.0.4")
    first.waiting_since, second.waiting_since = 5.0, 1.0  # second has waited longest
    third.waiting_since = fourth.waiting_since = 9.0
    _, new_t = connect("10.0.0.5")
    assert second_t.closed and not new_t.closed and not first_t.closed


def test_one_address_makes_room_among_its_own(connect: Any) -> None:
    other, other_t = connect("10.0.0.9")
    other.waiting_since = 0.0  # the oldest, but another client's
    mine = [connect("10.0.0.1") for _ in range(3)]
    _, new_t = connect("10.0.0.1")
    assert not other_t.closed and not new_t.closed
    assert sum(t.closed for _, t in mine) == 1


def test_refused_only_when_every_connection_is_busy(connect: Any) -> None:
    for _ in range(4):
        protocol, _ = connect("10.0.0.1" if _ < 2 else "10.0.0.2")
        protocol.cycle = Busy()
    _, new_t = connect("10.0.0.3")
    assert new_t.closed


class Receiving:
    """A request cycle whose head arrived and whose body is still arriving."""

    response_complete = False
    response_started = False
    more_body = True
    message_event = Busy.message_event


def test_a_connection_still_receiving_a_body_gives_way(connect: Any) -> None:
    receiving = []
    for i in range(4):
        protocol, transport = connect("10.0.0.1" if i < 2 else "10.0.0.2")
        protocol.cycle = Receiving()
        protocol.waiting_since = float(i)
        receiving.append(transport)
    _, new_t = connect("10.0.0.3")
    assert not new_t.closed and receiving[0].closed
    assert not any(t.closed for t in receiving[1:])
