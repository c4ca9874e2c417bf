"""Shared fixtures: a fake OpenAI-protocol upstream and real runtime subprocesses."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from support.configmap import ConfigMapDir
from support.fake_llm import FakeLLM
from support.runtime import RuntimeProcess, start_runtime

# Operator fixtures (need the cluster fixture of tests/cluster/conftest.py).
pytest_plugins = ["support.operator_fixtures"]


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    fake = FakeLLM().start()
    yield fake
    fake.stop()


@pytest.fixture
def configmap(tmp_path: Path) -> ConfigMapDir:
    return ConfigMapDir(tmp_path / "guardrails")


@pytest.fixture
def runtime_factory(tmp_path: Path) -> Iterator[Callable[..., RuntimeProcess]]:
    started: list[RuntimeProcess] = []

    def start(env: dict[str, str] | None = None, args: tuple[str, ...] = ()) -> RuntimeProcess:
        runtime = start_runtime(tmp_path, env, args)
        started.append(runtime)
        return runtime

    yield start
    for runtime in started:
        runtime.stop()
