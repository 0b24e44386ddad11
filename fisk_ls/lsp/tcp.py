"""`fisk-ls --tcp HOST:PORT --token-env NAME`: the language server on a loopback port that only
the holder of a token can use.

pygls' own TCP server handed every connection to the one protocol (the newest took over the
replies) and ended the server when any of them closed, and anyone on the machine could connect,
open any folder its user can read and search it. Here a connection is first read by this module
alone: its first message must be ``initialize`` whose ``initializationOptions`` carry ``token``
equal to the value of the environment variable ``--token-env`` names, within
``FIRST_MESSAGE_TIMEOUT`` seconds. Anything else is answered with one -32600 error and closed,
and the server goes on listening: a stranger's connection cannot use it, take it over or end
it. The token is removed from the options before the server reads them.

One client at a time: the first that presents the token has the server until it disconnects
(or sends ``exit``); then the process ends, as it does when a stdio client closes stdin,
because its projects, stores and settings are that client's session. A connection with the
token while that session lasts is refused. At most ``MAX_WAITING`` connections may be waiting
to present the token; the oldest gives way to a new one. Frames are bounded as on stdio
(frames.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pygls.io_ import run_async

from .frames import MAX_FRAME_BYTES, MAX_HEADER_LINE, FrameError, check_header

if TYPE_CHECKING:
    from .server import FiskLanguageServer

log = logging.getLogger(__name__)

TOKEN_KEY = "token"
"""The ``initializationOptions`` key a ``--tcp`` client sends the token in."""
FIRST_MESSAGE_TIMEOUT = 10.0
MAX_FIRST_MESSAGE = 1024 * 1024
MAX_WAITING = 32
INVALID_REQUEST = -32600


class Refused(Exception):
    """A connection that may not use the server; the message says why (and how), ``msg_id``
    is the id to answer when the message had one."""

    def __init__(self, message: str, msg_id: int | str | None = None) -> None:
        super().__init__(message)
        self.msg_id = msg_id


class ConnectionReader:
    """pygls' reader interface (``readline``, ``readexactly``) over a connection, with the
    bounds FrameGuard sets on stdio: a bad header ends the input."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader
        self.closed_reason: str | None = None

    async def readline(self) -> bytes:
        if self.closed_reason is not None:
            return b""
        try:
            line = await self.reader.readline()
        except (ValueError, ConnectionError):  # a line over the stream's limit, a reset
            line = b"x" * (MAX_HEADER_LINE + 1)
        try:
            return check_header(line)
        except FrameError as exc:
            self.closed_reason = str(exc)
            log.error("fisk-ls: refusing a message frame: %s; closing the connection", exc)
            return b""

    async def readexactly(self, n: int) -> bytes:
        if self.closed_reason is not None:
            return b""
        try:
            return await self.reader.readexactly(min(n, MAX_FRAME_BYTES))
        except (asyncio.IncompleteReadError, ConnectionError):
            return b""


async def read_first(reader: ConnectionReader) -> bytes:
    """The body of the connection's first message; Refused when it has none."""
    length: int | None = None
    while (line := await reader.readline()) not in (b"\r\n", b"\n"):
        if not line:
            raise Refused("the connection closed before its first message")
        if line.startswith(b"Content-Length: "):  # check_header's canonical spelling
            length = int(line.split(b":")[1])
    if length is None or length > MAX_FIRST_MESSAGE:
        raise Refused(f"the first message needs a Content-Length of at most {MAX_FIRST_MESSAGE}")
    body = await reader.readexactly(length)
    if len(body) != length:
        raise Refused("the connection closed inside its first message")
    return body


