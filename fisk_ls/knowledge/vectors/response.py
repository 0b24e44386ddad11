"""Reading an embeddings server's answer: failures classified once, vectors validated.

* Failures become the kinds of :class:`EmbeddingsError`, because the caller's policy depends on
  them: ``transient`` (refused, timeout, 5xx, 429) is retried while indexing and degrades a
  search; ``permanent`` (401, 403, 404, model not found, other 4xx) means the configuration is
  wrong (``misconfigured``), so it is raised at once and never retried or hidden. A redirect, a
  TLS failure and other answers a search cannot use are ``permanent`` but not misconfigurations:
  they fail an index run and degrade a search. ``invalid_response`` (bad JSON, an HTML page,
  NaN/inf/zero vectors, missing or duplicate indexes, an oversized body) does the same.
* Every error reason is one short sanitised line written by us (status code, host, what to
  fix), never the server's error body, which could be huge or hostile and ends up in a tier
  line the model reads. The API key never appears in a reason.
* Every vector is validated (count, index, finite, same length, non-zero) and L2-normalised
  here, once: callers get unit vectors (vectors/space.py).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

import httpx

from ..errors import EmbeddingsError, EmbeddingsErrorKind
from .pack import normalize
from .url import shorten

REASON_LIMIT = 120
_MISSING_MODEL_PHRASES = (
    "not found",
    "does not exist",
    "unknown model",
    "model_not_found",
    "no such model",
)
_INPUT_TOO_LONG_PHRASES = ("context length", "too long", "too many tokens", "too large")


class Retryable(Exception):
    """A transient failure inside one request; carries the error to raise when retries run out."""

    def __init__(self, error: EmbeddingsError, retry_after: float | None = None) -> None:
        super().__init__(error.reason)
        self.error = error
        self.retry_after = retry_after


class TooLarge(Exception):
    """HTTP 413 (or a 400 about length): the batch is too big; split it rather than fail."""


class Answers:
    """Builds the errors and parses the bodies of one server (its host, model and key)."""

    def __init__(self, where: str, endpoint_path: str, model: str, api_key: str | None) -> None:
        self.where = where
        self.endpoint_path = endpoint_path
        self.model = model
        self.api_key = api_key

    # -- messages ----------------------------------------------------------------------------

    def error(
        self, kind: EmbeddingsErrorKind, reason: str, *, misconfigured: bool | None = None
    ) -> EmbeddingsError:
        """An error whose reason is one printable line with the API key removed."""
        if self.api_key is not None and len(self.api_key) >= 4:
            reason = reason.replace(self.api_key, "[redacted]")
        return EmbeddingsError(kind, shorten(reason, REASON_LIMIT), misconfigured=misconfigured)

    def invalid(self, reason: str) -> EmbeddingsError:
        return self.error("invalid_response", reason)

    def too_big(self, limit: int) -> EmbeddingsError:
        size = f"{limit // (1024 * 1024)} MiB" if limit >= 1024 * 1024 else f"{limit // 1024} KiB"
        return self.invalid(f"response from {self.where} exceeds {size}")

    def timed_out(self, timeout: float) -> EmbeddingsError:
        return self.error("transient", f"timed out after {timeout:g}s waiting for {self.where}")

    def missing_model(self, where: str) -> EmbeddingsError:
        model = shorten(self.model, 40)
        return self.error(
            "permanent", f"{where}: model {model!r} not found; check embeddings.model"
        )

    # -- failures ----------------------------------------------------------------------------

    def transport_error(self, exc: httpx.TransportError, timeout: float) -> Exception:
        if isinstance(exc, httpx.TimeoutException):
            return Retryable(self.timed_out(timeout))
        detail = str(exc).lower()
        if isinstance(exc, httpx.ConnectError):
            if "certificate" in detail or "ssl" in detail:
                return self.error(
                    "permanent",
                    f"TLS handshake with {self.where} failed; is its certificate trusted?",
                    misconfigured=False,
                )
            if "refused" in detail:
                return Retryable(self.error("transient", f"connection refused by {self.where}"))
            return Retryable(self.error("transient", f"cannot connect to {self.where}"))
        if isinstance(exc, (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError)):
            return Retryable(
                self.error("transient", f"connection to {self.where} was closed or reset")
            )
        return Retryable(
            self.error("transient", f"network error ({type(exc).__name__}) with {self.where}")
        )

    def status_error(self, status: int, headers: httpx.Headers, peek: bytes) -> Exception:
        """Map a non-2xx answer to an error. ``peek`` (a few KiB) is inspected, never quoted."""
        where = f"HTTP {status} from {self.where}"
        if status == 413 or (status in (400, 422) and _mentions(peek, _INPUT_TOO_LONG_PHRASES)):
            return TooLarge()
        if status in (408, 425, 429) or 500 <= status <= 599:
            retry_after = _retry_after(headers.get("retry-after"))
            suffix = " (rate limited)" if status == 429 else ""
            return Retryable(self.error("transient", where + suffix), retry_after)
        if status == 401:
            if self.api_key is None:
                hint = "the server wants an API key; set embeddings.api_key_env"
            else:
                hint = "check the API key (the variable named by embeddings.api_key_env)"
            return self.error("permanent", f"{where}: {hint}")
        if status == 403:
            return self.error("permanent", f"{where}: the API key may not use this model")
        if 400 <= status <= 499 and _mentions_missing_model(peek):
            return self.missing_model(where)
        if status == 404:
            return self.error(
                "permanent",
                f"{where}: nothing at {self.endpoint_path}; check embeddings.base_url "
                "(it often ends in /v1)",
            )
        if 300 <= status <= 399:
            return self.error(
                "permanent",
                f"{where}: redirects are not followed; set the final embeddings.base_url",
                misconfigured=False,  # a proxy or a login page in the way: a search degrades
            )
        if 400 <= status <= 499:
            return self.error(
                "permanent", f"{where}: request rejected; check embeddings.model and base_url"
            )
        return self.error("permanent", f"unexpected {where}", misconfigured=False)

    # -- bodies ------------------------------------------------------------------------------

    def parse(self, body: bytes, count: int) -> list[list[float]]:
        """Unit vectors in input order from a 200 body, or ``invalid_response``."""
        try:
            document = json.loads(body)
        except (ValueError, RecursionError):  # JSONDecodeError, UnicodeDecodeError, deep nesting
            raise self.invalid(f"response from {self.where} is not valid JSON") from None
        if not isinstance(document, dict):
            raise self.invalid(f"response from {self.where} is not a JSON object")
        error = document.get("error")
        message = error.get("message") if isinstance(error, dict) else error
        if message:
            if _mentions_missing_model(str(message).encode("utf-8", "replace")):
                raise self.missing_model(f"HTTP 200 from {self.where}")
            raise self.invalid(f"HTTP 200 from {self.where} carried an error message")
        data = document.get("data")
        if not isinstance(data, list):
            raise self.invalid(f"response from {self.where} has no data list")
        if len(data) != count:
            inputs = f"{count} input" if count == 1 else f"{count} inputs"
            raise self.invalid(f"server at {self.where} returned {len(data)} vectors for {inputs}")
        vectors: list[list[float] | None] = [None] * count
        width: int | None = None
        for item in data:
            index = item.get("index") if isinstance(item, dict) else None
            if type(index) is not int or not 0 <= index < count:
                raise self.invalid(f"response from {self.where} has a missing or bad index")
            if vectors[index] is not None:
                raise self.invalid(f"response from {self.where} has a duplicate index {index}")
            raw = _finite_floats(item.get("embedding"))
            if raw is None:
                raise self.invalid(
                    f"embedding {index} from {self.where} is not a list of finite numbers"
                )
            if width is not None and len(raw) != width:
                raise self.invalid(
                    f"server at {self.where} returned vectors of lengths {width} and {len(raw)}"
                )
            width = len(raw)
            try:
                vectors[index] = normalize(raw)
            except ValueError as exc:
                raise self.invalid(f"embedding {index} from {self.where}: {exc}") from None
        return [vector for vector in vectors if vector is not None]


def _finite_floats(value: object) -> list[float] | None:
    """The embedding as floats, or None unless it is a non-empty list of finite numbers."""
    if not isinstance(value, list) or not value:
        return None
    floats = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, (int, float)):
            return None
        try:
            number = float(item)
        except OverflowError:  # an integer too large for a float
            return None
        if not math.isfinite(number):
            return None
        floats.append(number)
    return floats


def _mentions_missing_model(peek: bytes) -> bool:
    return _mentions(peek, ("model",)) and _mentions(peek, _MISSING_MODEL_PHRASES)


def _mentions(peek: bytes, phrases: Sequence[str]) -> bool:
    text = peek.decode("utf-8", "replace").lower()
    return any(phrase in text for phrase in phrases)


def _retry_after(value: str | None) -> float | None:
    """Seconds from a delta-seconds Retry-After header; None when absent or an HTTP date."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return max(0.0, seconds) if math.isfinite(seconds) else None
