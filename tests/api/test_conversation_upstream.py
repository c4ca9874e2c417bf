"""A RAG chat behind an OpenAI-compatible upstream (issue 15): the client's conversation and
parameters reach the model, citations are asked for in a form the upstream supports, claims
are checked against what they cite, and usage comes back.

The app runs in-process (``TestClient``); the upstream is the fake OpenAI-protocol peer over
real HTTP, set up to behave like llama.cpp where the test says so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from sentinel_runtime.api.app import create_app
from sentinel_runtime.settings import Settings
from support.configmap import ConfigMapDir
from support.fake_llm import FakeLLM, cite_chunk_with

QUESTION = "How long is the refund window for annual plans?"
DOCUMENTS = [
    {
        "text": "Annual plans can be refunded within 30 days of purchase. Refund requests go "
        "to the billing desk.",
        "metadata": {"source": "handbook"},
    },
    {
        "text": "Monthly plans are not refundable, but they can be cancelled at any time.",
        "metadata": {"source": "handbook"},
    },
    {
        "text": "The office canteen opens at 8 am and serves vegetarian lunches.",
        "metadata": {"source": "wiki"},
    },
]


@pytest.fixture
def start(fake_llm: FakeLLM, configmap: ConfigMapDir) -> Iterator[Callable[..., TestClient]]:
    clients: list[TestClient] = []

    def started(policy: str = "scanners: []\n", **settings: Any) -> TestClient:
        configmap.write(policy)
        values = {
            "LLM_INFERENCE_URL": fake_llm.base_url,
            "OUTPUT_GUARDRAILS_ENABLED": True,
            "OUTPUT_GUARDRAILS_POLICY_PATH": str(configmap.policy_path),
            **settings,
        }
        client = TestClient(create_app(Settings(**values)))
        client.__enter__()
        clients.append(client)
        response = client.post("/index", json={"index_name": "kb", "documents": DOCUMENTS})
        assert response.status_code == 200, response.text
        return client

    yield started
    for client in clients:
        client.__exit__(None, None, None)


def chunk_ids(payload: dict[str, Any]) -> list[str]:
    """The chunk ids Sentinel showed the model (structured mode labels chunks by id)."""
    return re.findall(r"^\[([^\]\n]+#p\d+)\]$", payload["messages"][0]["content"], re.MULTILINE)


def chunk_numbered(payload: dict[str, Any], needle: str) -> int:
    """The marker number of the chunk holding ``needle`` (inline mode numbers chunks)."""
    parts = re.split(r"^\[(\d+)\]\n", payload["messages"][0]["content"], flags=re.MULTILINE)
    for number, text in zip(parts[1::2], parts[2::2], strict=True):
        if needle in text:
            return int(number)
    raise AssertionError(f"no chunk holds {needle!r}")


def chat(client: TestClient, messages: list[dict[str, str]], **body: Any) -> dict[str, Any]:
    response = client.post(
        "/v1/chat/completions",
        json={"model": "client-model", "messages": messages, "index_name": "kb", **body},
    )
    assert response.status_code == 200, response.text
    return response.json()


def forwarded(fake_llm: FakeLLM) -> list[dict[str, Any]]:
    """The bodies of the chat completions the upstream received, oldest first."""
    return [r["json"] for r in fake_llm.requests if r["path"].endswith("/chat/completions")]


def test_the_clients_conversation_and_parameters_reach_the_model(start, fake_llm) -> None:
    client = start()
    fake_llm.responder = cite_chunk_with("Monthly plans", "Monthly plans are not refundable.")
    messages = [
        {"role": "system", "content": "You are the billing assistant. Be brief."},
        {"role": "user", "content": "Can annual plans be refunded?"},
        {"role": "assistant", "content": "Yes, within 30 days of purchase."},
        {"role": "user", "content": "and for monthly plans?"},
    ]
    reply = chat(
        client,
        messages,
        temperature=0.5,
        top_p=0.9,
        max_tokens=50,
        stop=["\n\n"],
        seed=7,
    )
    body = forwarded(fake_llm)[-1]
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "system", "user", "assistant", "user"]
    assert "ONLY the numbered context" in body["messages"][0]["content"]
    assert body["messages"][1]["content"] == "You are the billing assistant. Be brief."
    assert body["messages"][2:] == messages[1:]
    assert body["model"] == "client-model"
    assert (body["temperature"], body["top_p"], body["max_tokens"]) == (0.5, 0.9, 50)
    assert (body["stop"], body["seed"], body["stream"]) == (["\n\n"], 7, False)
    assert body["response_format"]["type"] == "json_schema"
    # The follow-up was looked up with the turn before it: the monthly-plan chunk was found.
    sentinel = reply["sentinel"]
    assert sentinel["gate"]["followUp"] is True
    assert sentinel["gate"]["followUpQuery"].startswith("Can annual plans be refunded?")
    assert sentinel["decision"] == "answer"
    assert reply["choices"][0]["message"]["content"] == "Monthly plans are not refundable."
    assert sentinel["generation"]["conversation"] == {"turns": 2, "trimmed": 0}
    assert reply["usage"] == {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    assert reply["model"] == "fake-model"  # what the upstream says it ran


def test_penalties_and_the_newer_token_limit_reach_the_model(start, fake_llm) -> None:
    """Current OpenAI clients send ``max_completion_tokens``; the model gets it as the
    ``max_tokens`` every upstream reads, with the penalties."""
    client = start()
    fake_llm.responder = cite_chunk_with("Monthly plans", "Monthly plans are not refundable.")
    chat(
        client,
        [{"role": "user", "content": "Can monthly plans be refunded?"}],
        max_completion_tokens=40,
        presence_penalty=0.5,
        frequency_penalty=-0.5,
    )
    body = forwarded(fake_llm)[-1]
    assert body["max_tokens"] == 40
    assert (body["presence_penalty"], body["frequency_penalty"]) == (0.5, -0.5)


def test_llm_model_pins_the_model(start, fake_llm) -> None:
    client = start(LLM_MODEL="pinned-model")
    fake_llm.responder = cite_chunk_with("Annual plans", "Within 30 days.")
    chat(client, [{"role": "user", "content": QUESTION}])
    assert forwarded(fake_llm)[-1]["model"] == "pinned-model"


def test_history_is_trimmed_oldest_first_to_the_context_window(start, fake_llm) -> None:
    client = start(LLM_CONTEXT_WINDOW=600)
    fake_llm.responder = cite_chunk_with("Annual plans", "Within 30 days.")
    old_turns = [
        {"role": role, "content": f"Turn {n}: " + "filler words " * 40}
        for n, role in enumerate(["user", "assistant"] * 4)
    ]
    reply = chat(client, [*old_turns, {"role": "user", "content": QUESTION}])
    body = forwarded(fake_llm)[-1]
    kept = [m["content"] for m in body["messages"][1:-1]]
    assert kept and len(kept) < len(old_turns)
    assert kept == [t["content"] for t in old_turns[-len(kept) :]]  # the newest ones
    assert body["messages"][1]["role"] == "user"
    trimmed = reply["sentinel"]["generation"]["conversation"]
    assert trimmed == {"turns": 8, "trimmed": 8 - len(kept)}


def test_structured_output_falls_back_to_the_form_the_upstream_accepts(start, fake_llm) -> None:
    client = start()
    fake_llm.refused_formats = ("json_schema",)  # llama.cpp: 500 for OpenAI's form
    fake_llm.responder = cite_chunk_with("Annual plans", "Within 30 days of purchase.")
    first = chat(client, [{"role": "user", "content": QUESTION}])
    tried = [b["response_format"]["type"] for b in forwarded(fake_llm)]
    assert tried == ["json_schema", "json_object"]
    schema = forwarded(fake_llm)[-1]["response_format"]["schema"]
    assert set(schema["properties"]["citations"]["items"]["enum"]) <= set(
        chunk_ids(forwarded(fake_llm)[-1])
    )
    assert first["sentinel"]["generation"]["structuredForm"] == "json_object"
    # Remembered: the next question goes straight to the form that worked.
    chat(client, [{"role": "user", "content": "Where do refund requests go?"}])
    assert [b["response_format"]["type"] for b in forwarded(fake_llm)][2:] == ["json_object"]


def test_without_structured_output_the_model_cites_with_inline_markers(start, fake_llm) -> None:
    client = start()
    fake_llm.refused_formats = ("json_schema", "json_object")

    def prose(payload: dict[str, Any], index: int) -> str:
        number = chunk_numbered(payload, "Annual plans")
        return f"Annual plans can be refunded within 30 days of purchase [{number}]."

    fake_llm.responder = prose
    reply = chat(client, [{"role": "user", "content": QUESTION}])
    assert "response_format" not in forwarded(fake_llm)[-1]
    content = reply["choices"][0]["message"]["content"]
    cited = reply["sentinel"]["citations"]["ids"]
    assert reply["sentinel"]["decision"] == "answer" and len(cited) == 1
    assert content == f"Annual plans can be refunded within 30 days of purchase [{cited[0]}]."
    assert reply["sentinel"]["generation"]["citationMode"] == "inline"
    assert cited[0] in {n["node_id"] for n in reply["source_nodes"]}


def test_a_number_its_chunk_does_not_hold_is_caught(start, fake_llm) -> None:
    client = start()
    fake_llm.responder = cite_chunk_with("Annual plans", "Annual plans: within 20 days.")
    reply = chat(client, [{"role": "user", "content": QUESTION}])
    assert reply["sentinel"]["decision"] == "block"
    assert reply["choices"][0]["finish_reason"] == "content_filter"
    validation = reply["sentinel"]["citations"]["validation"]
    assert validation["unsupported"][0]["missing"] == ["20"]


def test_a_prose_answer_without_citations_can_be_annotated(start, fake_llm) -> None:
    client = start("scanners: []\ncitations: {uncited: annotate, mode: inline}\n")
    fake_llm.content = "Annual plans can be refunded within 30 days."
    reply = chat(client, [{"role": "user", "content": QUESTION}])
    assert reply["choices"][0]["message"]["content"] == fake_llm.content
    assert reply["sentinel"]["decision"] == "answer"
    assert reply["sentinel"]["citations"]["validation"]["uncited"] is True
    assert reply["source_nodes"]  # the evidence is there for the client to show


def test_best_of_n_makes_separate_calls_when_the_upstream_ignores_n(start, fake_llm) -> None:
    client = start("scanners: []\ngeneration: {bestOfN: 3}\n")
    fake_llm.ignores_n = True
    fake_llm.responder = cite_chunk_with("Annual plans", "Within 30 days of purchase.")
    reply = chat(client, [{"role": "user", "content": QUESTION}])
    assert len(forwarded(fake_llm)) == 3
    assert len(reply["sentinel"]["bestOfN"]) == 3


def test_source_nodes_is_null_without_an_index(start, fake_llm) -> None:
    client = start()
    response = client.post(
        "/v1/chat/completions",
        json={"model": "m", "messages": [{"role": "user", "content": "Say hello."}]},
    )
    assert response.status_code == 200
    assert "source_nodes" in response.json() and response.json()["source_nodes"] is None


def test_a_streamed_rag_answer_arrives_in_pieces_with_usage(start, fake_llm) -> None:
    # Structured citations: the answer is generated whole, then sent in pieces.
    client = start("scanners: []\ncitations:\n  mode: structured\n")
    answer = "Annual plans can be refunded within 30 days of purchase, via the billing desk."
    fake_llm.responder = cite_chunk_with("Annual plans", answer)
    with client.stream(
        "POST",
        "/v1/chat/completions",
        json={
            "model": "m",
            "messages": [{"role": "user", "content": QUESTION}],
            "index_name": "kb",
            "stream": True,
            "stream_options": {"include_usage": True},
        },
    ) as response:
        events = [
            json.loads(line.removeprefix("data: "))
            for line in response.iter_lines()
            if line.startswith("data: {")
        ]
    texts = [e["choices"][0]["delta"].get("content") for e in events if e.get("choices")]
    pieces = [t for t in texts if t]
    assert len(pieces) > 3 and "".join(pieces) == answer
    assert events[-1]["usage"] == {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    assert events[-2]["sentinel"]["decision"] == "answer"


def _latency_count(client: TestClient, status: str) -> float:
    text = client.get("/metrics").text
    pattern = rf'^rag_chat_latency_seconds_count{{status="{status}"}} (\S+)$'
    found = re.search(pattern, text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def test_kaitos_chat_latency_histogram_counts_answers_and_streams(start, fake_llm) -> None:
    client = start()
    fake_llm.responder = cite_chunk_with("Annual plans", "Within 30 days of purchase.")
    before = _latency_count(client, "success")
    chat(client, [{"role": "user", "content": QUESTION}])
    with client.stream(
        "POST",
        "/v1/chat/completions",
        json={"model": "m", "messages": [{"role": "user", "content": QUESTION}], "stream": True},
    ) as response:
        assert response.status_code == 200
        list(response.iter_lines())
    assert _latency_count(client, "success") == before + 2
