"""The LLM upstream's HTTP client (``llm.http_client``) honours the proxy the environment
names, as the httpx client before it did, and connects directly to a host ``NO_PROXY`` lists."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from support.fake_llm import FakeLLM
from support.inprocess import app_runtime
from support.runtime import free_port

QUESTION = [{"role": "user", "content": "hi"}]


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    server = FakeLLM().start()
    yield server
    server.stop()


def test_requests_go_through_the_proxy_the_environment_names(
    fake: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    proxy = fake.base_url.removesuffix("/v1")
    for name in ("HTTP_PROXY", "http_proxy"):
        monkeypatch.setenv(name, proxy)
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    upstream = "http://model.example.invalid:8000/v1"  # only the proxy knows where that is
    with app_runtime({"LLM_INFERENCE_URL": f"{upstream}/chat/completions"}) as runtime:
        answer = runtime.client.post("/v1/chat/completions", json={"messages": QUESTION})
        models = runtime.client.get("/v1/models")
    assert answer.status_code == 200, answer.text
    assert answer.json()["choices"][0]["message"]["content"] == FakeLLM.content
    assert models.status_code == 200 and models.json()["data"][0]["id"] == "fake-model"
    # A proxy gets the absolute URL in the request line.
    assert [r["path"] for r in fake.requests] == [f"{upstream}/chat/completions"]
    # The first chat looks up the context window (max_model_len), then the client's listing.
    assert fake.gets == [f"{upstream}/models"] * 2


def test_a_host_no_proxy_lists_is_reached_directly(
    fake: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    dead_proxy = f"http://127.0.0.1:{free_port()}"  # nothing listens: using it would fail
    for name in ("HTTP_PROXY", "http_proxy"):
        monkeypatch.setenv(name, dead_proxy)
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(name, "127.0.0.1")
    with app_runtime({"LLM_INFERENCE_URL": f"{fake.base_url}/chat/completions"}) as runtime:
        answer = runtime.client.post("/v1/chat/completions", json={"messages": QUESTION})
    assert answer.status_code == 200, answer.text
    assert [r["path"] for r in fake.requests] == ["/v1/chat/completions"]
