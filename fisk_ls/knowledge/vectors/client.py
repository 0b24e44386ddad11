"""Client for an OpenAI-compatible ``POST {base_url}/embeddings`` endpoint.

Why it looks the way it does (the reference client's weaknesses, §13 items 20, 21, 33, 34, 43):

* Failures are classified here, once, into the kinds of :class:`EmbeddingsError`, because the
  caller's policy depends on them: ``transient`` (refused, timeout, 5xx, 429) degrades a search
  and is retried while indexing; ``permanent`` (401, 403, 404, model not found, other 4xx) means
  the configuration is wrong, so it is raised at once and never retried or hidden.
* Index-time batches span files (the caller passes any texts), go out 64 inputs at a time with up
  to three requests in flight, and are retried with bounded exponential backoff. Only a "too
  large" answer (HTTP 413, or a 400 saying an input is too long) splits a batch in half; an outage
  or a bad key is not cured by sending smaller requests. A batch costs at most ``MAX_ATTEMPTS``
  requests (each phase of each bounded by ``timeout``) and 3.5 s of backoff, or up to 5 s per
  wait when the server sends Retry-After.
* Query-time embedding has a short timeout, no retries, and a circuit breaker, so while the server
  is down each search costs almost nothing instead of the timeout again.
* Every error reason is one short sanitised line written by us (status code, host, what to fix),
  never the server's error body, which could be huge or hostile and ends up in a tier line the
  model reads. The API key never appears in a message, a repr or a log line.
* Every vector is validated (count, index, finite, same length, non-zero) and L2-normalised.

Input problems (a blank text, more than 128 KiB, more than 2048 texts per call) raise ValueError:
they are bugs in the caller (the chunker guarantees non-blank, bounded chunks), not something the
server or the configuration can fix.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import math
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from types import TracebackType
from urllib.parse import urlsplit

import httpx

from ..errors import ConfigError, EmbeddingsError, EmbeddingsErrorKind
from .pack import normalize

log = logging.getLogger(__name__)

BATCH_SIZE = 64
"""Inputs per request while indexing."""
MAX_IN_FLIGHT = 3
"""Concurrent requests while indexing."""
MAX_INPUTS_PER_CALL = 2048
"""Texts accepted by one ``embed_documents`` call (the caller slices larger runs)."""
MAX_INPUT_BYTES = 128 * 1024
"""UTF-8 bytes of one input, prefix included."""
MAX_QUERY_BYTES = 8192
"""A query is truncated to this many UTF-8 bytes (on a character boundary) before embedding."""
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
"""A response body larger than this is abandoned as ``invalid_response``."""
MAX_ATTEMPTS = 4
"""Requests per batch while indexing: the first try plus three retries of transient failures."""
BACKOFF_BASE = 0.5
"""Seconds before the first retry; doubles each time (0.5, 1, 2)."""
RETRY_AFTER_CAP = 5.0
"""A server's Retry-After is honoured up to this many seconds."""
BREAKER_COOLDOWN = 5.0
"""Seconds queries fail fast after a transient query failure; doubles per repeated failure."""
BREAKER_COOLDOWN_MAX = 60.0
PROBE_TEXT = "dimension probe"
"""Neutral text embedded (without prefix) to learn the model's dimension."""

_REASON_LIMIT = 120
_ERROR_PEEK_BYTES = 4096
_MISSING_MODEL_PHRASES = (
    "not found",
    "does not exist",
    "unknown model",
    "model_not_found",
    "no such model",
)
_INPUT_TOO_LONG_PHRASES = ("context length", "too long", "too many tokens", "too large")


