"""bench/guard_cascade.py on three XSTest prompts against its fake guard at 5 ms: the table's
columns, and which configurations reached the guard. No timing is asserted."""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import guard_cascade
from sentinel_runtime.evaluation import datasets
from sentinel_runtime.guard.config import Band
from sentinel_runtime.pipeline.understand import canonical, introspection
from sentinel_runtime.pipeline.understand.introspection import IntrospectionConfig

COLUMNS = [
    "set",
    "prompts",
    "reach guard: uncertain",
    "reach guard: always",
    "off p50",
    "off p99",
    "uncertain p50",
    "uncertain p99",
    "always p50",
    "always p99",
    "uncertain added p50 / p99",
    "always added p50 / p99",
    "uncertain / off p50 / p99",
    "always / off p50 / p99",
]


def _in_band(text: str) -> bool:
    """Whether the built-in judge's severity falls in the default band (uncertain mode asks
    the guard then)."""
    settings = IntrospectionConfig()
    prompt = canonical.canonicalise(text, settings.max_prompt_chars)
    return Band().contains(introspection.introspect(prompt, settings).severity)


def three_prompts() -> tuple[list[str], int]:
    """Two XSTest prompts in the band and one outside it, or the reverse: the uncertain share
    cannot be 0 % or 100 %. Returns them and how many are in the band."""
    inside: list[str] = []
    outside: list[str] = []
    for row in datasets.load_xstest(datasets.datasets_dir()):
        (inside if _in_band(row.text) else outside).append(row.text)
        if len(inside) >= 2 and outside:
            return [inside[0], outside[0], inside[1]], 2
    assert inside and len(outside) >= 2, "XSTest has no prompts on both sides of the band"
    return [outside[0], inside[0], outside[1]], 1


def rows(table: str) -> list[dict[str, str]]:
    """The markdown table's rows, by column."""
    lines = [line for line in table.splitlines() if line.startswith("|")]
    cells = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]
    header, body = cells[0], cells[2:]
    assert header == COLUMNS
    return [dict(zip(header, row, strict=True)) for row in body]


def test_the_table_shows_who_reached_the_guard() -> None:
    prompts, in_band = three_prompts()
    table = guard_cascade.run(latency_ms=5, sets={"tiny": prompts})
    tiny, total = rows(table)
    assert tiny["set"] == "tiny" and total["set"] == "**all**"
    assert tiny["prompts"] == total["prompts"] == "3"
    assert tiny["reach guard: always"] == "100.0%"
    assert tiny["reach guard: uncertain"] == f"{in_band / 3:.1%}"
    assert "guard calls failed: 0 " in table and "rejected 0)" in table
    assert f"guard latency 5 ms; band [{Band().low:g}, {Band().high:g})" in table


def test_the_fake_guard_stops_with_its_block() -> None:
    with guard_cascade.FakeGuard(5) as guard:
        address = urlsplit(guard.url)
        socket.create_connection((address.hostname, address.port), timeout=2).close()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((address.hostname, address.port), timeout=2).close()
