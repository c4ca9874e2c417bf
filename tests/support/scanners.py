"""Run one scanner type the way the engine does: params validated, then built, then scan."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from sentinel_runtime.guardrails.scanners.base import ScannerType, ScanResult
from sentinel_runtime.guardrails.streaming import StreamGuard


def scanning(scanner: ScannerType) -> Callable[..., ScanResult]:
    def scan(text: str, *, rewrite: bool = True, **config: Any) -> ScanResult:
        params = scanner.params.model_validate(config)
        return scanner.build(params, rewrite).scan(text)

    return scan


# A regex that passes the load-time backtracking probe, then needs exponential time on
# SLOW_TEXT: the scanner times out (250 ms) and raises, so its failMode applies.
SLOW_PATTERN = r"(?:abc|ab(?:c))+$"
SLOW_TEXT = "abc" * 40 + "!"


def stream(guard: StreamGuard, pieces: list[str]) -> tuple[str, str | None]:
    """Feed ``pieces``; the concatenated releases and how the stream stopped."""
    out: list[str] = []
    for piece in pieces:
        release = guard.feed(piece)
        out.append(release.text)
        if release.stop:
            return "".join(out), release.stop
    release = guard.finish()
    out.append(release.text)
    return "".join(out), release.stop


def split(text: str, cuts: list[int]) -> list[str]:
    """``text`` cut at ``cuts`` (taken modulo its length), empty pieces left out."""
    bounds = [0, *sorted({c % (len(text) + 1) for c in cuts}), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds) if b > a]