def validate_base_url(url: str) -> str:
    """Check an ``embeddings.base_url`` and return it with surrounding whitespace removed.

    The API key travels as a bearer token, so it may only go over https, or over plain http to
    this machine (``localhost`` or a loopback IP; names are not resolved). Credentials in the URL
    would leak into logs and messages, so userinfo is refused. Raises :class:`ConfigError`.
    Messages never echo the URL, which may hold a secret.
    """
    candidate = url.strip()
    if not candidate:
        raise ConfigError("embeddings.base_url must not be blank")
    if "\\" in candidate or any(ord(ch) < 33 or ord(ch) == 127 for ch in candidate):
        raise ConfigError(
            "embeddings.base_url must not contain spaces, control characters or backslashes"
        )
    try:
        parts = urlsplit(candidate)
        host = parts.hostname
        _ = parts.port  # raises ValueError for a bad port
    except ValueError:
        raise ConfigError("embeddings.base_url is not a valid URL") from None
    if "@" in parts.netloc:
        raise ConfigError(
            "embeddings.base_url must not contain a user name or password; "
            "put the API key in the variable named by embeddings.api_key_env"
        )
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not host:
        raise ConfigError(
            "embeddings.base_url must be an http(s) URL with a host, "
            "such as https://api.example.com/v1"
        )
    if parts.query or parts.fragment or "?" in candidate or "#" in candidate:
        raise ConfigError("embeddings.base_url must not contain a query string or fragment")
    if scheme == "http" and not is_loopback_host(host):
        raise ConfigError(
            f"embeddings.base_url uses plain http to {_shorten(host, 60)}; use https "
            "(plain http is allowed only to localhost or a loopback address)"
        )
    try:
        parsed_by_httpx = httpx.URL(candidate)
    except httpx.InvalidURL:
        raise ConfigError("embeddings.base_url is not a valid URL") from None
    if parsed_by_httpx.host.lower() != host.lower():
        # Two parsers disagreeing about the host is how URL-confusion attacks start.
        raise ConfigError("embeddings.base_url is ambiguous; write it as scheme://host[:port]/path")
    return candidate


