"""KAITO parity's last four items (issue 35), each from KAITO v0.12's documented behaviour
(``presets/ragengine``: ``main.py``, ``tests/api/test_main.py``, ``test_chat_completions.py``,
``vector_store/base.py``, ``inference/inference.py``, ``config.py``):

- a message without content, or no user message to answer, is a 400 in the error shape of
  every other 400 (KAITO: ``messages must contain 'content' for role 'user'``);
- a document indexed without ``doc_id`` gets the SHA-256 of its text (64 hex digits), so
  indexing it again keeps one document;
- ``POST /load/{index}?path=storage/{index}`` finds what ``POST /persist/{index}`` wrote to
  KAITO's default location, in a later runtime too;
- the upstream's ``GET /v1/models`` ``max_model_len`` is the context window when
  ``LLM_CONTEXT_WINDOW`` is not set: it sizes KAITO's node budget and the request check.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from sentinel_runtime.guardrails.scanners.token_limit import offline_encoding
from support.fake_llm import FakeLLM
from support.isolated import Client, isolated_clients


@pytest.fixture
def client_for(tmp_path: Path) -> Iterator[Client]:
    """In-process runtimes (lifespan run) sharing one persist directory."""
    with isolated_clients(tmp_path / "persist") as start:
        yield start


def error(response: Any, status: int) -> dict[str, Any]:
    """The body every error answer has: a string ``detail`` and OpenAI's ``error``."""
    assert response.status_code == status, response.text
    body = response.json()
    assert isinstance(body["detail"], str)
    assert set(body["error"]) == {"message", "type", "param", "code"}
    assert body["error"]["message"] == body["detail"]
    return body


def tokens(text: str) -> int:
    return len(offline_encoding("cl100k_base").encode(text, disallowed_special=()))


# --- 1. messages KAITO refuses with a 400 -------------------------------------------------------


@pytest.mark.parametrize(
    ("messages", "param", "fragment"),
    [
        pytest.param(
            [{"role": "user"}],
            "messages.0.content",
            "messages must contain 'content' for role 'user'",
            id="user-without-content",
        ),
        pytest.param(
            [{"role": "system"}, {"role": "user", "content": "hi"}],
            "messages.0.content",
            "messages must contain 'content' for role 'system'",
            id="system-without-content",
        ),
        pytest.param(
            [{"role": "function", "content": "Function response", "name": "f"}],
            "messages",
            "at least one user message",
            id="only-a-role-no-turn-answers",
        ),
        pytest.param(
            [{"role": "nosuch", "content": "hi"}], "messages.0.role", "role", id="unknown-role"
        ),
        pytest.param([{"content": "hi"}], "messages.0.role", "role", id="no-role"),
    ],
)
def test_messages_a_turn_cannot_answer_are_a_400(
    client_for: Client, messages: list[dict[str, Any]], param: str, fragment: str
) -> None:
    api = client_for()
    for stream in (False, True):
        response = api.post(
            "/v1/chat/completions", json={"model": "m", "messages": messages, "stream": stream}
        )
        body = error(response, 400)
        assert fragment in body["detail"]
        assert body["error"]["param"] == param
        assert body["error"]["type"] == "invalid_request_error"


def test_an_assistant_message_without_content_is_no_error(client_for: Client) -> None:
    # KAITO and OpenAI: only the assistant may omit content (it may carry tool calls instead).
    messages = [
        {"role": "user", "content": "Hello"},
        {"role": "assistant"},
        {"role": "user", "content": "Can you help me?"},
    ]
    response = client_for().post("/v1/chat/completions", json={"model": "m", "messages": messages})
    assert response.status_code == 200, response.text


# --- 2. doc_id derived from the document --------------------------------------------------------


def test_a_document_without_doc_id_gets_the_sha256_of_its_text_and_is_indexed_once(
    client_for: Client,
) -> None:
    api = client_for()
    text = "This is a test document"
    expected = hashlib.sha256(text.encode("utf-8")).hexdigest()  # KAITO's generate_doc_id

    first = api.post("/index", json={"index_name": "kb", "documents": [{"text": text}]})
    assert first.status_code == 200, first.text
    assert [d["doc_id"] for d in first.json()] == [expected]
    assert len(expected) == 64

    # Again, with other metadata, and twice more in one request: still one document, with
    # the metadata of the last copy sent.
    again = api.post(
        "/index",
        json={
            "index_name": "kb",
            "documents": [
                {"text": text, "metadata": {"v": 1}},
                {"text": "Another test document"},
                {"text": text, "metadata": {"v": 2}},
            ],
        },
    )
    assert again.status_code == 200, again.text
    assert [d["doc_id"] for d in again.json()] == [
        expected,
        hashlib.sha256(b"Another test document").hexdigest(),
    ]
    listed = api.get("/indexes/kb/documents").json()
    assert listed["total_items"] == 2
    by_id = {d["doc_id"]: d for d in listed["documents"]}
    assert by_id[expected]["metadata"] == {"v": 2}

    # A client's own doc_id is kept (Sentinel's difference), beside the derived one.
    named = api.post(
        "/index", json={"index_name": "kb", "documents": [{"doc_id": "mine", "text": text}]}
    )
    assert [d["doc_id"] for d in named.json()] == ["mine"]
    assert api.get("/indexes/kb/documents").json()["total_items"] == 3


