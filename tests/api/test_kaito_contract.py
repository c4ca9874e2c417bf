"""KAITO's RAG-service contract on KAITO's routes, black-box and in process.

Written from KAITO v0.12's documented API (kaito-project/kaito ``website/docs/rag-api.md``,
``presets/ragengine/models.py``, ``main.py``, the vector store's ``retrieve`` and its
``ContextSelectionProcessor``, ``metrics/prometheus_metrics.py``): document and listing shapes,
``max_node_count`` and ``context_token_ratio`` on ``/retrieve``, ``{"message"}`` answers of
``/persist``, ``/load`` and ``DELETE /indexes/{name}``, 400 with a string ``detail`` (and
OpenAI's ``error`` object) for bad input, KAITO's per-endpoint metrics and its guardrails
response metrics. Sentinel's deliberate differences are in docs/differences-from-kaito.md;
the ones a KAITO client can see are asserted here too.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from prometheus_client import REGISTRY

from sentinel_runtime.guardrails.scanners.token_limit import offline_encoding
from support.configmap import ConfigMapDir
from support.fake_llm import FakeLLM
from support.isolated import Client, isolated_clients
from support.scanners import SLOW_PATTERN, SLOW_TEXT

DOCS = [
    {
        "doc_id": "refunds",
        "text": "Refunds are issued within thirty days of purchase. Keep your receipt.",
        "metadata": {"source": "policy", "team": "billing"},
    },
    {
        "doc_id": "shipping",
        "text": "Shipping takes five business days; express shipping arrives next day.",
        "metadata": {"source": "faq", "team": "logistics"},
    },
    {"doc_id": "brand", "text": "The logo colour is a deep blue.", "metadata": {"source": "brand"}},
]


@pytest.fixture
def client_for(tmp_path: Path) -> Iterator[Client]:
    """An in-process runtime (lifespan run) with ``settings`` over the isolated defaults."""
    with isolated_clients(tmp_path / "persist") as start:
        yield start


@pytest.fixture
def api(client_for: Client) -> TestClient:
    return client_for()


def index(api: TestClient, name: str = "kb", docs: list[dict[str, Any]] = DOCS) -> list[dict]:
    response = api.post("/index", json={"index_name": name, "documents": docs})
    assert response.status_code == 200, response.text
    return response.json()


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def assert_kaito_error(response: httpx.Response, status: int, fragment: str = "") -> dict:
    """KAITO's string ``detail`` and OpenAI's ``error`` object with the same message."""
    assert response.status_code == status, response.text
    body = response.json()
    assert isinstance(body["detail"], str) and fragment in body["detail"]
    error = body["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["message"] == body["detail"] and error["type"]
    return body


# --- shapes ------------------------------------------------------------------------------------


def test_documents_carry_hash_value_and_is_truncated(api: TestClient) -> None:
    added = index(api)
    listed = api.get("/indexes/kb/documents").json()["documents"]
    updated = api.post(
        "/indexes/kb/documents",
        json={"documents": [{**added[0], "text": "Refunds take ten days now."}]},
    ).json()["updated_documents"]
    for doc in [*added, *listed, *updated]:
        assert set(doc) >= {"doc_id", "text", "metadata", "hash_value", "is_truncated"}
        assert isinstance(doc["hash_value"], str) and len(doc["hash_value"]) == 64
        assert doc["is_truncated"] is False
    # The hash follows the content: the same document hashes alike, a changed one does not.
    assert listed[0]["hash_value"] == added[0]["hash_value"]
    assert updated[0]["hash_value"] != added[0]["hash_value"]


def test_listings_count_the_page_and_the_total_items(api: TestClient) -> None:
    index(api)
    page = api.get("/indexes/kb/documents", params={"limit": 2, "offset": 1}).json()
    assert set(page) == {"documents", "count", "total_items"}
    assert (page["count"], page["total_items"]) == (2, 3)
    billing = api.get(
        "/indexes/kb/documents", params={"metadata_filter": json.dumps({"team": "billing"})}
    ).json()
    assert [d["doc_id"] for d in billing["documents"]] == ["refunds"]
    assert (billing["count"], billing["total_items"]) == (1, 1)


def test_max_text_length_truncates_and_flags_the_text(api: TestClient) -> None:
    long_text = "Refunds are issued within thirty days of purchase. " * 30  # 1,530 characters
    index(api, docs=[{"doc_id": "long", "text": long_text}, DOCS[2]])
    short = api.get("/indexes/kb/documents", params={"max_text_length": 7}).json()["documents"]
    assert [(d["text"], d["is_truncated"]) for d in short] == [
        ("Refunds", True),
        ("The log", True),
    ]
    # KAITO's default is 1000 characters per document; a shorter text is left whole.
    default = api.get("/indexes/kb/documents").json()["documents"]
    assert default[0]["text"] == long_text[:1000] and default[0]["is_truncated"] is True
    assert default[1]["text"] == DOCS[2]["text"] and default[1]["is_truncated"] is False
    whole = api.get("/indexes/kb/documents", params={"max_text_length": 5000}).json()
    assert whole["documents"][0]["text"] == long_text


def test_metadata_filter_that_is_not_json_is_a_400(api: TestClient) -> None:
    index(api)
    response = api.get("/indexes/kb/documents", params={"metadata_filter": "invalidjsonstring"})
    assert_kaito_error(response, 400, "Invalid metadata filter format")


def test_an_unknown_index_is_kaitos_404(api: TestClient) -> None:
    index(api)
    calls = [
        ("GET", "/indexes/nope/documents", None),
        ("POST", "/indexes/nope/documents", {"documents": [{"doc_id": "a", "text": "x"}]}),
        ("POST", "/indexes/nope/documents/delete", {"doc_ids": ["a"]}),
        ("DELETE", "/indexes/nope", None),
        ("POST", "/persist/nope", None),
        ("POST", "/retrieve", {"index_name": "nope", "query": "refunds"}),
    ]
    for method, path, body in calls:
        response = api.request(method, path, json=body)
        error = assert_kaito_error(response, 404, "No such index: 'nope' exists.")["error"]
        assert error["type"] == "not_found_error"


# --- /retrieve ---------------------------------------------------------------------------------


REFUND_DOCS = [
    {"doc_id": f"refund-{i}", "text": f"Refund rule {i}: refunds for order type {i} are issued."}
    for i in range(8)
]


def test_retrieve_returns_at_most_max_node_count_nodes(api: TestClient) -> None:
    index(api, docs=REFUND_DOCS)
    question = {"index_name": "kb", "query": "When are refunds issued?"}
    default = api.post("/retrieve", json=question).json()
    assert default["count"] == len(default["results"]) == 5  # KAITO's default max_node_count
    one = api.post("/retrieve", json={**question, "max_node_count": 1}).json()
    assert one["count"] == len(one["results"]) == 1
    assert one["results"][0]["node_id"] == default["results"][0]["node_id"]
    assert set(one["results"][0]) >= {"doc_id", "node_id", "text", "score", "metadata"}
    too_many = api.post("/retrieve", json={**question, "max_node_count": 301})
    assert_kaito_error(too_many, 400, "max_node_count")


@pytest.mark.parametrize(
    ("ratio", "status"),
    [
        pytest.param(0.1, 400, id="below"),
        pytest.param(0.2, 200, id="low-end"),
        pytest.param(0.8, 200, id="high-end"),
        pytest.param(0.9, 400, id="above"),
    ],
)
def test_context_token_ratio_outside_kaitos_range_is_refused(
    api: TestClient, ratio: float, status: int
) -> None:
    index(api)
    response = api.post(
        "/retrieve", json={"index_name": "kb", "query": "refunds", "context_token_ratio": ratio}
    )
    if status == 400:
        body = assert_kaito_error(
            response, 400, f"Invalid context_token_ratio: {ratio}. Must be between 0.2 and 0.8."
        )
        assert body["error"]["param"] == "context_token_ratio"
    else:
        assert response.status_code == 200, response.text


def _tokens(text: str) -> int:
    return len(offline_encoding("cl100k_base").encode(text, disallowed_special=()))


def _kaito_selection(query: str, texts: list[str], ratio: float, window: int) -> list[int]:
    """KAITO's ContextSelectionProcessor: (window - query tokens - 150) * ratio tokens,
    filled in relevance order; a node larger than what is left is skipped."""
    budget = int((window - _tokens(query) - 150) * ratio)
    if budget <= 0:
        return []
    chosen = []
    for position, text in enumerate(texts):
        if _tokens(text) <= budget:
            budget -= _tokens(text)
            chosen.append(position)
    return chosen


def test_context_token_ratio_selects_nodes_by_kaitos_token_budget(client_for: Client) -> None:
    long = (
        "Refund policy in full: refunds are issued within thirty days of purchase, refunds "
        "need the receipt, refunds for sale items are store credit, refunds for damaged goods "
        "are paid in full, and refunds for subscriptions are prorated by the remaining days."
    )
    docs = [
        {"doc_id": "long", "text": long},
        {"doc_id": "short", "text": "Refunds are issued within thirty days."},
        {"doc_id": "mid", "text": "Refunds for sale items are issued as store credit only."},
    ]
    query, ratio = "How are refunds issued?", 0.5
    # A window whose budget holds everything but the longest document.
    budget = _tokens(long) - 1
    window = math.ceil(budget / ratio) + _tokens(query) + 150
    api = client_for(LLM_CONTEXT_WINDOW=window)
    index(api, docs=docs)

    question = {"index_name": "kb", "query": query}
    everything = api.post("/retrieve", json=question).json()["results"]
    assert "long#p0" in [r["node_id"] for r in everything] and len(everything) == 3
    chosen = api.post("/retrieve", json={**question, "context_token_ratio": ratio}).json()

    expected = _kaito_selection(query, [r["text"] for r in everything], ratio, window)
    assert [r["node_id"] for r in chosen["results"]] == [everything[i]["node_id"] for i in expected]
    assert "long#p0" not in [r["node_id"] for r in chosen["results"]]
    assert chosen["count"] == len(chosen["results"]) >= 1


# --- /persist, /load, DELETE --------------------------------------------------------------------


def test_persist_load_and_delete_answer_with_a_message(api: TestClient, tmp_path: Path) -> None:
    index(api)
    persisted = api.post("/persist/kb", params={"path": "backups"})
    assert persisted.status_code == 200
    file = (tmp_path / "persist" / "backups" / "kb.sentinel-index").resolve()
    assert persisted.json() == {"message": f"Successfully persisted index kb to {file}."}
    assert file.is_file()

    loaded = api.post("/load/kb", params={"path": "backups", "overwrite": "true"})
    assert loaded.json() == {"message": f"Successfully loaded index kb from {file}."}
    assert api.get("/indexes/kb/documents").json()["total_items"] == 3

    deleted = api.delete("/indexes/kb")
    assert deleted.json() == {"message": "Successfully deleted index kb."}
    assert api.get("/indexes").json() == []


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("../outside", id="relative-escape"),
        pytest.param("/etc", id="absolute"),
        pytest.param("./custom_test_path/../../elsewhere", id="dotted-escape"),
    ],
)
def test_persist_and_load_paths_stay_inside_the_persist_dir(
    api: TestClient, tmp_path: Path, path: str
) -> None:
    # Deliberately stricter than KAITO v0.12, which writes where the client says.
    index(api)
    for endpoint in ("/persist/kb", "/load/kb"):
        response = api.post(endpoint, params={"path": path, "overwrite": "true"})
        assert_kaito_error(response, 400, "outside the persist directory")
    assert not (tmp_path / "outside").exists() and not (tmp_path / "elsewhere").exists()


# --- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "body", "param"),
    [
        pytest.param("POST", "/index", {"index_name": "kb"}, "documents", id="missing-field"),
        pytest.param(
            "POST", "/index", {"index_name": "kb", "documents": [{}]}, "documents.0.text", id="doc"
        ),
        pytest.param("POST", "/retrieve", {"index_name": "kb", "query": ""}, "query", id="empty"),
        pytest.param("GET", "/indexes/kb/documents?limit=0", None, "limit", id="query-param"),
        pytest.param("POST", "/indexes/kb/documents/delete", {"doc_ids": []}, "doc_ids", id="ids"),
        pytest.param("POST", "/load/kb?overwrite=maybe", None, "overwrite", id="bool-param"),
    ],
)
def test_validation_errors_on_kaito_routes_are_400_with_a_string_detail(
    api: TestClient, method: str, path: str, body: Any, param: str
) -> None:
    index(api)
    response = api.request(method, path, json=body)
    error = assert_kaito_error(response, 400, param)["error"]
    assert (error["type"], error["param"]) == ("invalid_request_error", param)
    assert error["code"]


def test_a_body_that_is_not_json_is_a_400(api: TestClient) -> None:
    response = api.post(
        "/index", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert_kaito_error(response, 400)


def test_sentinels_own_checks_are_400_too(api: TestClient) -> None:
    index(api)
    bad_name = api.post("/index", json={"index_name": "a b", "documents": [{"text": "x"}]})
    assert_kaito_error(bad_name, 400, "invalid index name")
    twice = api.post(
        "/index",
        json={"index_name": "kb", "documents": [{"doc_id": "a", "text": "x"}] * 2},
    )
    assert_kaito_error(twice, 400, "appears twice")


def test_other_routes_answer_bad_bodies_in_the_same_shape(api: TestClient) -> None:
    # One error shape on every route: KAITO's string detail beside OpenAI's error object.
    response = api.post("/v1/guardrails/scan", json={})
    assert_kaito_error(response, 400, "text: Field required")


# --- metrics -----------------------------------------------------------------------------------


ENDPOINTS = [
    ("rag_index", "POST", "/index", {"index_name": "kb", "documents": [{"text": "More."}]}),
    ("rag_indexes", "GET", "/indexes", None),
    ("rag_indexes_document", "GET", "/indexes/kb/documents", None),
    (
        "rag_indexes_update_document",
        "POST",
        "/indexes/kb/documents",
        {"documents": [{"doc_id": "brand", "text": "The logo is green."}]},
    ),
    (
        "rag_indexes_delete_document",
        "POST",
        "/indexes/kb/documents/delete",
        {"doc_ids": ["brand"]},
    ),
    ("rag_indexes_retrieve", "POST", "/retrieve", {"index_name": "kb", "query": "refunds"}),
    ("rag_persist", "POST", "/persist/kb", None),
    ("rag_load", "POST", "/load/kb?overwrite=true", None),
    ("rag_delete_index", "DELETE", "/indexes/kb", None),
]
FAILING = {
    "rag_index": ("POST", "/index", {"index_name": "kb"}),
    "rag_indexes_document": ("GET", "/indexes/nope/documents", None),
    "rag_indexes_update_document": ("POST", "/indexes/nope/documents", {"documents": []}),
    "rag_indexes_delete_document": ("POST", "/indexes/nope/documents/delete", {"doc_ids": ["a"]}),
    "rag_indexes_retrieve": ("POST", "/retrieve", {"index_name": "nope", "query": "q"}),
    "rag_persist": ("POST", "/persist/kb?path=/etc", None),
    "rag_load": ("POST", "/load/absent", None),
    "rag_delete_index": ("DELETE", "/indexes/nope", None),
}


@pytest.mark.parametrize(
    ("metric", "method", "path", "body"), [pytest.param(*e, id=e[0]) for e in ENDPOINTS]
)
def test_each_kaito_endpoint_counts_its_requests_and_latency(
    api: TestClient, metric: str, method: str, path: str, body: Any
) -> None:
    index(api)
    api.post("/persist/kb")  # so that /load finds a file
    counter, latency = f"{metric}_requests_total", f"{metric}_latency_seconds_count"
    before = {
        s: (sample(counter, status=s), sample(latency, status=s)) for s in ("success", "failure")
    }
    assert api.request(method, path, json=body).status_code == 200
    assert sample(counter, status="success") == before["success"][0] + 1
    assert sample(latency, status="success") == before["success"][1] + 1
    assert sample(counter, status="failure") == before["failure"][0]

    if metric in FAILING:
        method, path, body = FAILING[metric]
        assert api.request(method, path, json=body).status_code >= 400
        assert sample(counter, status="failure") == before["failure"][0] + 1
        assert sample(latency, status="failure") == before["failure"][1] + 1


GUARD_POLICY = f"""\
blockMessage: Blocked by the test policy.
scanners:
  - type: ban_substrings
    action: block
    substrings: [For Internal Use Only]
  - type: sensitive
    action: redact
  - type: regex
    action: redact
    failMode: closed
    patterns: ['{SLOW_PATTERN}']
