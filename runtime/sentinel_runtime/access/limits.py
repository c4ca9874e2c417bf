"""Per-key rate limits: a token bucket for requests (``rpm``) and one for tokens (``tpm``).

Pure code over a clock it is handed. A request takes one token from the key's request bucket
when it is admitted. Tokens are charged *after* the answer, from the usage the runtime counts
for it (``usage.total_tokens``, the upstream's or tiktoken's, as the response reports it):
a request is admitted while the key's token bucket is above zero, so one large answer can
leave the bucket in debt, and the key waits until the debt is repaid. Both buckets refill
continuously at their per-minute rate and hold at most one minute's worth.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from sentinel_runtime.access.keys import Principal

Limit = Literal["rpm", "tpm"]


@dataclass
class TokenBucket:
    per_minute: int
    level: float
    updated: float

    @classmethod
    def full(cls, per_minute: int, now: float) -> TokenBucket:
        return cls(per_minute, float(per_minute), now)

    @property
    def rate(self) -> float:
        return self.per_minute / 60.0

    def refill(self, now: float) -> None:
        elapsed = max(0.0, now - self.updated)
        self.level = min(float(self.per_minute), self.level + elapsed * self.rate)
        self.updated = now

    def seconds_until(self, level: float) -> float:
        """How long until the bucket holds ``level`` (0 when it already does)."""
        return max(0.0, (level - self.level) / self.rate)


@dataclass(frozen=True)
class Refusal:
    """Over a limit: which one, and how long until a request would be admitted."""

    limit: Limit
    retry_after: float

    @property
    def retry_after_seconds(self) -> int:
        """``Retry-After`` is whole seconds: rounded up, at least 1."""
        return max(1, math.ceil(self.retry_after))


@dataclass
class _Buckets:
    rpm: TokenBucket | None
    tpm: TokenBucket | None
    limits: tuple[int | None, int | None] = field(default=(None, None))


class RateLimiter:
    """Each key's buckets, by name. A key whose limits change (a keys-file edit) gets buckets
    sized to the new limits, never fuller than what it had left."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._buckets: dict[str, _Buckets] = {}
        self._lock = threading.Lock()

    def admit(self, principal: Principal) -> Refusal | None:
        """Take one request from the key's buckets, or say why not (nothing is taken)."""
        if principal.rpm is None and principal.tpm is None:
            return None
        with self._lock:
            now = self._clock()
            buckets = self._for(principal, now)
            if buckets.tpm is not None:
                buckets.tpm.refill(now)
                if buckets.tpm.level <= 0:
                    # In debt: admitted again once the level is back above zero.
                    wait = buckets.tpm.seconds_until(0.0) + 1 / buckets.tpm.rate
                    return Refusal("tpm", wait)
            if buckets.rpm is not None:
                buckets.rpm.refill(now)
                if buckets.rpm.level < 1:
                    return Refusal("rpm", buckets.rpm.seconds_until(1.0))
                buckets.rpm.level -= 1
        return None

    def charge(self, principal: Principal, tokens: int) -> None:
        """Charge an answer's tokens to the key (the bucket may go below zero)."""
        if principal.tpm is None or tokens <= 0:
            return
        with self._lock:
            now = self._clock()
            buckets = self._for(principal, now)
            if buckets.tpm is not None:
                buckets.tpm.refill(now)
                buckets.tpm.level -= tokens

    def _for(self, principal: Principal, now: float) -> _Buckets:
        limits = (principal.rpm, principal.tpm)
        current = self._buckets.get(principal.name)
        if current is not None and current.limits == limits:
            return current
        fresh = _Buckets(
            TokenBucket.full(principal.rpm, now) if principal.rpm else None,
            TokenBucket.full(principal.tpm, now) if principal.tpm else None,
            limits,
        )
        if current is not None:
            for old, new in ((current.rpm, fresh.rpm), (current.tpm, fresh.tpm)):
                if old is not None and new is not None:
                    old.refill(now)
                    new.level = min(new.level, old.level)
        self._buckets[principal.name] = fresh
        return fresh
