"""Wiring: the one place that builds the server from its feature modules and runs it.

Feature modules (lifecycle, sync, commands, citations, symbols) import only ``server.py`` (the
server class); this module imports them, so nothing imports the module that wires it.
"""

from __future__ import annotations

import sys
from pathlib import Path

from . import citations, commands, lifecycle, sync
from .server import FiskLanguageServer


def create_server() -> FiskLanguageServer:
    ls = FiskLanguageServer()
    for module in (lifecycle, sync, commands, citations):
        module.register(ls)
    return ls


def run(tcp: str | None = None, log_file: Path | None = None) -> None:
    """Serve on stdio, or on ``HOST:PORT`` for debugging."""
    from .logs import setup_logging

    ls = create_server()
    setup_logging(ls, log_file)
    try:
        if tcp:
            host, _, port = tcp.rpartition(":")
            ls.start_tcp(host or "127.0.0.1", int(port))
        else:
            from .frames import FrameGuard

            ls.start_io(FrameGuard(sys.stdin.buffer))  # type: ignore[arg-type]
    finally:  # also when the client vanished without shutdown/exit (stdin closed)
        ls.closing = True
        ls.projects.close()
    if ls.exit_code:
        sys.exit(ls.exit_code)
