"""Logging: WARNING+ of fisk_ls to ``window/logMessage`` (but what ``show_once`` already showed
the client); everything to ``--log-file``.

The server never writes to stdout (that is the protocol channel); without a log file, warnings
also go to stderr, which clients show in their server log.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from .server import FiskLanguageServer

SHOWN = "fisk_shown"
"""Set on a log record whose message went to the client as ``window/showMessage``
(``FiskLanguageServer.show_once``): it is not sent again as a ``window/logMessage``."""

_LEVELS = {
    logging.ERROR: types.MessageType.Error,
    logging.WARNING: types.MessageType.Warning,
    logging.INFO: types.MessageType.Info,
}
FORMAT = "%(asctime)s %(levelname)s %(name)s [%(threadName)s] %(message)s"


class ClientLogHandler(logging.Handler):
    """Forwards records to the client once it is initialized (before that they are dropped),
    except those the client was already shown (``server.SHOWN``): one message per warning."""

    def __init__(self, ls: FiskLanguageServer) -> None:
        super().__init__(logging.WARNING)
        self.ls = ls

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(record, SHOWN, False):
            return
        try:
            kind = next(t for lvl, t in _LEVELS.items() if record.levelno >= lvl)
        except StopIteration:
            kind = types.MessageType.Log
        try:
            params = types.LogMessageParams(type=kind, message=self.format(record))
            self.ls.call(self.ls.window_log_message, params)
        except Exception:  # logging must never break the server
            self.handleError(record)


def setup_logging(ls: FiskLanguageServer, log_file: Path | None) -> None:
    ours = logging.getLogger("fisk_ls")
    ours.setLevel(logging.DEBUG if log_file else logging.INFO)
    client = ClientLogHandler(ls)
    client.setFormatter(logging.Formatter("%(message)s"))
    ours.addHandler(client)
    root = logging.getLogger()
    if log_file is not None:
        handler: logging.Handler = logging.FileHandler(log_file, encoding="utf-8")
        handler.setLevel(logging.DEBUG)
        root.setLevel(logging.INFO)
    else:
        handler = logging.StreamHandler(sys.stderr)
        handler.setLevel(logging.WARNING)
        root.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter(FORMAT))
    root.addHandler(handler)
