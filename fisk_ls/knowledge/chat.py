"""An OpenAI-compatible chat server as a question expander's model (``POST
{base_url}/chat/completions``): Ollama, llama.cpp's server, LM Studio, vLLM, or a cloud API.

One request per question, asking for a JSON object (``response_format: json_object``); a server
that refuses that option (HTTP 400 or 422 naming it) is asked once more without it. The reply is
read up to ``MAX_REPLY_BYTES``; redirects are not followed (the key must not travel elsewhere); the
API key never appears in a message. Every failure is ``ExpansionFailed`` with one short line.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any
from urllib.parse import urlsplit

import httpx

from .config import ExpansionConfig
from .expansion import SYSTEM, ExpansionFailed
from .vectors.url import is_loopback_host, shorten

MAX_REPLY_BYTES = 1 << 20
"""A longer answer is abandoned (three search strings are a few hundred bytes)."""
_PEEK = 2048


class ChatModel:
    def __init__(self, cfg: ExpansionConfig, transport: httpx.BaseTransport | None = None) -> None:
        self.model = cfg.model
        parts = urlsplit(cfg.base_url)
        self._endpoint = cfg.base_url.rstrip("/") + "/chat/completions"
        self._where = shorten(parts.netloc, 60)
        key = (os.environ.get(cfg.api_key_env, "") if cfg.api_key_env else "").strip()
        self._bad_key = ""
        if key and not all(32 <= ord(ch) < 127 for ch in key):
            self._bad_key = (
                f"the API key in ${cfg.api_key_env} holds characters not allowed in an HTTP header"
            )
            key = ""
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._key = key
        self._http = httpx.Client(
            headers=headers,
            transport=transport,
            follow_redirects=False,
            trust_env=not is_loopback_host(parts.hostname or ""),
        )

    def __call__(self, prompt: str, timeout: float, question: str = "") -> str:
        if self._bad_key:
            raise ExpansionFailed(self._bad_key)
        deadline = time.monotonic() + timeout
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": prompt},
            ],
            "temperature": 0,
            "stream": False,
            "response_format": {"type": "json_object"},
        }
        status, text = self._post(body, deadline, timeout)
        if status in (400, 422) and "response_format" in text:
            del body["response_format"]  # a server without JSON mode: the prompt asks for JSON
            status, text = self._post(body, deadline, timeout)
        if status != 200:
            raise ExpansionFailed(self._status_reason(status, text))
        return _content(text)

    def _post(self, body: dict[str, Any], deadline: float, timeout: float) -> tuple[int, str]:
        late = f"the chat server at {self._where} did not answer within {timeout:g} s"
        left = deadline - time.monotonic()
        if left <= 0:
            raise ExpansionFailed(late)
        try:
            with self._http.stream(
                "POST", self._endpoint, json=body, timeout=httpx.Timeout(left)
            ) as response:
                data = bytearray()
                for chunk in response.iter_bytes():
                    data += chunk
                    if len(data) > MAX_REPLY_BYTES:
                        raise ExpansionFailed(
                            f"the chat server at {self._where} sent more than "
                            f"{MAX_REPLY_BYTES >> 20} MiB"
                        )
                    if time.monotonic() > deadline:
                        raise ExpansionFailed(late)
                return response.status_code, data.decode("utf-8", "replace")
        except httpx.TimeoutException:
            raise ExpansionFailed(late) from None
        except httpx.TransportError as exc:
            raise ExpansionFailed(
                f"cannot reach the chat server at {self._where} ({type(exc).__name__})"
            ) from None
        except httpx.HTTPError as exc:
            raise ExpansionFailed(
                f"the chat server at {self._where} failed ({type(exc).__name__})"
            ) from None

    def _status_reason(self, status: int, text: str) -> str:
        if 300 <= status < 400:
            return f"the chat server at {self._where} answered a redirect ({status}); not followed"
        if status in (401, 403):
            return f"the chat server at {self._where} refused the API key (HTTP {status})"
        detail = _error_message(text)
        if self._key:
            detail = detail.replace(self._key, "***")
        tail = f": {shorten(detail, 80)}" if detail else ""
        return f"the chat server at {self._where} answered HTTP {status}{tail}"

    def close(self) -> None:
        self._http.close()


def _content(text: str) -> str:
    """The reply's message text (``choices[0].message.content``: a string, or a list of text
    parts as some servers send)."""
    try:
        data = json.loads(text)
        content = data["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise ExpansionFailed("the chat server's answer is not a chat completion") from None
    if isinstance(content, list):
        content = "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    if not isinstance(content, str) or not content.strip():
        raise ExpansionFailed("the chat server's answer held no text")
    return content


def _error_message(text: str) -> str:
    """An OpenAI-style error's message, else the start of the body, on one line."""
    try:
        data = json.loads(text[:_PEEK] if len(text) > _PEEK else text)
        error = data.get("error") if isinstance(data, dict) else None
        message = error.get("message") if isinstance(error, dict) else error
        if isinstance(message, str):
            return " ".join(message.split())
    except ValueError:
        pass
    return " ".join(text[:200].split())
