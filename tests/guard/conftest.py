"""Fixtures of the guard-model tests: fake guard servers, one family each."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from support.fake_guard import FakeGuard


@pytest.fixture
def fake_guard() -> Iterator[Callable[..., FakeGuard]]:
    """Starts a fake guard server: ``fake_guard("llama-guard-3", delay=0.04)`` (any
    ``FakeGuard`` field by name); every server started is stopped after the test."""
    started: list[FakeGuard] = []

    def start(family: str, **settings: Any) -> FakeGuard:
        fake = FakeGuard(family=family, **settings).start()
        started.append(fake)
        return fake

    yield start
    for fake in started:
        fake.stop()
