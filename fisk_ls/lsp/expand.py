"""Provider ``editor``: the client's own language model expands a question.

The server asks the client with the request ``fisk/expand`` (params ``{question, prompt}``); the
client sends ``prompt`` to its model as one user message and answers ``{text}``, the model's
whole reply (VS Code: ``vscode.lm``). The prompt, the parsing, the cache, the deadline and the
decision whether to ask at all are the core's (knowledge/expansion.py), as for a chat server.
"""

from __future__ import annotations

import uuid
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from pygls.exceptions import JsonRpcException

from ..knowledge import Expander, ExpansionFailed, one_line
from .server import FiskLanguageServer

EXPAND = "fisk/expand"
CANCEL = "$/cancelRequest"


class ClientModel:
    """An ``Ask`` that sends the prompt to the language server's client."""

    def __init__(self, ls: FiskLanguageServer) -> None:
        self.ls = ls

    def __call__(self, prompt: str, timeout: float, question: str = "") -> str:
        msg_id = f"fisk-expand-{uuid.uuid4().hex}"
        sent: Future[Future[Any]] = Future()

        def send() -> None:
            try:
                params = {"question": question, "prompt": prompt}
                sent.set_result(self.ls.protocol.send_request(EXPAND, params, msg_id=msg_id))
            except Exception as exc:  # a closed transport
                sent.set_exception(exc)

        self.ls.call(send)
        try:
            reply = sent.result(timeout).result(timeout)
        except FutureTimeout:
            self.ls.call(self.ls.protocol.notify, CANCEL, {"id": msg_id})
            raise ExpansionFailed(
                f"the editor's model did not answer within {timeout:g} s"
            ) from None
        except JsonRpcException as exc:
            raise ExpansionFailed(
                f"the editor's model: {one_line(str(exc.message), 120)}"
            ) from None
        text = reply.get("text") if isinstance(reply, dict) else getattr(reply, "text", None)
        if not isinstance(text, str):
            raise ExpansionFailed("the editor answered fisk/expand without a text")
        return text


def register(ls: FiskLanguageServer) -> None:
    """Give the projects an expander for provider ``editor``: one, kept for its timeout (its
    cache lives as long as the server)."""
    made: dict[float, Expander] = {}

    def expander(timeout: float) -> Expander:
        if timeout not in made:
            made[timeout] = Expander(ClientModel(ls), timeout)
        return made[timeout]

    ls.projects.editor_expander = expander
