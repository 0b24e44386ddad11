"""The fisk-ls language server: a pygls ``LanguageServer`` with typed state, and ``run``.

Handlers live in one module per concern (lifecycle, sync, commands, citations); each has a
``register(ls)`` called by ``wiring.create_server`` (symbols.py is enabled at initialize). Worker
threads reach the client through ``call`` (hand a function to the event loop) and
``show_once`` (one message per problem).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from .lanes import SearchLanes
from .logs import SHOWN
from .options import Options
from .project import Projects
from .protocol import FiskProtocol

NAME = "fisk-ls"
SHOWN_LEVELS = {
    types.MessageType.Error: logging.ERROR,
    types.MessageType.Warning: logging.WARNING,
    types.MessageType.Info: logging.INFO,
}
READY_TIMEOUT = 30.0


def _version() -> str:
    try:
        return version("fisk-ls")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0"


class FiskLanguageServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(NAME, _version(), protocol_cls=FiskProtocol, max_workers=4)
        self.options = Options()
        self.option_errors: list[str] = []
        """From initializationOptions; each folder's workspace/configuration is laid over it."""
        self.projects = Projects()
        self.search_lanes = SearchLanes()
        """Short and long queries run on separate threads (lanes.py)."""
        self.ready = threading.Event()
        """Set once the projects exist (after ``initialized``); requests wait for it."""
        self.loop: asyncio.AbstractEventLoop | None = None
        self.closing = False
        """Set at shutdown/exit: nothing more is sent to the client."""
        self.open_progress: set[Any] = set()
        """Work done progress begun and not ended yet (progress.py); shutdown ends them."""
        self.exit_code = 0
        """1 when ``exit`` came without ``shutdown`` (pygls swallows its own SystemExit)."""
        self._shown: set[str] = set()
        self._shown_lock = threading.Lock()

    @property
    def progress_supported(self) -> bool:
        window = self.client_capabilities.window
        return bool(window and window.work_done_progress)

    def call(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn(*args)`` on the event loop (safe from any thread)."""
        loop = self.loop
        if loop is None or loop.is_closed() or self.closing:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            fn(*args)
        else:
            loop.call_soon_threadsafe(fn, *args)

    def show_once(
        self, message: str, kind: types.MessageType = types.MessageType.Error, key: str = ""
    ) -> None:
        """One ``window/showMessage`` per distinct problem (``key``, default the message).

        The message is also logged, at its own level, for stderr and ``--log-file`` only
        (``SHOWN``): the client gets it once, not again as a ``window/logMessage``."""
        with self._shown_lock:
            if (key or message) in self._shown:
                return
            self._shown.add(key or message)
        level = SHOWN_LEVELS.get(kind, logging.INFO)
        logging.getLogger(__name__).log(level, "%s", message, extra={SHOWN: True})
        params = types.ShowMessageParams(type=kind, message=message)
        self.call(self.window_show_message, params)

    def report_server_error(self, error: Exception, source: Any) -> None:
        """pygls' message loop reports a message it could not take here: one that is not JSON
        gets -32700, one already answered nothing more."""
        protocol = self.protocol
        if isinstance(protocol, FiskProtocol) and protocol.report_undecodable(error):
            return
        super().report_server_error(error, source)

    def wait_ready(self) -> None:
        self.ready.wait(READY_TIMEOUT)
