"""Client for an OpenAI-compatible ``POST {base_url}/embeddings`` endpoint.

Why it looks the way it does (the reference client's weaknesses, §13 items 20, 21, 33, 34, 43):

* Index-time batches span files (the caller passes any texts), go out 64 inputs at a time with up
  to three requests in flight, and are retried with bounded exponential backoff. Only a "too
  large" answer (HTTP 413, or a 400 saying an input is too long) splits a batch in half; an outage
  or a bad key is not cured by sending smaller requests. A batch costs at most ``MAX_ATTEMPTS``
  requests (each phase of each bounded by ``timeout``) and 3.5 s of backoff, or up to 5 s per
  wait when the server sends Retry-After.
* Query-time embedding has a short timeout, a small body limit, no retries, and a circuit
  breaker (breaker.py), so while the server is down or answering garbage each search costs
  almost nothing instead of the timeout again.
* Failures are classified and vectors validated and normalised in response.py; the URL policy
  is url.py. The API key never appears in a message, a repr or a log line.

Input problems (a blank text, more than 128 KiB, more than 2048 texts per call) raise ValueError:
they are bugs in the caller (the chunker guarantees non-blank, bounded chunks), not something the
server or the configuration can fix.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from types import TracebackType
from urllib.parse import urlsplit

import httpx

from ..errors import ConfigError, EmbeddingsError
from .breaker import Breaker
from .response import Answers, Retryable, TooLarge
from .url import is_loopback_host, shorten, validate_base_url

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
MAX_QUERY_RESPONSE_BYTES = 1024 * 1024
"""The same for a query: one vector of 8,192 numbers written out in full is under 200 KiB."""
MAX_ATTEMPTS = 4
"""Requests per batch while indexing: the first try plus three retries of transient failures."""
BACKOFF_BASE = 0.5
"""Seconds before the first retry; doubles each time (0.5, 1, 2)."""
RETRY_AFTER_CAP = 5.0
"""A server's Retry-After is honoured up to this many seconds."""
PROBE_TEXT = "dimension probe"
"""Neutral text embedded (without prefix) to learn the model's dimension."""

_ERROR_PEEK_BYTES = 4096


class EmbeddingsClient:
    """Embeds documents (for indexing) and queries (for search) through one HTTP server.

    Build it from plain configuration values; it performs no I/O until asked to embed. One
    ``httpx.Client`` (a connection pool) per instance; call :meth:`close` or use ``with``.
    Safe to share between threads. Every vector it returns has unit length.

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
        self._where = shorten(parts.netloc, 60)
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
        self._answers = Answers(
            self._where, shorten(urlsplit(self._endpoint).path, 40), model, self._api_key
        )
        self._http = httpx.Client(
            headers=headers,
            transport=transport,
            timeout=self.timeout,
            follow_redirects=False,  # a redirect could carry the key elsewhere; say so instead
            trust_env=not is_loopback_host(parts.hostname or ""),  # no proxy for this machine
        )
        self._sleep = sleep

        self._dim: int | None = None
        self._dim_lock = threading.Lock()
        self._breaker = Breaker(clock, self.query_timeout)

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
        """Embed a search query: one request, ``query_timeout``, no retries; a unit vector.

        The query is stripped, truncated to ``MAX_QUERY_BYTES`` on a character boundary (lone
        surrogates become ``?``), and prefixed with ``query_prefix``. After a failure that is
        not a misconfiguration (an outage, a timeout, a garbage answer) the circuit breaker
        makes further calls raise the same error at once for a cool-down (5 s, doubling to 60 s
        while failures repeat); a good answer closes it. Misconfigurations are raised every
        time. Raises ValueError for a blank query.
        """
        return self.embed_queries([text])[0]

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        """:meth:`embed_query` for several queries in one request (a query and its extra
        search strings): one answer of ``len(texts)`` vectors, in order."""
        queries = [_truncate_utf8(t.strip(), MAX_QUERY_BYTES).strip() for t in texts]
        if not all(queries):
            raise ValueError("query is empty")
        full = [self.query_prefix + q for q in queries]
        for i, (q, f) in enumerate(zip(queries, full, strict=True)):
            _check_input(i, q, f)
        self._breaker.admit()
        try:
            vectors = self._send(full, self.query_timeout, MAX_QUERY_RESPONSE_BYTES * len(full))
            self._check_dimension(vectors)
        except Retryable as exc:
            self._breaker.trip(exc.error)
            raise exc.error from exc.__cause__
        except TooLarge:
            error = self._answers.error(
                "permanent",
                f"the query is too large for the server at {self._where}",
                misconfigured=False,
            )
            self._breaker.trip(error)
            raise error from None
        except EmbeddingsError as exc:
            if exc.misconfigured:
                self._breaker.reset()
            else:
                self._breaker.trip(exc)
            raise
        self._breaker.reset()
        return vectors

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
        except TooLarge:
            if len(inputs) == 1:
                raise self._answers.error(
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
                return self._send(inputs, self.timeout, MAX_RESPONSE_BYTES)
            except Retryable as exc:
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

    # -- one request -------------------------------------------------------------------------

    def _send(self, inputs: list[str], timeout: float, limit: int) -> list[list[float]]:
        """POST one batch; return unit vectors in input order.

        Raises Retryable (transient), TooLarge (413) or EmbeddingsError (anything else).
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
                    raise self._answers.status_error(response.status_code, response.headers, peek)
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > limit:
                    raise self._answers.too_big(limit)
                body = self._read(response, limit, timeout, truncate=False)
        except httpx.TransportError as exc:
            raise self._answers.transport_error(exc, timeout) from exc
        except httpx.HTTPError as exc:  # e.g. a body that does not decode as its Content-Encoding
            reason = f"response from {self._where} cannot be read ({type(exc).__name__})"
            raise self._answers.invalid(reason) from None
        return self._answers.parse(body, len(inputs))

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
                raise self._answers.too_big(limit)
            if time.monotonic() > deadline:
                raise Retryable(self._answers.timed_out(timeout))
        return bytes(body)

    def _check_dimension(self, vectors: list[list[float]]) -> None:
        """All vectors of one call share a length, equal to the probed one when known."""
        widths = sorted({len(vector) for vector in vectors})
        if len(widths) > 1:
            raise self._answers.invalid(
                f"server at {self._where} returned vectors of lengths {widths[0]} and {widths[-1]}"
            )
        probed = self._dim
        if widths and probed is not None and widths[0] != probed:
            raise self._answers.error(
                "dimension",
                f"server at {self._where} now returns {widths[0]}-dimensional vectors, "
                f"not the probed {probed}",
            )


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
