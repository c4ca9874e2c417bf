"""Short scans run on the event loop; long ones in a worker thread."""

from __future__ import annotations

import threading

import anyio
import pytest

from sentinel_runtime.answer.offload import INLINE_MAX_CHARS, run_sized


def test_small_work_runs_inline_and_large_work_in_a_worker() -> None:
    async def where(size: int) -> int:
        return await run_sized(size, threading.get_ident)

    loop_thread = threading.get_ident()
    assert anyio.run(where, INLINE_MAX_CHARS) == loop_thread
    assert anyio.run(where, INLINE_MAX_CHARS + 1) != loop_thread


def test_errors_surface_the_same_way_inline_and_in_a_worker() -> None:
    def fail(message: str) -> None:
        raise ValueError(message)

    for size in (1, INLINE_MAX_CHARS * 2):
        with pytest.raises(ValueError, match=r"^boom$"):
            anyio.run(run_sized, size, fail, "boom")
