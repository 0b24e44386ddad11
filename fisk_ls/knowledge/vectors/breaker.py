"""The query-time circuit breaker: while the embeddings server fails, searches fail fast.

After a failure the breaker opens for a cool-down (5 s, doubling to 60 s while failures
repeat), and calls raise the remembered error at once, so each search costs almost nothing
instead of the query timeout again. When the cool-down has passed, one caller is let through as
a trial (the others keep failing fast until it finishes, or until a query timeout has passed);
any good answer closes it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from ..errors import EmbeddingsError

BREAKER_COOLDOWN = 5.0
"""Seconds queries fail fast after a query failure; doubles per repeated failure."""
BREAKER_COOLDOWN_MAX = 60.0


class Breaker:
    """Thread-safe. ``clock`` is injectable so tests need not wait."""

    def __init__(self, clock: Callable[[], float], trial_window: float) -> None:
        self._clock = clock
        self._trial_window = trial_window
        self._lock = threading.Lock()
        self._error: EmbeddingsError | None = None  # set while open or half-open
        self._cooldown = BREAKER_COOLDOWN
        self._until = 0.0

    def admit(self) -> None:
        """Raise the remembered error while the breaker is open."""
        with self._lock:
            if self._error is None:
                return
            now = self._clock()
            if now < self._until:
                raise EmbeddingsError(
                    self._error.kind,
                    self._error.reason,
                    misconfigured=self._error.misconfigured,
                )
            self._until = now + self._trial_window

    def trip(self, error: EmbeddingsError) -> None:
        with self._lock:
            if self._error is None:
                self._cooldown = BREAKER_COOLDOWN
            else:
                self._cooldown = min(self._cooldown * 2, BREAKER_COOLDOWN_MAX)
            self._error = error
            self._until = self._clock() + self._cooldown

    def reset(self) -> None:
        with self._lock:
            self._error = None
            self._cooldown = BREAKER_COOLDOWN
            self._until = 0.0
