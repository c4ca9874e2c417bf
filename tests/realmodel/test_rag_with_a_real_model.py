"""Issue 15's acceptance, behind a real model: llama.cpp's server with SmolLM2-135M.

A 135M model is wrong often; the point is that a wrong answer never passes as a cited one.
Sentinel runs in-process (the openai client over ``TestClient``); between it and the model
server sits a recording proxy, which shows what went upstream and, in one test, alters the
model's numbers to prove the support check catches them. Replies are reproducible
(``temperature: 0``, ``seed``), so the counts below are stable on one build.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import openai
import pytest
from fastapi.testclient import TestClient

from sentinel_runtime.api.app import create_app
from sentinel_runtime.settings import Settings
from support.model_server import ModelServer
from support.recording_proxy import RecordingProxy

# Our own corpus: facts no model was trained on.
DOCUMENTS = [
    {
        "doc_id": "kestrel",
        "text": "Kestrel is the internal deployment tool of the platform team. Kestrel deploys "
        "services to the staging cluster every night at 2 am.",
    },
    {
        "doc_id": "halcyon",
        "text": "Project Halcyon is the new billing system. It is led by the payments team and "
        "goes live on 14 March 2027.",
    },
    {
        "doc_id": "refunds",
        "text": "Annual subscriptions can be refunded within 30 days of purchase. Monthly "
        "subscriptions cannot be refunded.",
    },
    {
        "doc_id": "parking",
        "text": "The office car park has 120 spaces. Staff park free of charge after 6 pm.",
    },
    {
        "doc_id": "laptops",
        "text": "New employees receive a laptop on their first day. Laptops are replaced every "
        "3 years.",
    },
]
QUESTIONS = [
    "What is Kestrel?",
    "Who leads Project Halcyon?",
    "How many spaces does the office car park have?",
    "How often are laptops replaced?",
    "Within how many days can annual subscriptions be refunded?",
]
REFUND_QUESTION = QUESTIONS[-1]
# A small model reads a short context better: two chunks per question.
POLICY = "scanners: []\ngate: {topK: 2}\n"
SAMPLING = {"temperature": 0, "seed": 7, "max_tokens": 120}
_WORD = re.compile(r"[a-z]+|\d+")


@pytest.fixture(scope="module")
def proxy(model_server: ModelServer) -> Iterator[RecordingProxy]:
    recording = RecordingProxy(target=model_server.base_url).start()
    yield recording
    recording.stop()


@contextmanager
def sentinel_before(upstream: str, directory: Path) -> Iterator[openai.OpenAI]:
    """Sentinel in process over the indexed DOCUMENTS, with ``upstream`` as its model."""
    policy = directory / "guardrails.yaml"
    policy.write_text(POLICY)
    settings = Settings(
        LLM_INFERENCE_URL=upstream,
        LLM_TIMEOUT_SECONDS=120,
        LLM_CONTEXT_WINDOW=4096,
        OUTPUT_GUARDRAILS_ENABLED=True,
        OUTPUT_GUARDRAILS_POLICY_PATH=str(policy),
    )
    with TestClient(create_app(settings)) as http:
        indexed = http.post("/index", json={"index_name": "kb", "documents": DOCUMENTS})
        assert indexed.status_code == 200, indexed.text
        yield openai.OpenAI(
            base_url="http://testserver/v1", api_key="x", http_client=http, max_retries=0
        )


@pytest.fixture(scope="module")
def client(
    proxy: RecordingProxy, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[openai.OpenAI]:
    with sentinel_before(proxy.base_url, tmp_path_factory.mktemp("policy")) as sentinel:
        yield sentinel


def ask(client: openai.OpenAI, messages: list[dict[str, str]], **extra: object):
    return client.chat.completions.create(
        model="smollm2",
        messages=messages,
        extra_body={"index_name": "kb"},
        **SAMPLING,
        **extra,
    )


def words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def cited_texts(reply) -> str:
    cited = set(reply.model_extra["sentinel"]["citations"]["ids"])
    return " ".join(n["text"] for n in reply.model_extra["source_nodes"] if n["node_id"] in cited)


def test_answers_that_pass_hold_only_facts_of_the_chunks_they_cite(client) -> None:
    passed = []
    for question in QUESTIONS:
        reply = ask(client, [{"role": "user", "content": question}])
        sentinel = reply.model_extra["sentinel"]
        if sentinel["decision"] != "answer":
            assert sentinel["decision"] == "block"
            assert reply.choices[0].finish_reason == "content_filter"
            continue
        answer = re.sub(r"\[[^\]]*\]", "", reply.choices[0].message.content or "")
        evidence = cited_texts(reply)
        # Checked here independently of the support check: every number of the answer is in
        # what it cites, and most of its words are.
        numbers = {w for w in words(answer) if w.isdigit()}
        assert numbers <= words(evidence), (question, answer)
        content = {w for w in words(answer) if len(w) > 3}
        assert len(content & words(evidence)) >= len(content) / 2, (question, answer)
        assert sentinel["generation"]["structuredForm"] == "json_object"
        assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0
        passed.append(question)
    print(f"passed {len(passed)} of {len(QUESTIONS)}: {passed}")
    assert len(passed) >= 2, passed


def test_a_follow_up_reaches_the_model_with_its_history_and_retrieves_the_right_document(
    client, proxy: RecordingProxy
) -> None:
    messages = [
        {"role": "system", "content": "You answer questions about company projects."},
        {"role": "user", "content": "What is Project Halcyon?"},
        {"role": "assistant", "content": "Project Halcyon is the new billing system."},
        {"role": "user", "content": "Who leads it?"},
    ]
    reply = ask(client, messages)
    body = proxy.chat_bodies()[-1]
    assert body["messages"][1:] == messages  # after Sentinel's grounding message, all of it
    assert (body["model"], body["temperature"], body["seed"]) == ("smollm2", 0, 7)
    assert body["max_tokens"] == 120
    sentinel = reply.model_extra["sentinel"]
    assert sentinel["gate"]["followUp"] is True
    kept = [k["chunkId"] for k in sentinel["evidence"]["kept"]]
    assert kept[0] == "halcyon#p0"


def test_a_number_the_cited_chunk_does_not_hold_is_caught(client, proxy: RecordingProxy) -> None:
    honest = ask(client, [{"role": "user", "content": REFUND_QUESTION}])
    assert honest.model_extra["sentinel"]["decision"] == "answer"

    def shift_numbers(content: str) -> str:
        reply = json.loads(content, strict=False)
        answer = re.sub(r"\d+", lambda m: str(int(m.group()) + 15), reply["answer"])
        return json.dumps({**reply, "answer": answer})

    proxy.rewrite = shift_numbers
    try:
        altered = ask(client, [{"role": "user", "content": REFUND_QUESTION}])
    finally:
        proxy.rewrite = None
    sentinel = altered.model_extra["sentinel"]
    assert sentinel["decision"] == "block"
    assert altered.choices[0].finish_reason == "content_filter"
    assert sentinel["citations"]["ids"] == []
    validation = sentinel["citations"]["validation"]
    assert validation["citation_valid"] is False
    assert "45" in validation["unsupported"][0]["missing"]


@pytest.fixture(scope="module")
def streaming_client(
    model_server: ModelServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[openai.OpenAI]:
    """Sentinel straight in front of the model server: the recording proxy does not stream."""
    directory = tmp_path_factory.mktemp("stream-policy")
    with sentinel_before(model_server.base_url, directory) as sentinel:
        yield sentinel


def test_a_streamed_rag_answer_is_checked_before_it_leaves(streaming_client) -> None:
    """Behind the real server the RAG answer is streamed incrementally (inline markers, each
    sentence checked before it leaves). SmolLM2-135M usually writes no marker at all: then
    nothing it wrote may leave, only the citation block message; a cited answer streams."""
    stream = ask(
        streaming_client,
        [{"role": "user", "content": REFUND_QUESTION}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    text = "".join(
        c.choices[0].delta.content or "" for c in chunks if c.choices and c.choices[0].delta
    )
    last = next(c for c in chunks if c.choices and c.choices[0].finish_reason)
    sentinel = last.model_extra["sentinel"]
    assert sentinel["stream"]["rag"] == "incremental"
    assert sentinel["generation"]["citationMode"] == "inline"
    if sentinel["decision"] == "answer":
        assert sentinel["citations"]["ids"], "an answer that left was cited"
        assert text
    else:
        assert last.choices[0].finish_reason == "content_filter"
        assert sentinel["citations"]["validation"]["citation_valid"] is False
        assert "cited" in text.lower() and "30" not in text  # the block message, no claim
    assert chunks[-1].usage is not None and chunks[-1].usage.prompt_tokens > 0
