"""Two fixes to pygls 2.1.1's protocol, found while testing fisk-ls.

1. Leak: every notification, and the inner handler of every request pygls runs as a generator
   (``workspace/executeCommand``, ``initialize``, ``shutdown``…), stores its future in
   ``_request_futures`` under a fresh uuid that nothing ever removes, so each search kept its
   result alive (about 13 KB per ``fisk.knowledge.search``). Here every stored future removes
   itself when done.
2. ``shutdown`` cancels pending requests while iterating ``_request_futures`` directly;
   cancelling runs callbacks that remove entries, so it failed with "dictionary changed size
   during iteration" whenever a command was in flight (a reindex, say). It also read
   ``msg_id`` after awaiting the user's handler, when another message may have changed it.

Both override private pygls methods, so the pin in pyproject.toml names the minor version they
were written against, and importing this module on another one fails loudly (rather than
silently leaking or breaking shutdown). Write-ups ready to report upstream:
docs/pygls-upstream.md.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from importlib.metadata import version
from typing import Any

from lsprotocol import types
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

PATCHED_PYGLS = "2.1"
"""The pygls minor version whose private methods this module overrides."""


def check_pygls(installed: str) -> None:
    """Refuse a pygls other than the patched minor version."""
    if installed != PATCHED_PYGLS and not installed.startswith(PATCHED_PYGLS + "."):
        raise RuntimeError(
            f"fisk-ls overrides private methods of pygls {PATCHED_PYGLS}.x "
            f"(fisk_ls/lsp/protocol.py) but pygls {installed} is installed; install the "
            "version pyproject.toml pins, or re-check the overrides against the new one"
        )


check_pygls(version("pygls"))


class FiskProtocol(LanguageServerProtocol):
    def _execute_handler(
        self,
        msg_id: Any,
        handler: Callable[..., Any],
        callback: Callable[..., Any],
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        future = self._request_futures.get(msg_id)
        if future is not None:
            future.add_done_callback(lambda _: self._forget(msg_id, future))

    def _forget(self, msg_id: Any, future: Any) -> None:
        if self._request_futures.get(msg_id) is future:
            del self._request_futures[msg_id]

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Generator[Any, Any, None]:
        current_id = self.msg_id
        if (user_handler := self.fm.features.get(types.SHUTDOWN)) is not None:
            yield user_handler, args, None
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current_id and not future.done():
                future.cancel()
        self._shutdown = True
        return None
