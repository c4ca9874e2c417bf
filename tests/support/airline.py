"""The airline sample (samples/airline): its files, its tool server module, its tools section,
and a real runtime serving its policy against its real tool server and a fake upstream."""

from __future__ import annotations

import copy
import importlib.util
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import openai
import yaml

from support.configmap import ConfigMapDir
from support.fake_llm import FakeLLM, tool_calls_message
from support.runtime import RuntimeProcess, start_runtime

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "airline"


def load_tool_server_module() -> Any:
    spec = importlib.util.spec_from_file_location("airline_tool_server", SAMPLE / "tool_server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def airline_section(base_url: str) -> dict[str, Any]:
    """The sample policy's tools section, its tools served at ``base_url``."""
    document = yaml.safe_load((SAMPLE / "guardrails.yaml").read_text(encoding="utf-8"))
    section = document["tools"]
    section["baseUrl"] = base_url
    return section


def airline_policy(base_url: str) -> str:
    """The sample's whole policy file (scanners and tools), its tools served at ``base_url``."""
    text = (SAMPLE / "guardrails.yaml").read_text(encoding="utf-8")
    return text.replace("http://127.0.0.1:8765", base_url)


@contextmanager
def airline_tools() -> Iterator[Any]:
    """The sample's tool server on a free loopback port, in a thread; ``.base_url`` is its
    address, ``.airline`` its data and the calls it got, ``.reset()`` restores the data."""
    server = load_tool_server_module().make_server("127.0.0.1", 0)
    host, port = server.server_address[:2]
    original = copy.deepcopy(server.airline.data)

    def reset() -> None:
        with server.airline.lock:
            server.airline.data = copy.deepcopy(original)
            server.airline.calls.clear()

    server.base_url = f"http://{host}:{port}"
    server.reset = reset
    # shutdown() waits for the next poll: 0.05 s, not the default 0.5 s.
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class AirlineRuntime:
    """``sentinel serve`` with the sample's policy (from a ConfigMap-like directory), the
    sample's tool server and a fake upstream LLM; ``headers`` go with every request."""

    runtime: RuntimeProcess
    fake: FakeLLM
    tools: Any  # the tool server of airline_tools()
    configmap: ConfigMapDir
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def client(self) -> openai.OpenAI:
        key = self.headers.get("Authorization", "Bearer unused").removeprefix("Bearer ")
        return openai.OpenAI(base_url=f"{self.runtime.base_url}/v1", api_key=key, max_retries=0)

    def reset(self) -> None:
        """The tool server's data as shipped, the upstream at its defaults."""
        self.tools.reset()
        self.fake.message = None
        self.fake.content = FakeLLM().content

    def get(self, path: str, **params: Any) -> httpx.Response:
        url = f"{self.runtime.base_url}{path}"
        return httpx.get(url, params=params, headers=dict(self.headers), timeout=30)

    def post(self, path: str, body: Any) -> httpx.Response:
        url = f"{self.runtime.base_url}{path}"
        return httpx.post(url, json=body, headers=dict(self.headers), timeout=30)

    def delete(self, path: str) -> httpx.Response:
        url = f"{self.runtime.base_url}{path}"
        return httpx.delete(url, headers=dict(self.headers), timeout=30)

    def open_session(self, *, list_bookings: bool = True) -> str:
        """The application's login: a session for u_123; with ``list_bookings`` their bookings
        are listed too (so the booking ids are established, as after the agent's first turn)."""
        session = f"s-{uuid.uuid4().hex[:8]}"
        opened = self.post(
            "/v1/governance/sessions",
            {"session_id": session, "contexts": {"current_user": "u_123"}},
        )
        assert opened.status_code == 201, opened.text
        if list_bookings:
            listed = self.post(
                "/v1/governance/query",
                {"session_id": session, "goal": "user_booking(current_user, B)"},
            )
            assert listed.json()["status"] == "proven", listed.text
        return session

    def propose(self, *calls: dict[str, Any], content: str | None = None) -> None:
        """The upstream's next answers propose these tool calls."""
        self.fake.message = tool_calls_message(*calls, content=content)

    def chat(self, text: str, session: str | None = None, **extra: Any) -> Any:
        body = {"sentinel_session": session} if session is not None else {}
        return self.client.chat.completions.create(
            model="fake-model",
            messages=[{"role": "user", "content": text}],
            extra_body=body,
            **extra,
        )

    def refunds(self) -> list[Any]:
        return [c for c in self.tools.airline.calls if c[0] == "refund_booking"]


@contextmanager
def airline_runtime(
    tmp_path: Path,
    env: Mapping[str, str] | None = None,
    api_key: str = "",
    edit: Callable[[str], str] | None = None,
) -> Iterator[AirlineRuntime]:
    """The runtime starts with the sample's policy (changed by ``edit`` when given)."""
    with airline_tools() as tools:
        fake = FakeLLM().start()
        configmap = ConfigMapDir(tmp_path / "guardrails")
        policy = airline_policy(tools.base_url)
        configmap.write(edit(policy) if edit is not None else policy)
        settings = {
            "OUTPUT_GUARDRAILS_ENABLED": "true",
            "OUTPUT_GUARDRAILS_POLICY_PATH": str(configmap.policy_path),
            "LLM_INFERENCE_URL": fake.base_url,
            "LLM_MODEL": "fake-model",
            **({"RUNTIME_API_KEY": api_key} if api_key else {}),
            **(env or {}),
        }
        try:
            runtime = start_runtime(tmp_path, settings)
        except BaseException:
            fake.stop()
            raise
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        try:
            yield AirlineRuntime(runtime, fake, tools, configmap, headers)
        finally:
            runtime.stop()
            fake.stop()
