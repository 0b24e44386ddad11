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

Also, as JSON-RPC and LSP say (pygls logged a traceback and sent nothing): a message that is not
JSON gets -32700, one that is not a JSON-RPC request -32600 (an id with neither a method nor a
result or error included), a request whose params do not have
the method's shape -32602, a second ``initialize`` -32600; replies the handlers chose (invalid
params, request failed, cancelled) are one INFO line, never a traceback.

These override private pygls methods, so the pin in pyproject.toml names the minor version they
were written against, and importing this module on another one fails loudly (rather than
silently leaking or breaking shutdown). Write-ups ready to report upstream:
docs/pygls-upstream.md.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Generator
from importlib.metadata import version
from typing import Any

import cattrs
from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcParseError,
    JsonRpcServerNotInitialized,
)
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
)
from pygls.protocol.language_server import lsp_method

log = logging.getLogger(__name__)

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

MAX_SHOWN = 200
"""Characters of a refused message's details that go into the error."""


class MessageAnswered(Exception):
    """A message that could not be taken was answered (or, a notification, logged): no more to
    do. Raised out of decoding so that pygls' loop drops the message."""


class ExpectedErrors(logging.Filter):
    """Drops pygls' "Unable to handle message" traceback for a message already answered."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, MessageAnswered | json.JSONDecodeError | UnicodeDecodeError)


def parse_error(exc: BaseException) -> JsonRpcException | None:
    """The reply to a frame whose body is not JSON (None for other failures)."""
    if isinstance(exc, json.JSONDecodeError | UnicodeDecodeError):
        return JsonRpcParseError(f"the message is not valid JSON: {_short(exc)}")
    return None


def _short(exc: BaseException) -> str:
    if isinstance(exc, cattrs.ClassValidationError):
        text = "; ".join(cattrs.transform_error(exc, path="message"))
    else:
        text = str(exc)
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + "…"


def _reply_id(message: Any) -> int | str | None:
    msg_id = message.get("id") if isinstance(message, dict) else getattr(message, "id", None)
    return msg_id if isinstance(msg_id, int | str) and not isinstance(msg_id, bool) else None


class FiskProtocol(LanguageServerProtocol):
    _initialize_seen = False
    cancel_hooks: dict[Any, Callable[[], object]]
    """Request id → what ``$/cancelRequest`` of it should also stop (pygls only cancels the
    outer future of a command, so a running reindex went on to the end)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cancel_hooks = {}
        loop_log = logging.getLogger("pygls.server")  # where pygls' message loop logs
        if not any(isinstance(f, ExpectedErrors) for f in loop_log.filters):
            loop_log.addFilter(ExpectedErrors())

    def _send_error(self, msg_id: int | str | None, error: JsonRpcException) -> None:
        """An error reply; ``msg_id`` None when the request's id could not be read."""
        # As a plain object: the converter drops a None id, and JSON-RPC wants "id": null.
        reply = {
            "jsonrpc": self.VERSION,
            "id": msg_id,
            "error": self._converter.unstructure(error.to_response_error()),
        }
        self._send_data(reply)

    def report_undecodable(self, exc: BaseException) -> bool:
        """Answer a frame that is not JSON with -32700 (id null); False for other errors."""
        if (refused := parse_error(exc)) is None:
            return isinstance(exc, MessageAnswered)
        log.info("refusing a message: %s", refused)
        self._send_error(None, refused)
        return True

    def _send_handler_result(self, future: Any, *, msg_id: Any) -> None:
        """An error a handler chose (InvalidParams: a bad argument, an unknown citation;
        RequestFailed: a broken store; RequestCancelled) is a reply, not a server error:
        logged as one INFO line, no traceback at ERROR, no error report."""
        if future.done() and not future.cancelled():
            exc = future.exception()
            if isinstance(exc, JsonRpcException):
                self._request_futures.pop(msg_id, None)
                log.info("request %s: error %d: %s", msg_id, exc.code, exc)
                self._send_response(msg_id, error=exc.to_response_error())
                return
        super()._send_handler_result(future, msg_id=msg_id)

    def structure_message(self, data: dict[str, Any]) -> Any:
        """pygls' decoding, without its traceback: a request whose params or id do not fit
        gets -32602 (a known method) or -32600 at once; a notification or response that does
        not fit is one warning (JSON-RPC never answers those)."""
        if "jsonrpc" not in data:
            return data  # an object inside a message (or a message without jsonrpc: refused)
        if "id" in data and not {"method", "result", "error"} & data.keys():
            # Neither a request nor a response: JSON-RPC's Invalid Request (pygls took it for
            # a stray response and sent nothing).
            refused = JsonRpcInvalidRequest("a message with an id needs a method (a request)")
            log.info("request %r: error %d: %s", _reply_id(data), refused.code, refused)
            self._send_error(_reply_id(data), refused)
            raise MessageAnswered
        try:
            return self._converter.structure(data, self._message_type(data))
        except Exception as exc:
            self._refuse_undecodable(data, exc)
            raise MessageAnswered from exc

    def _message_type(self, data: dict[str, Any]) -> Any:
        method = data.get("method")
        if "id" not in data:
            return self.get_message_type(method) or JsonRPCNotification
        if "error" in data:
            return types.ResponseErrorMessage
        if "method" in data:
            return self.get_message_type(method) or JsonRPCRequestMessage
        return self._result_types.pop(data["id"], None) or JsonRPCResponseMessage

    def _refuse_undecodable(self, data: dict[str, Any], exc: Exception) -> None:
        method = data.get("method")
        if "id" not in data or "method" not in data:
            kind = "notification" if "id" not in data else "response"
            log.warning("ignoring a %s %r that does not fit: %s", kind, method, _short(exc))
            return
        reply_id = _reply_id(data)
        refused: JsonRpcException
        if isinstance(method, str) and reply_id is not None and self.get_message_type(method):
            refused = JsonRpcInvalidParams(f"invalid params for {method}: {_short(exc)}")
        else:
            refused = JsonRpcInvalidRequest(f"not a valid JSON-RPC request: {_short(exc)}")
        log.info("request %r: error %d: %s", reply_id, refused.code, refused)
        self._send_error(reply_id, refused)

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        """pygls' cancel, without its warning for a request already answered: a cancel that
        crosses the reply is ordinary (the specification allows it), not a problem."""
        future = self._request_futures.pop(msg_id, None)
        if future is None:
            log.debug("cancel of %r: already answered", msg_id)
        elif future.cancel():
            log.debug("cancelled request %r", msg_id)
        hook = self.cancel_hooks.pop(msg_id, None)
        if hook is not None:
            hook()

    def _handle_notification(self, method_name: str, params: Any) -> None:
        """A ``$/`` notification the server does not know is ignored silently, as LSP allows
        (pygls logged a warning, which Neovim records as an error)."""
        if (
            isinstance(method_name, str)
            and method_name.startswith("$/")
            and method_name != types.CANCEL_REQUEST
            and method_name not in self.fm.builtin_features
            and method_name not in self.fm.features
        ):
            log.debug("ignoring the notification %s", method_name)
            return
        super()._handle_notification(method_name, params)

    def handle_message(self, message: Any) -> None:
        """As the specification says: a request before ``initialize`` gets -32002
        (ServerNotInitialized), one after ``shutdown`` and a second ``initialize`` get
        InvalidRequest, at once (pygls ran the first after a wait, dropped the second without a
        reply and failed the third with a traceback); so does what is not a JSON-RPC 2.0
        message (a batch, a number, no ``jsonrpc``: pygls logged a traceback)."""
        if getattr(message, "jsonrpc", None) != self.VERSION:
            refused: JsonRpcException = JsonRpcInvalidRequest(
                'not a JSON-RPC 2.0 message (a single object with "jsonrpc": "2.0")'
            )
            log.info("refusing a message: %s", refused)
            self._send_error(_reply_id(message), refused)
            return
        method = getattr(message, "method", None)
        msg_id = getattr(message, "id", None)
        if method is not None and msg_id is not None:  # a request
            if self._shutdown and method != types.EXIT:
                refused = JsonRpcInvalidRequest("the server is shut down; only exit is accepted")
                self._send_response(msg_id, None, refused.to_response_error())
                return
            if method == types.INITIALIZE and self._initialize_seen:
                refused = JsonRpcInvalidRequest("the server is already initialized")
                self._send_response(msg_id, None, refused.to_response_error())
                return
            if not self._initialize_seen:
                if method != types.INITIALIZE:
                    refused = JsonRpcServerNotInitialized(
                        f"{method} before initialize; send initialize first"
                    )
                    self._send_response(msg_id, None, refused.to_response_error())
                    return
                self._initialize_seen = True
        super().handle_message(message)

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
        if future.done() and not future.cancelled() and (exc := future.exception()) is not None:
            # Read here: the inner handler of a request cancelled meanwhile (a reindex
            # cancelled with $/cancelRequest) is never read by pygls, and asyncio logged its
            # outcome as "Task exception was never retrieved" with a traceback.
            log.debug("handler %s ended with %s: %s", msg_id, type(exc).__name__, exc)

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
