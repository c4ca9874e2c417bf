"""Where the runner's retrieve-and-filter stage runs: on the event loop, or in a thread."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
import weakref
from collections.abc import Callable
from typing import Protocol, TypeVar

from sentinel_runtime.index.types import Hit, SearchFilter

T = TypeVar("T")


class Searchable(Protocol):
    """What the runner needs of an index: ``index.store.IndexStore`` (and any later store)."""

    @property
    def in_process(self) -> bool:
        """Whether a search is work in this process alone, with no network call."""
        ...

    def search(self, query: str, top_k: int = 5, flt: SearchFilter | None = None) -> list[Hit]: ...


class Placement:
    """Where stage 3 (retrieve and filter) runs: on the event loop, or in a worker thread.

    A worker-thread hop cost about 0.4 ms per request on a 100k-chunk index (the hop, and
    the GIL passed back and forth between the loop and the worker), a tenth of the request.
    The work holds the GIL in the worker too (it is Python, bar FAISS and numpy calls), so
    the loop waits up to the interpreter's switch interval either way: a store that searches
    in this process and recently took less than that runs inline. A store that calls out
    (Milvus, a remote embedder: a thread lets the loop use the wait), a store not measured
    yet, and a slow one run in a worker; every run updates the store's estimate, so a store
    that grows slow moves back to the worker.
    """

    SMOOTHING = 0.25  # weight of the latest run in the estimate

    def __init__(self, bound: float | None = None) -> None:
        self.bound = bound  # seconds; None: the interpreter's switch interval
        self._lock = threading.Lock()
        self._seconds: weakref.WeakKeyDictionary[Searchable, float] = weakref.WeakKeyDictionary()

    def inline(self, store: Searchable) -> bool:
        if not store.in_process:
            return False
        with self._lock:
            estimate = self._seconds.get(store)
        bound = sys.getswitchinterval() if self.bound is None else self.bound
        return estimate is not None and estimate < bound

    async def run(self, store: Searchable, work: Callable[[], T]) -> T:
        def measured() -> T:
            started = time.perf_counter()
            try:
                return work()
            finally:
                self._record(store, time.perf_counter() - started)

        if self.inline(store):
            return measured()
        return await asyncio.to_thread(measured)

    def _record(self, store: Searchable, seconds: float) -> None:
        if not store.in_process:
            return
        with self._lock:
            previous = self._seconds.get(store, seconds)
            self._seconds[store] = previous + self.SMOOTHING * (seconds - previous)
