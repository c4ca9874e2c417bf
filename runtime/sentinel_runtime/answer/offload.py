"""Scan on the event loop or in a worker thread, by how much text there is.

A worker-thread hop costs about 0.1 ms here (``anyio.to_thread``: a queue put, a condition
notify, the result's way back), as much as the default policy's scan of a short answer;
under load the hop was an eighth of the busy time. A scan of up to ``INLINE_MAX_CHARS`` (about
a millisecond with the default policy, ``bench/scanner_overhead.py``) runs inline; a longer
one goes to a worker so one long answer does not stall every other request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import anyio.to_thread

T = TypeVar("T")

INLINE_MAX_CHARS = 4096


async def run_sized(size: int, work: Callable[..., T], *args: object) -> T:
    """``work(*args)``: inline when ``size`` (characters to scan) is small, else in a worker."""
    if size <= INLINE_MAX_CHARS:
        return work(*args)
    return await anyio.to_thread.run_sync(work, *args)
