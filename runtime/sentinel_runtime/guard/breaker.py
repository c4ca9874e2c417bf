"""A circuit breaker for one guard endpoint: stop calling a dead server, try again later.

Closed: every call goes through. ``failure_threshold`` failures in a row open it: calls are
not made (the caller applies ``guard.onError`` at once instead of waiting for a timeout on
every turn). After ``open_seconds`` one trial call is let through (half-open); its success
closes the circuit, its failure opens it for another pause.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Literal

State = Literal["closed", "open", "half_open"]


class CircuitBreaker:
    def __init__(
        self,
        *,
        failure_threshold: int,
        open_seconds: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.failure_threshold = failure_threshold
        self.open_seconds = open_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._failures = 0
        self._opened_at: float | None = None
        self._trial = False  # a half-open trial call is in flight

    @property
    def state(self) -> State:
        with self._lock:
            return self._state()

    def _state(self) -> State:
        if self._opened_at is None:
            return "closed"
        if self._clock() - self._opened_at >= self.open_seconds:
            return "half_open"
        return "open"

    def allow(self) -> bool:
        """Whether a call may be made now (in half-open, only one trial at a time)."""
        with self._lock:
            state = self._state()
            if state == "closed":
                return True
            if state == "half_open" and not self._trial:
                self._trial = True
                return True
            return False

    def succeeded(self) -> bool:
        """Record a success; True when it closed an open circuit."""
        with self._lock:
            was_open = self._opened_at is not None
            self._failures, self._opened_at, self._trial = 0, None, False
            return was_open

    def abandoned(self) -> None:
        """A call that was let through ended with neither verdict (it was cancelled): a
        half-open trial is released, so the next call may try again."""
        with self._lock:
            self._trial = False

    def failed(self) -> bool:
        """Record a failure; True when it opened the circuit (or re-opened it)."""
        with self._lock:
            self._failures += 1
            reopened = self._trial
            self._trial = False
            if reopened or (self._opened_at is None and self._failures >= self.failure_threshold):
                self._opened_at = self._clock()
                return True
            return False
