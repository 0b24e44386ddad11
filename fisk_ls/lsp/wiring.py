"""Wiring: the one place that builds the server from its feature modules and runs it.

Feature modules (lifecycle, sync, commands, citations, symbols) import only ``server.py`` (the
server class); this module imports them, so nothing imports the module that wires it.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

from ..knowledge import bounded
from . import citations, commands, expand, lifecycle, sync
from .server import FiskLanguageServer

log = logging.getLogger(__name__)


def create_server() -> FiskLanguageServer:
    ls = FiskLanguageServer()
    for module in (lifecycle, sync, commands, citations, expand):
        module.register(ls)
    return ls


def tcp_address(tcp: str) -> tuple[str, int]:
    """``HOST:PORT`` (host default 127.0.0.1) on loopback only: what a client can read is what
    the server can, so the port is for this machine's user holding the token (tcp.py).
    SystemExit for anything else."""
    host, _, port = tcp.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        sys.exit(f"fisk-ls: --tcp {bounded(tcp)}: expected HOST:PORT with a port from 0 to 65535")
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        sys.exit(
            f"fisk-ls: --tcp {bounded(tcp)}: the TCP port listens on loopback only (127.0.0.1, "
            "::1 or localhost); use stdio to serve an editor"
        )
    return host, int(port)


def tcp_token(token_env: str | None) -> str:
    """The token a ``--tcp`` client must send; SystemExit when there is none."""
    if not token_env:
        sys.exit(
            "fisk-ls: --tcp needs a token, so that no other user of this machine can use the "
            "port: put a secret in an environment variable and pass --token-env NAME; the "
            "client sends it as initializationOptions.token (docs/lsp-protocol.md)"
        )
    value = os.environ.get(token_env, "").strip()
    if not value:
        sys.exit(f"fisk-ls: --token-env {token_env}: that environment variable is unset or empty")
    return value


def _on_interrupt(ls: FiskLanguageServer) -> None:
    """SIGINT closes the projects (workers stopped, stores closed, the lock released) and ends
    the process. pygls' stdin reader thread cannot be interrupted, so asyncio's own handler
    left the process waiting for it forever."""

    def close_and_exit(code: int) -> None:
        try:
            ls.search_lanes.close()
            ls.projects.close()
        finally:
            logging.shutdown()
            os._exit(code)

    def interrupted(signum: int, frame: FrameType | None) -> None:
        if ls.closing:  # a second interrupt: at once
            os._exit(128 + signum)
        ls.closing = True
        log.warning("fisk-ls: interrupted; closing the knowledge stores")
        # On a thread: the handler may have interrupted the main thread inside a lock.
        threading.Thread(target=close_and_exit, args=(128 + signum,), daemon=True).start()

    signal.signal(signal.SIGINT, interrupted)


def run(tcp: str | None = None, log_file: Path | None = None, token_env: str | None = None) -> None:
    """Serve on stdio, or on loopback ``HOST:PORT`` to the client holding the token."""
    from .logs import setup_logging

    if tcp is None and token_env is not None:
        sys.exit("fisk-ls: --token-env applies to --tcp only (stdio needs none)")
    address = tcp_address(tcp) if tcp else None
    token = tcp_token(token_env) if tcp else ""
    ls = create_server()
    try:
        setup_logging(ls, log_file)
    except OSError as exc:
        sys.exit(bounded(f"fisk-ls: --log-file {log_file}: {exc.strerror or exc}"))
    _on_interrupt(ls)
    try:
        if address is not None:
            from .tcp import serve_tcp

            def listening(bound: tuple[str, int]) -> None:
                log.warning(
                    "fisk-ls: listening on %s:%d; the first message must be initialize with "
                    "the token in initializationOptions.token; one client, whose disconnect "
                    "ends the server",
                    *bound,
                )

            serve_tcp(ls, *address, token, on_listening=listening)
        else:
            from .frames import FrameGuard

            ls.start_io(FrameGuard(sys.stdin.buffer))  # type: ignore[arg-type]
    finally:  # also when the client vanished without shutdown/exit (stdin closed)
        ls.closing = True
        ls.projects.close()
    if ls.exit_code:
        sys.exit(ls.exit_code)