"""


@pytest.fixture
def guarded(client_for: Client, fake_llm: FakeLLM, configmap: ConfigMapDir) -> TestClient:
    configmap.write(GUARD_POLICY)
    return client_for(
        OUTPUT_GUARDRAILS_ENABLED=True,
        OUTPUT_GUARDRAILS_POLICY_PATH=str(configmap.policy_path),
        LLM_INFERENCE_URL=fake_llm.base_url,
    )


def _actions() -> dict[str, float]:
    name = "ragengine_guardrails_response_actions_total"
    return {a: sample(name, final_action=a) for a in ("allow", "redact", "block", "fail_closed")}


def _chat(api: TestClient, *, stream: bool = False) -> httpx.Response:
    body = {"model": "fake-model", "messages": [{"role": "user", "content": "hi"}]}
    return api.post("/v1/chat/completions", json={**body, "stream": stream})


@pytest.mark.parametrize("stream", [pytest.param(False, id="whole"), pytest.param(True, id="sse")])
@pytest.mark.parametrize(
    ("content", "final", "hit"),
    [
        pytest.param("Nothing to see here.", "allow", None, id="allow"),
        pytest.param("Mail bob@example.com today.", "redact", ("sensitive", "redact"), id="redact"),
        pytest.param(
            "For Internal Use Only: plans.", "block", ("ban_substrings", "block"), id="block"
        ),
        pytest.param(f"Slow {SLOW_TEXT} text.", "fail_closed", None, id="fail-closed"),
    ],
)
def test_guardrails_response_metrics_count_each_answer_once(
    guarded: TestClient,
    *,
    fake_llm: FakeLLM,
    stream: bool,
    content: str,
    final: str,
    hit: tuple[str, str] | None,
) -> None:
    fake_llm.content = content
    hits = "ragengine_guardrails_response_scanner_hits_total"
    labels = {"scanner_type": hit[0], "action": hit[1]} if hit else {}
    before, hits_before = _actions(), sample(hits, **labels) if hit else 0.0

    response = _chat(guarded, stream=stream)
    assert response.status_code == (500 if final == "fail_closed" and not stream else 200)
    if stream:
        assert response.headers["content-type"].startswith("text/event-stream")

    after = _actions()
    assert {a: after[a] - before[a] for a in after} == {
        a: 1.0 if a == final else 0.0 for a in after
    }
    if hit:
        assert sample(hits, **labels) == hits_before + 1