# --- 3. KAITO's default persist location --------------------------------------------------------


def test_load_from_kaitos_default_location_finds_what_persist_wrote(
    client_for: Client, tmp_path: Path
) -> None:
    first = client_for()
    docs = [{"text": "This is a test document"}, {"text": "Another test document"}]
    assert first.post("/index", json={"index_name": "kb", "documents": docs}).status_code == 200
    assert first.post("/persist/kb").status_code == 200
    # KAITO's own spelling of that place writes the same file.
    persisted = first.post("/persist/kb", params={"path": "storage/kb"})
    file = (tmp_path / "persist" / "kb.sentinel-index").resolve()
    assert persisted.json() == {"message": f"Successfully persisted index kb to {file}."}
    assert not (tmp_path / "persist" / "storage").exists()

    # Loading from there into the runtime that holds the index: it already is that file.
    same = first.post("/load/kb", params={"path": "storage/kb"})
    assert same.status_code == 200, same.text

    # A later runtime over the same directory, as in KAITO's test_load_documents.
    later = client_for()
    for path in ("storage/kb", "./storage/kb/"):
        loaded = later.post("/load/kb", params={"path": path})
        assert loaded.status_code == 200, loaded.text
        assert loaded.json() == {"message": f"Successfully loaded index kb from {file}."}
    assert later.get("/indexes").json() == ["kb"]
    listed = later.get("/indexes/kb/documents").json()
    assert listed["count"] == 2
    assert [d["text"] for d in listed["documents"]] == [d["text"] for d in docs]

    # Another index's default location is not this one's.
    other = later.post("/load/other", params={"path": "storage/kb"})
    error(other, 404)


# --- 4. the context window from the upstream's /v1/models ---------------------------------------


LONG = (
    "Refund policy in full: refunds are issued within thirty days of purchase, refunds "
    "need the receipt, refunds for sale items are store credit, refunds for damaged goods "
    "are paid in full, and refunds for subscriptions are prorated by the remaining days."
)
DOCS = [
    {"doc_id": "long", "text": LONG},
    {"doc_id": "short", "text": "Refunds are issued within thirty days."},
    {"doc_id": "mid", "text": "Refunds for sale items are issued as store credit only."},
]
QUERY, RATIO = "How are refunds issued?", 0.5


def _retrieved(api: TestClient, **extra: Any) -> list[str]:
    body = {"index_name": "kb", "query": QUERY, **extra}
    response = api.post("/retrieve", json=body)
    assert response.status_code == 200, response.text
    return [r["node_id"] for r in response.json()["results"]]


def test_max_model_len_from_v1_models_sizes_kaitos_node_budget(client_for: Client) -> None:
    # A window whose budget ((window - query - 150) * ratio) holds all but the longest node.
    window = math.ceil((tokens(LONG) - 1) / RATIO) + tokens(QUERY) + 150
    upstream = FakeLLM(max_model_len=window).start()
    try:
        api = client_for(LLM_INFERENCE_URL=upstream.base_url)
        assert api.post("/index", json={"index_name": "kb", "documents": DOCS}).status_code == 200
        assert "long#p0" in _retrieved(api)
        chosen = _retrieved(api, context_token_ratio=RATIO)
        assert "long#p0" not in chosen and chosen
    finally:
        upstream.stop()

    # An upstream that reports no max_model_len leaves KAITO's default window (64000): all fit.
    silent = FakeLLM().start()
    try:
        api = client_for(LLM_INFERENCE_URL=silent.base_url, VECTOR_DB_PERSIST_DIR="")
        assert api.post("/index", json={"index_name": "kb", "documents": DOCS}).status_code == 200
        assert "long#p0" in _retrieved(api, context_token_ratio=RATIO)
    finally:
        silent.stop()


def test_max_model_len_from_v1_models_bounds_what_a_chat_may_send(client_for: Client) -> None:
    upstream = FakeLLM(max_model_len=40).start()
    try:
        api = client_for(LLM_INFERENCE_URL=upstream.base_url)
        long = {"role": "user", "content": "Tell me about refunds. " * 20}
        body = error(api.post("/v1/chat/completions", json={"model": "m", "messages": [long]}), 400)
        assert body["error"]["code"] == "context_length_exceeded"
        assert "maximum context length is 40 tokens" in body["detail"]
        assert upstream.requests == []  # refused before anything went upstream
        short = {"role": "user", "content": "Hello"}
        answered = api.post("/v1/chat/completions", json={"model": "m", "messages": [short]})
        assert answered.status_code == 200, answered.text

        # LLM_CONTEXT_WINDOW, when set, wins over what the upstream reports.
        configured = client_for(LLM_INFERENCE_URL=upstream.base_url, LLM_CONTEXT_WINDOW=4000)
        fits = configured.post("/v1/chat/completions", json={"model": "m", "messages": [long]})
        assert fits.status_code == 200, fits.text
    finally:
        upstream.stop()
