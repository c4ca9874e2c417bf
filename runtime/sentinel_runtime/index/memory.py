"""Giving freed memory back to the operating system after a large delete.

CPython, numpy and FAISS free what a deleted document held, but glibc's allocator keeps the
freed pages in its heaps (one arena per thread that allocated: the request threadpool has
several), so the process's RSS stays at its peak. ``malloc_trim(0)`` returns the free pages of
every arena. ``store`` and ``backends`` call :func:`release` after deletes of at least
``RELEASE_MIN_CHUNKS`` chunks (a trim costs milliseconds, not worth it for small ones);
elsewhere than glibc (musl, macOS) it does nothing. ``bench/index_memory.py`` measures it.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable

RELEASE_MIN_CHUNKS = 1000


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        return ctypes.CDLL(None).malloc_trim  # the C library already loaded in this process
    except (OSError, AttributeError):
        return None


def release() -> bool:
    """Return free heap pages to the operating system; False where glibc is not in use."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
