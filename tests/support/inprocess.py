"""The runtime's app in this process: ``create_app(Settings(...))`` behind a ``TestClient``,
with what ``support.runtime.RuntimeProcess`` offers (``metric``, ``logs``, an openai client).

Route tests use ``app_runtime``; ``served_app`` puts the same app behind a real uvicorn server
on a loopback port (in a thread) for what needs real connections (a client that goes away);
``support.runtime`` starts a real ``sentinel serve`` only for what a process alone shows
(signals, the environment read at start, the command line, its stderr). The app's lifespan
runs, so the hot-reload thread watches the policy file as in a server.

Prometheus metrics live in this process's default registry, shared by every app built here:
compare a counter with its value before the request, or use ``counted`` (the growth since
the app was built), never with zero.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import openai
import uvicorn
from fastapi.testclient import TestClient
from prometheus_client import generate_latest

from sentinel_runtime.api.app import create_app
from sentinel_runtime.observability.logs import JsonFormatter
from sentinel_runtime.settings import Settings
from support.airline import AirlineRuntime, airline_policy, airline_tools
from support.configmap import ConfigMapDir
from support.fake_llm import FakeLLM
from support.runtime import STARTUP_SECONDS, free_port, sample

BASE_URL = "http://testserver"
# Every setting at its default, so nothing in this shell's environment reaches the app...
DEFAULTS: dict[str, Any] = {name: field.default for name, field in Settings.model_fields.items()}
# ...then what `sentinel serve` turns on when neither a flag nor the environment says otherwise.
SERVE: dict[str, Any] = {"OUTPUT_GUARDRAILS_ENABLED": True, "DEMO_CORPUS": True}


class _Lines(logging.Handler):
    """Log records as the JSON lines ``sentinel serve`` writes to stderr."""

    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(JsonFormatter())
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@dataclass
class AppRuntime:
    client: httpx.Client  # a TestClient, or an HTTP client of the served app
    settings: Settings
    _lines: _Lines
    _metrics_before: str
    base_url: str = BASE_URL

    def logs(self) -> str:
        """What was logged in this process since the app was built (by other apps alive
        meanwhile and by the test's own HTTP client too)."""
        return "\n".join(self._lines.lines)

    def metrics(self) -> str:
        return self.client.get("/metrics").text

    def metric(self, name: str, **labels: str) -> float:
        """The value of one sample from the live /metrics text (0.0 when absent)."""
        return sample(self.metrics(), name, **labels)

    def counted(self, name: str, **labels: str) -> float:
        """How much a counter grew since this app was built."""
        return self.metric(name, **labels) - sample(self._metrics_before, name, **labels)

    def openai(self, api_key: str = "unused") -> openai.OpenAI:
        """The official client over this app, with no retries to hide a failure."""
        return openai_client(self, api_key)


def openai_client(runtime: AppRuntime, api_key: str = "unused") -> openai.OpenAI:
    return openai.OpenAI(
        base_url=f"{runtime.base_url}/v1",
        api_key=api_key,
        http_client=runtime.client,
        max_retries=0,
    )


@contextmanager
def _logged(settings: Mapping[str, Any] | None) -> Iterator[tuple[Settings, _Lines, str]]:
    """The settings over what an empty environment gives ``sentinel serve``, the log records
    collected meanwhile (from the root logger at ``LOG_LEVEL``, as ``sentinel serve`` writes
    them), and the metrics text before the app exists."""
    built = Settings(**{**DEFAULTS, **SERVE, **(settings or {})})
    lines = _Lines()
    logger = logging.getLogger()
    level = logger.level
    logger.setLevel(built.LOG_LEVEL.upper())
    logger.addHandler(lines)
    try:
        yield built, lines, generate_latest().decode()
    finally:
        logger.removeHandler(lines)
        logger.setLevel(level)


@contextmanager
def app_runtime(settings: Mapping[str, Any] | None = None) -> Iterator[AppRuntime]:
    """The app with ``settings`` over what an empty environment gives ``sentinel serve``
    (the shipped policy enforced, the demo corpus indexed), its lifespan run."""
    # A server answers an unhandled error with a 500; so does this client.
    with (
        _logged(settings) as (built, lines, before),
        TestClient(create_app(built), raise_server_exceptions=False) as client,
    ):
        yield AppRuntime(client, built, lines, before)


@contextmanager
def served_app(settings: Mapping[str, Any] | None = None) -> Iterator[AppRuntime]:
    """The app of ``app_runtime`` behind uvicorn (as ``sentinel serve`` runs it) on a free
    loopback port, in a thread: real connections, without starting a process."""
    with _logged(settings) as (built, lines, before):
        port = free_port()
        config = uvicorn.Config(
            create_app(built),
            host="127.0.0.1",
            port=port,
            log_config=None,
            timeout_graceful_shutdown=10,
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, name="served-app", daemon=True)
        thread.start()
        deadline = time.monotonic() + STARTUP_SECONDS
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                server.should_exit = True
                logged = "\n".join(lines.lines)
                raise RuntimeError(f"the app did not start on port {port}:\n{logged}")
            time.sleep(0.01)
        try:
            base_url = f"http://127.0.0.1:{port}"
            with httpx.Client(base_url=base_url, timeout=30) as client:
                yield AppRuntime(client, built, lines, before, base_url)
        finally:
            server.should_exit = True
            thread.join(timeout=15)


@contextmanager
def guarded_app(
    tmp_path: Path,
    policy: str,
    settings: Mapping[str, Any] | None = None,
    *,
    served: bool = False,
) -> Iterator[tuple[AppRuntime, FakeLLM]]:
    """An app enforcing ``policy`` (a hot-reloaded file) in front of a fake upstream; with
    ``served``, behind a real server (``served_app``)."""
    configmap = ConfigMapDir(tmp_path / "guardrails")
    configmap.write(policy)
    fake_llm = FakeLLM().start()
    start = served_app if served else app_runtime
    try:
        with start(
            {
                "OUTPUT_GUARDRAILS_ENABLED": True,
                "OUTPUT_GUARDRAILS_POLICY_PATH": str(configmap.policy_path),
                "LLM_INFERENCE_URL": fake_llm.base_url,
                **(settings or {}),
            }
        ) as runtime:
            yield runtime, fake_llm
    finally:
        fake_llm.stop()


@dataclass
class AirlineApp(AirlineRuntime):
    """``support.airline.AirlineRuntime`` with the app in process: requests go through its
    ``TestClient`` (``runtime`` is an :class:`AppRuntime`)."""

    @property
    def client(self) -> openai.OpenAI:
        key = self.headers.get("Authorization", "Bearer unused").removeprefix("Bearer ")
        return openai_client(self.runtime, key)

    def get(self, path: str, **params: Any) -> httpx.Response:
        return self.runtime.client.get(path, params=params, headers=dict(self.headers))

    def post(self, path: str, body: Any) -> httpx.Response:
        return self.runtime.client.post(path, json=body, headers=dict(self.headers))

    def delete(self, path: str) -> httpx.Response:
        return self.runtime.client.delete(path, headers=dict(self.headers))


@contextmanager
def airline_app(
    tmp_path: Path, api_key: str = "", edit: Callable[[str], str] | None = None
) -> Iterator[AirlineApp]:
    """The app with the airline sample's policy (changed by ``edit`` when given), its real
    tool server and a fake upstream, as ``support.airline.airline_runtime`` serves them."""
    with airline_tools() as tools:
        configmap = ConfigMapDir(tmp_path / "guardrails")
        policy = airline_policy(tools.base_url)
        configmap.write(edit(policy) if edit is not None else policy)
        fake = FakeLLM().start()
        try:
            with app_runtime(
                {
                    "OUTPUT_GUARDRAILS_ENABLED": True,
                    "OUTPUT_GUARDRAILS_POLICY_PATH": str(configmap.policy_path),
                    "LLM_INFERENCE_URL": fake.base_url,
                    "LLM_MODEL": "fake-model",
                    "RUNTIME_API_KEY": api_key,
                }
            ) as runtime:
                headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
                yield AirlineApp(runtime, fake, tools, configmap, headers)
        finally:
            fake.stop()