def admit(body: bytes, token: str) -> dict[str, Any]:
    """The first message, without the token, when it is ``initialize`` carrying ``token``;
    Refused otherwise."""
    try:
        message = json.loads(body)
    except ValueError:
        message = None
    msg_id = message.get("id") if isinstance(message, dict) else None
    params = message.get("params") if isinstance(message, dict) else None
    options = params.get("initializationOptions") if isinstance(params, dict) else None
    given = options.get(TOKEN_KEY) if isinstance(options, dict) else None
    if (
        not isinstance(message, dict)
        or message.get("method") != "initialize"
        or not isinstance(given, str)
        or not hmac.compare_digest(given.encode(), token.encode())
    ):
        raise Refused(
            "fisk-ls --tcp: the first message must be initialize with the server's token in "
            f"initializationOptions.{TOKEN_KEY} (the value of the variable --token-env names)",
            msg_id if isinstance(msg_id, int | str) and not isinstance(msg_id, bool) else None,
        )
    assert isinstance(options, dict)
    del options[TOKEN_KEY]
    return message


def _error_frame(msg_id: Any, text: str) -> bytes:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": msg_id, "error": {"code": INVALID_REQUEST, "message": text}}
    ).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class TcpServer:
    """Accepts connections, admits one session (``admit``) and ends when it does."""

    def __init__(self, ls: FiskLanguageServer, token: str) -> None:
        self.ls = ls
        self.token = token
        self.session: asyncio.StreamWriter | None = None
        self.waiting: list[asyncio.StreamWriter] = []
        self.done = asyncio.Event()
        self.stop = threading.Event()

    async def connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.waiting.append(writer)
        if len(self.waiting) > MAX_WAITING:
            self.waiting.pop(0).close()
        try:
            message = await self._admitted(ConnectionReader(reader), writer)
        finally:
            if writer in self.waiting:
                self.waiting.remove(writer)
        if message is None:
            writer.close()
            return
        self.session = writer
        try:
            await self._serve(ConnectionReader(reader), writer, message)
        finally:
            writer.close()
            self.done.set()

    async def _admitted(
        self, reader: ConnectionReader, writer: asyncio.StreamWriter
    ) -> dict[str, Any] | None:
        try:
            body = await asyncio.wait_for(read_first(reader), FIRST_MESSAGE_TIMEOUT)
            message = admit(body, self.token)
            if self.session is not None:
                raise Refused("fisk-ls --tcp serves one client at a time; another is connected")
            return message
        except TimeoutError:
            log.info("closing a connection that sent no first message in time")
        except Refused as exc:
            log.info("refusing a connection: %s", exc)
            writer.write(_error_frame(exc.msg_id, str(exc)))
            with contextlib.suppress(TimeoutError, ConnectionError):
                await asyncio.wait_for(writer.drain(), FIRST_MESSAGE_TIMEOUT)
        return None

    async def _serve(
        self, reader: ConnectionReader, writer: asyncio.StreamWriter, first: dict[str, Any]
    ) -> None:
        protocol = self.ls.protocol
        protocol.set_writer(writer)
        try:
            text = json.dumps(first)
            protocol.handle_message(json.loads(text, object_hook=protocol.structure_message))
            await run_async(
                stop_event=self.stop,
                reader=reader,
                protocol=protocol,
                logger=log,
                error_handler=self.ls.report_server_error,
            )
        except SystemExit:  # pygls ends ``exit`` with sys.exit: the session is over
            pass


def serve_tcp(
    ls: FiskLanguageServer,
    host: str,
    port: int,
    token: str,
    on_listening: Callable[[tuple[str, int]], None] | None = None,
) -> None:
    """Listen on ``host:port`` until the admitted client's session ends."""

    async def main() -> None:
        tcp = TcpServer(ls, token)
        ls._stop_event = tcp.stop  # pygls' shutdown() sets it
        server = await asyncio.start_server(tcp.connection, host, port, limit=MAX_HEADER_LINE + 2)
        address = server.sockets[0].getsockname()[:2]
        if on_listening is not None:
            on_listening(address)
        async with server:
            await tcp.done.wait()

    asyncio.run(main())
