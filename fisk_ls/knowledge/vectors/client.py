"""The OpenAI-compatible embeddings client, by its old import path.

The client is split by concern: ``url.py`` (where the key may go), ``openai.py`` (transport,
batching, retries), ``breaker.py`` (query-time fail-fast), ``response.py`` (classification and
validation). Import from those; this module keeps ``vectors.client.EmbeddingsClient`` working for
code written before the split.
"""

from __future__ import annotations

from .breaker import BREAKER_COOLDOWN, BREAKER_COOLDOWN_MAX
from .openai import (
    BATCH_SIZE,
    MAX_ATTEMPTS,
    MAX_INPUT_BYTES,
    MAX_INPUTS_PER_CALL,
    MAX_QUERY_BYTES,
    MAX_QUERY_RESPONSE_BYTES,
    MAX_RESPONSE_BYTES,
    PROBE_TEXT,
    EmbeddingsClient,
)
from .url import is_loopback_host, validate_base_url

__all__ = [
    "BATCH_SIZE",
    "BREAKER_COOLDOWN",
    "BREAKER_COOLDOWN_MAX",
    "MAX_ATTEMPTS",
    "MAX_INPUTS_PER_CALL",
    "MAX_INPUT_BYTES",
    "MAX_QUERY_BYTES",
    "MAX_QUERY_RESPONSE_BYTES",
    "MAX_RESPONSE_BYTES",
    "PROBE_TEXT",
    "EmbeddingsClient",
    "is_loopback_host",
    "validate_base_url",
]
