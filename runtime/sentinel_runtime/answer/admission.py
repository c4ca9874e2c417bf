"""Admission control: how many turns run at once, and how long the others may wait.

A turn (a chat or completions request, ``/answer``, ``/retrieve``, ``/debug/retrieval``)
takes a slot before it starts and gives it back when it ends; a streamed answer holds its
slot until the stream ends or the client leaves. With every slot taken, a turn waits in a
first-in-first-out queue for at most ``MAX_QUEUE_SECONDS``; the queue holds at most
``MAX_INFLIGHT_TURNS`` turns. What cannot wait is shed, never left hanging:

- ``queue_full``: the queue is full (or there is none), so the turn is refused at once;
- ``queue_timeout``: the turn waited ``MAX_QUEUE_SECONDS`` and no slot freed.

The HTTP layer (``api.admission_gate``) turns :class:`ShedError` into 429 or 503 with
``Retry-After`` (docs/under-load.md says which and why). This module knows nothing of HTTP;
it runs in the app's one event loop and is not thread-safe.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import math
import time
from dataclasses import dataclass
from typing import Literal

from sentinel_runtime.observability import metrics

ShedReason = Literal["queue_full", "queue_timeout"]
SHED_REASONS: tuple[ShedReason, ...] = ("queue_full", "queue_timeout")


class ShedError(Exception):
    """A turn that was not admitted; ``retry_after`` is whole seconds (at least 1)."""

    def __init__(self, reason: ShedReason, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.retry_after = retry_after


@dataclass(frozen=True)
class Saturation:
    """What ``/ready`` reports: the turns running and waiting, against their bounds."""

    in_flight: int
    queued: int
    max_in_flight: int
    max_queued: int

    @property
    def saturated(self) -> bool:
        """Every slot is taken: the next turn waits (or, with the queue full, is shed)."""
        return self.in_flight >= self.max_in_flight

    def describe(self) -> dict[str, object]:
        return {
            "inFlight": self.in_flight,
            "queued": self.queued,
            "maxInFlight": self.max_in_flight,
            "maxQueued": self.max_queued,
            "saturated": self.saturated,
        }


class Slot:
    """One admitted turn's place; :meth:`release` gives it back (once, however often called)."""

    def __init__(self, controller: AdmissionController) -> None:
        self._controller: AdmissionController | None = controller

    def release(self) -> None:
        controller, self._controller = self._controller, None
        if controller is not None:
            controller._release()


class AdmissionController:
    def __init__(self, *, max_in_flight: int, max_queue_seconds: float) -> None:
        if max_in_flight < 1:
            raise ValueError("max_in_flight must be at least 1")
        if max_queue_seconds < 0:
            raise ValueError("max_queue_seconds cannot be negative")
        self.max_in_flight = max_in_flight
        # No wait, no queue: a turn that finds every slot taken is shed at once.
        self.max_queued = max_in_flight if max_queue_seconds > 0 else 0
        self.max_queue_seconds = max_queue_seconds
        # A client told to come back sooner than a queued turn may wait would only be shed again.
        self.retry_after = max(1, math.ceil(max_queue_seconds))
        self._in_flight = 0
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()
        metrics.TURNS_MAX_IN_FLIGHT.set(max_in_flight)
        metrics.TURNS_IN_FLIGHT.set(0)
        metrics.TURNS_QUEUED.set(0)

    def saturation(self) -> Saturation:
        return Saturation(self._in_flight, len(self._waiters), self.max_in_flight, self.max_queued)

    async def admit(self, route: str) -> Slot:
        """A slot for one turn of ``route`` (a label from a closed set: the admitted routes),
        or :class:`ShedError`. Cancelled while waiting (the client left), it takes nothing."""
        if self._in_flight < self.max_in_flight and not self._waiters:
            return self._grant(route, 0.0)
        if len(self._waiters) >= self.max_queued:
            raise self._shed(
                route,
                "queue_full",
                f"the server is at capacity ({self.max_in_flight} requests in flight, "
                f"{len(self._waiters)} waiting); retry after {self.retry_after} s",
            )
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        metrics.TURNS_QUEUED.set(len(self._waiters))
        started = time.monotonic()
        try:
            async with asyncio.timeout(self.max_queue_seconds):
                await waiter
        except TimeoutError:
            if not _granted(waiter):
                raise self._shed(
                    route,
                    "queue_timeout",
                    f"no capacity freed within {self.max_queue_seconds:g} s "
                    f"({self.max_in_flight} requests in flight); retry after "
                    f"{self.retry_after} s",
                ) from None
        except BaseException:
            if _granted(waiter):  # handed a slot just as the client left: pass it on
                self._release()
            raise
        finally:
            self._forget(waiter)
        # The releasing turn counted this one in flight when it handed its slot over.
        metrics.TURN_QUEUE_WAIT.observe(time.monotonic() - started)
        return Slot(self)

    def _grant(self, route: str, waited: float) -> Slot:
        self._in_flight += 1
        metrics.TURNS_IN_FLIGHT.set(self._in_flight)
        metrics.TURN_QUEUE_WAIT.observe(waited)
        return Slot(self)

    def _release(self) -> None:
        # Hand the slot to the longest waiter still waiting, or free it.
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                metrics.TURNS_QUEUED.set(len(self._waiters))
                return
        self._in_flight -= 1
        metrics.TURNS_IN_FLIGHT.set(self._in_flight)

    def _forget(self, waiter: asyncio.Future[None]) -> None:
        # A waiter handed a slot was taken off the queue already: searching the deque for it
        # would cost a scan of the whole queue for every turn served from it.
        if _granted(waiter):
            return
        if not waiter.done():
            waiter.cancel()
        with contextlib.suppress(ValueError):
            self._waiters.remove(waiter)
        metrics.TURNS_QUEUED.set(len(self._waiters))

    def _shed(self, route: str, reason: ShedReason, message: str) -> ShedError:
        metrics.TURNS_SHED.labels(route, reason).inc()
        return ShedError(reason, message, retry_after=self.retry_after)


def _granted(waiter: asyncio.Future[None]) -> bool:
    return waiter.done() and not waiter.cancelled()
