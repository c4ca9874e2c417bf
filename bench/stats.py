"""Timing helpers and a plain-text table printer for the benchmarks."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def timings_ms(fn: Callable[[], object], iterations: int, warmup: int = 20) -> list[float]:
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(iterations):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def median(samples: list[float]) -> float:
    return statistics.median(samples)


def p99(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def table(title: str, header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=True)]
    line = "  ".join("-" * w for w in widths)
    out = [title, line, "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)), line]
    out += ["  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows]
    out.append(line)
    return "\n".join(out)