def is_loopback_host(host: str) -> bool:
    """True for ``localhost`` and loopback IPs (127.0.0.0/8, ::1), without resolving names."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _Retryable(Exception):
    """A transient failure inside one request; carries the error to raise when retries run out."""

    def __init__(self, error: EmbeddingsError, retry_after: float | None = None) -> None:
        super().__init__(error.reason)
        self.error = error
        self.retry_after = retry_after


class _TooLarge(Exception):
    """HTTP 413 (or a 400 about length): the batch is too big; split it rather than fail."""


class EmbeddingsClient:
    """Embeds documents (for indexing) and queries (for search) through one HTTP server.

    Build it from plain configuration values; it performs no I/O until asked to embed. One
    ``httpx.Client`` (a connection pool) per instance; call :meth:`close` or use ``with``.
    Safe to share between threads.

    ``clock`` drives the query circuit breaker and ``sleep`` the retry backoff; tests inject
    both so they need not wait.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None,
        timeout: float = 30.0,
        query_timeout: float = 2.0,
        query_prefix: str = "",
        document_prefix: str = "",
        transport: httpx.BaseTransport | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = validate_base_url(base_url)
        if not model.strip():
            raise ConfigError("embeddings.model must not be blank")
        for name, value in (("timeout", timeout), ("query_timeout", query_timeout)):
            if not (math.isfinite(value) and value > 0):
                raise ConfigError(f"embeddings.{name} must be a positive number of seconds")
        self.model = model
        self.timeout = float(timeout)
        self.query_timeout = float(query_timeout)
        self.query_prefix = query_prefix
        self.document_prefix = document_prefix

        parts = urlsplit(self.base_url)
        self._endpoint = self.base_url.rstrip("/") + "/embeddings"
        self._where = _shorten(parts.netloc, 60)
        self._endpoint_path = _shorten(urlsplit(self._endpoint).path, 40)
        self._api_key = (api_key or "").strip() or None  # a key file's trailing newline is common
        headers: dict[str, str] = {}
        if self._api_key is not None:
            if not all(32 <= ord(ch) < 127 for ch in self._api_key):
                raise ConfigError(
                    "the embeddings API key holds characters not allowed in an HTTP header "
                    "(control characters or non-ASCII); check the variable named by "
                    "embeddings.api_key_env"
                )
            headers["Authorization"] = f"Bearer {self._api_key}"
        self._http = httpx.Client(
            headers=headers,
            transport=transport,
            timeout=self.timeout,
            follow_redirects=False,  # a redirect could carry the key elsewhere; say so instead
            trust_env=not is_loopback_host(parts.hostname or ""),  # no proxy for this machine
        )
        self._clock = clock
        self._sleep = sleep

        self._dim: int | None = None
        self._dim_lock = threading.Lock()

        self._breaker_lock = threading.Lock()
        self._breaker_reason: str | None = None  # set while the breaker is open or half-open
        self._breaker_cooldown = BREAKER_COOLDOWN
        self._breaker_until = 0.0

    # -- lifecycle ---------------------------------------------------------------------------

    def close(self) -> None:
        """Close the connection pool. The client cannot be used afterwards."""
        self._http.close()

    def __enter__(self) -> EmbeddingsClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"EmbeddingsClient(base_url={self.base_url!r}, model={self.model!r})"

    # -- public operations -------------------------------------------------------------------

    def embed_documents(
        self, texts: Sequence[str], titles: Sequence[str] | None = None
    ) -> list[list[float]]:
        """Embed chunks for the index; returns unit vectors in input order.

        ``document_prefix`` is prepended to each text, with every ``{title}`` replaced by the
        matching title (``none`` when it is blank). Raises ValueError for bad input (see the
        module docstring) and :class:`EmbeddingsError` when the server fails; transient failures
        are retried first (at most ``MAX_ATTEMPTS`` requests per batch, sleeps capped).
        """
        if titles is not None and len(titles) != len(texts):
            raise ValueError(f"{len(titles)} titles for {len(texts)} texts")
        if len(texts) > MAX_INPUTS_PER_CALL:
            raise ValueError(f"{len(texts)} texts in one call; the limit is {MAX_INPUTS_PER_CALL}")
        inputs = []
        for index, text in enumerate(texts):
            full = self._document_input(text, titles[index] if titles is not None else "")
            _check_input(index, text, full)
            inputs.append(full)
        if not inputs:
            return []
        starts = range(0, len(inputs), BATCH_SIZE)
        batches = [(start, inputs[start : start + BATCH_SIZE]) for start in starts]
        if len(batches) == 1:
            results = [self._embed_batch(inputs, 0)]
        else:
            results = self._embed_concurrently(batches)
        vectors = [vector for batch in results for vector in batch]
        self._check_dimension(vectors)
        return vectors

    def embed_query(self, text: str) -> list[float]:
        """Embed a search query: one request, ``query_timeout``, no retries.

        The query is stripped, truncated to ``MAX_QUERY_BYTES`` on a character boundary (lone
        surrogates become ``?``), and prefixed with ``query_prefix``. After a transient failure
        the circuit breaker makes further calls raise the same transient error at once for a
        cool-down (5 s, doubling to 60 s while failures repeat); any answer from the server
        closes it. Permanent errors are raised every time. Raises ValueError for a blank query.
        """
        query = _truncate_utf8(text.strip(), MAX_QUERY_BYTES).strip()
        if not query:
            raise ValueError("query is empty")
        full = self.query_prefix + query
        _check_input(0, query, full)
        self._breaker_admit()
        try:
            vectors = self._send([full], self.query_timeout)
        except _Retryable as exc:
            self._breaker_trip(exc.error.reason)
            raise exc.error from exc.__cause__
        except _TooLarge:
            self._breaker_reset()
            raise self._error(
                "permanent", f"the query is too large for the server at {self._where}"
            ) from None
        except EmbeddingsError:
            self._breaker_reset()
            raise
        self._breaker_reset()
        self._check_dimension(vectors)
        return vectors[0]

    def probe_dimension(self) -> int:
        """Return the model's vector length, embedding ``PROBE_TEXT`` once (with retries).

        Cached for the client's lifetime; a failure is never cached. Concurrent callers wait
        for one request. At query time prefer ``len(embed_query(...))``: it costs no extra
        request and has the short timeout.
        """
        with self._dim_lock:
            if self._dim is None:
                self._dim = len(self._embed_batch([PROBE_TEXT], 0)[0])
            return self._dim

    # -- batching and retries ----------------------------------------------------------------

    def _document_input(self, text: str, title: str) -> str:
        if not self.document_prefix:
            return text
        return self.document_prefix.replace("{title}", title if title.strip() else "none") + text

    def _embed_concurrently(self, batches: list[tuple[int, list[str]]]) -> list[list[list[float]]]:
        """Run batches with at most ``MAX_IN_FLIGHT`` requests at once; stop at the first error."""
        pool = ThreadPoolExecutor(max_workers=MAX_IN_FLIGHT, thread_name_prefix="fisk-embed")
        try:
            futures = [pool.submit(self._embed_batch, batch, start) for start, batch in batches]
            done, _ = wait(futures, return_when=FIRST_EXCEPTION)
            for future in futures:
                error = future.exception() if future in done else None
                if error is not None:
                    raise error
            return [future.result() for future in futures]
        finally:
            # Do not wait for batches still in flight after a failure; queued ones never start.
            pool.shutdown(wait=False, cancel_futures=True)

    def _embed_batch(self, inputs: list[str], offset: int) -> list[list[float]]:
        """Embed one batch, halving it while the server says it is too large."""
        try:
            return self._send_with_retries(inputs)
        except _TooLarge:
            if len(inputs) == 1:
                raise self._error(
                    "permanent",
                    f"input {offset} is too large for the server at {self._where}",
                ) from None
        half = len(inputs) // 2
        log.debug("embeddings: %d inputs too large for the server, splitting", len(inputs))
        return self._embed_batch(inputs[:half], offset) + self._embed_batch(
            inputs[half:], offset + half
        )

    def _send_with_retries(self, inputs: list[str]) -> list[list[float]]:
        for attempt in range(1, MAX_ATTEMPTS + 1):
            try:
                return self._send(inputs, self.timeout)
            except _Retryable as exc:
                if attempt == MAX_ATTEMPTS:
                    raise exc.error from exc.__cause__
                if exc.retry_after is not None:
                    delay = min(exc.retry_after, RETRY_AFTER_CAP)
                else:
                    delay = BACKOFF_BASE * 2 ** (attempt - 1)
                log.debug(
                    "embeddings: %s; retry %d of %d in %.1fs",
                    exc.error.reason,
                    attempt,
                    MAX_ATTEMPTS - 1,
                    delay,
                )
                self._sleep(delay)
        raise AssertionError("unreachable")

    # -- circuit breaker (queries only) ------------------------------------------------------

    def _breaker_admit(self) -> None:
        """Raise the remembered transient error while the breaker is open.

        When the cool-down has passed, one caller is let through as a trial and the others keep
        failing fast until it finishes (or until a query timeout has passed).
        """
        with self._breaker_lock:
            if self._breaker_reason is None:
                return
            now = self._clock()
            if now < self._breaker_until:
                raise self._error("transient", self._breaker_reason)
            self._breaker_until = now + self.query_timeout

    def _breaker_trip(self, reason: str) -> None:
        with self._breaker_lock:
            if self._breaker_reason is None:
                self._breaker_cooldown = BREAKER_COOLDOWN
            else:
                self._breaker_cooldown = min(self._breaker_cooldown * 2, BREAKER_COOLDOWN_MAX)
            self._breaker_reason = reason
            self._breaker_until = self._clock() + self._breaker_cooldown

    def _breaker_reset(self) -> None:
        with self._breaker_lock:
            self._breaker_reason = None
            self._breaker_cooldown = BREAKER_COOLDOWN
            self._breaker_until = 0.0

    # -- one request -------------------------------------------------------------------------

    def _send(self, inputs: list[str], timeout: float) -> list[list[float]]:
        """POST one batch; return unit vectors in input order.

        Raises _Retryable (transient), _TooLarge (413) or EmbeddingsError (anything else).
        """
        try:
            with self._http.stream(
                "POST",
                self._endpoint,
                json={"model": self.model, "input": inputs},
                timeout=timeout,
            ) as response:
                if not response.is_success:
                    peek = self._read(response, _ERROR_PEEK_BYTES, timeout, truncate=True)
                    raise self._status_error(response, peek)
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > MAX_RESPONSE_BYTES:
                    raise self._too_big()
                body = self._read(response, MAX_RESPONSE_BYTES, timeout, truncate=False)
        except httpx.TransportError as exc:
            raise self._transport_error(exc, timeout) from exc
        return self._parse(body, len(inputs))

    def _read(
        self, response: httpx.Response, limit: int, timeout: float, *, truncate: bool
    ) -> bytes:
        """Read at most ``limit`` bytes, within ``timeout`` seconds once the headers arrived."""
        deadline = time.monotonic() + timeout
        body = bytearray()
        for chunk in response.iter_bytes():
            body += chunk
            if len(body) > limit:
                if truncate:
                    return bytes(body[:limit])
                raise self._too_big()
            if time.monotonic() > deadline:
                raise _Retryable(self._timed_out(timeout))
        return bytes(body)

    def _too_big(self) -> EmbeddingsError:
        return self._error(
            "invalid_response",
            f"response from {self._where} exceeds {MAX_RESPONSE_BYTES // (1024 * 1024)} MiB",
        )

    def _timed_out(self, timeout: float) -> EmbeddingsError:
        return self._error("transient", f"timed out after {timeout:g}s waiting for {self._where}")

    def _transport_error(self, exc: httpx.TransportError, timeout: float) -> Exception:
        if isinstance(exc, httpx.TimeoutException):
            return _Retryable(self._timed_out(timeout))
        detail = str(exc).lower()
        if isinstance(exc, httpx.ConnectError):
            if "certificate" in detail or "ssl" in detail:
                return self._error(
                    "permanent",
                    f"TLS handshake with {self._where} failed; is its certificate trusted?",
                )
            if "refused" in detail:
                return _Retryable(self._error("transient", f"connection refused by {self._where}"))
            return _Retryable(self._error("transient", f"cannot connect to {self._where}"))
        if isinstance(exc, (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError)):
            return _Retryable(
                self._error("transient", f"connection to {self._where} was closed or reset")
            )
        return _Retryable(
            self._error("transient", f"network error ({type(exc).__name__}) with {self._where}")
        )

    def _status_error(self, response: httpx.Response, peek: bytes) -> Exception:
        """Map a non-2xx answer to an error. ``peek`` (a few KiB) is inspected, never quoted."""
        status = response.status_code
        where = f"HTTP {status} from {self._where}"
        if status == 413 or (status in (400, 422) and _mentions(peek, _INPUT_TOO_LONG_PHRASES)):
            return _TooLarge()
        if status in (408, 425, 429) or 500 <= status <= 599:
            retry_after = _retry_after(response.headers.get("retry-after"))
            suffix = " (rate limited)" if status == 429 else ""
            return _Retryable(self._error("transient", where + suffix), retry_after)
        if status == 401:
            if self._api_key is None:
                hint = "the server wants an API key; set embeddings.api_key_env"
            else:
                hint = "check the API key (the variable named by embeddings.api_key_env)"
            return self._error("permanent", f"{where}: {hint}")
        if status == 403:
            return self._error("permanent", f"{where}: the API key may not use this model")
        if 400 <= status <= 499 and _mentions_missing_model(peek):
            return self._missing_model(where)
        if status == 404:
            return self._error(
                "permanent",
                f"{where}: nothing at {self._endpoint_path}; check embeddings.base_url "
                "(it often ends in /v1)",
            )
        if 300 <= status <= 399:
            return self._error(
                "permanent",
                f"{where}: redirects are not followed; set the final embeddings.base_url",
            )
        if 400 <= status <= 499:
            return self._error(
                "permanent", f"{where}: request rejected; check embeddings.model and base_url"
            )
        return self._error("permanent", f"unexpected {where}")

    def _missing_model(self, where: str) -> EmbeddingsError:
        model = _shorten(self.model, 40)
        return self._error(
            "permanent", f"{where}: model {model!r} not found; check embeddings.model"
        )

    # -- response validation -----------------------------------------------------------------

    def _parse(self, body: bytes, count: int) -> list[list[float]]:
        try:
            document = json.loads(body)
        except ValueError:  # JSONDecodeError and UnicodeDecodeError
            raise self._invalid(f"response from {self._where} is not valid JSON") from None
        if not isinstance(document, dict):
            raise self._invalid(f"response from {self._where} is not a JSON object")
        error = document.get("error")
        message = error.get("message") if isinstance(error, dict) else error
        if message:
            if _mentions_missing_model(str(message).encode("utf-8", "replace")):
                raise self._missing_model(f"HTTP 200 from {self._where}")
            raise self._invalid(f"HTTP 200 from {self._where} carried an error message")
        data = document.get("data")
        if not isinstance(data, list):
            raise self._invalid(f"response from {self._where} has no data list")
        if len(data) != count:
            inputs = _plural(count, "input")
            raise self._invalid(
                f"server at {self._where} returned {len(data)} vectors for {inputs}"
            )
        vectors: list[list[float] | None] = [None] * count
        width: int | None = None
        for item in data:
            index = item.get("index") if isinstance(item, dict) else None
            if type(index) is not int or not 0 <= index < count:
                raise self._invalid(f"response from {self._where} has a missing or bad index")
            if vectors[index] is not None:
                raise self._invalid(f"response from {self._where} has a duplicate index {index}")
            raw = _finite_floats(item.get("embedding"))
            if raw is None:
                raise self._invalid(
                    f"embedding {index} from {self._where} is not a list of finite numbers"
                )
            if width is not None and len(raw) != width:
                raise self._invalid(
                    f"server at {self._where} returned vectors of lengths {width} and {len(raw)}"
                )
            width = len(raw)
            try:
                vectors[index] = normalize(raw)
            except ValueError as exc:
                raise self._invalid(f"embedding {index} from {self._where}: {exc}") from None
        return [vector for vector in vectors if vector is not None]

    def _check_dimension(self, vectors: list[list[float]]) -> None:
        """All vectors of one call share a length, equal to the probed one when known."""
        widths = sorted({len(vector) for vector in vectors})
        if len(widths) > 1:
            raise self._invalid(
                f"server at {self._where} returned vectors of lengths {widths[0]} and {widths[-1]}"
            )
        probed = self._dim
        if widths and probed is not None and widths[0] != probed:
            raise self._error(
                "dimension",
                f"server at {self._where} now returns {widths[0]}-dimensional vectors, "
                f"not the probed {probed}",
            )

    # -- messages ----------------------------------------------------------------------------

    def _invalid(self, reason: str) -> EmbeddingsError:
        return self._error("invalid_response", reason)

    def _error(self, kind: EmbeddingsErrorKind, reason: str) -> EmbeddingsError:
        """Build an error whose reason is one printable line with the API key removed."""
        if self._api_key is not None and len(self._api_key) >= 4:
            reason = reason.replace(self._api_key, "[redacted]")
        return EmbeddingsError(kind, _shorten(reason, _REASON_LIMIT))


def _check_input(index: int, text: str, full: str) -> None:
    if not text.strip():
        raise ValueError(f"input {index} is empty")
    try:
        size = len(full.encode("utf-8"))
    except UnicodeEncodeError:
        raise ValueError(f"input {index} is not valid UTF-8 (it holds a lone surrogate)") from None
    if size > MAX_INPUT_BYTES:
        raise ValueError(f"input {index} is {size} bytes; the limit is {MAX_INPUT_BYTES}")


def _truncate_utf8(text: str, limit: int) -> str:
    """Cut ``text`` to at most ``limit`` UTF-8 bytes without splitting a character."""
    encoded = text.encode("utf-8", "replace")
    if len(encoded) <= limit:
        return encoded.decode("utf-8")
    return encoded[:limit].decode("utf-8", "ignore")  # drops only a partial last character


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


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _shorten(text: str, limit: int) -> str:
    """One printable line of at most ``limit`` characters."""
    line = " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
