"""KAITO's index API against the runtime's app in process: index, list, retrieve, update,
delete, persist, load; and, against real ``sentinel serve`` processes, a restart (after a
graceful stop or a kill) that finds everything again."""

from __future__ import annotations

import hashlib
import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from support.fake_embeddings import FakeEmbeddings
from support.inprocess import AppRuntime, app_runtime
from support.runtime import RuntimeProcess

NO_DEMO = {"DEMO_CORPUS": "false"}  # only the documents each test indexes
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
    {"text": "The logo colour is a deep blue.", "metadata": {"source": "brand"}},
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AppRuntime, Path]]:
    persist = tmp_path_factory.mktemp("indexes") / "persist"
    with app_runtime({**NO_DEMO, "VECTOR_DB_PERSIST_DIR": str(persist)}) as runtime:
        yield runtime, persist


@pytest.fixture
def api(served: tuple[AppRuntime, Path]) -> httpx.Client:
    client = served[0].client
    for name in client.get("/indexes").json():
        client.delete(f"/indexes/{name}")
    return client


def index(api: httpx.Client, name: str = "kb", docs: list[dict[str, Any]] = DOCS) -> list[dict]:
    response = api.post("/index", json={"index_name": name, "documents": docs})
    assert response.status_code == 200, response.text
    return response.json()


def test_index_returns_the_documents_with_ids(api: httpx.Client) -> None:
    added = index(api)
    assert [d["doc_id"] for d in added[:2]] == ["refunds", "shipping"]
    # Without a doc_id: the SHA-256 of the text, as on KAITO.
    assert added[2]["doc_id"] == hashlib.sha256(added[2]["text"].encode()).hexdigest()
    assert added[0]["text"] == DOCS[0]["text"] and added[0]["metadata"] == DOCS[0]["metadata"]
    assert api.get("/indexes").json() == ["kb"]


def test_list_documents_pages_truncates_and_filters(api: httpx.Client) -> None:
    index(api)
    page = api.get("/indexes/kb/documents", params={"limit": 2, "offset": 1}).json()
    assert page["count"] == 2 and page["total_items"] == 3
    assert page["documents"][0]["doc_id"] == "shipping"
    short = api.get("/indexes/kb/documents", params={"max_text_length": 7}).json()
    assert short["documents"][0]["text"] == "Refunds" and short["documents"][0]["is_truncated"]
    billing = api.get(
        "/indexes/kb/documents", params={"metadata_filter": '{"team": "billing"}'}
    ).json()
    assert [d["doc_id"] for d in billing["documents"]] == ["refunds"] and billing[
        "total_items"
    ] == 1


def test_retrieve_ranks_the_relevant_chunk_first(api: httpx.Client) -> None:
    index(api)
    body = api.post(
        "/retrieve",
        json={"index_name": "kb", "query": "when are refunds issued", "max_node_count": 2},
    ).json()
    assert body["query"] == "when are refunds issued" and body["count"] == 2
    first = body["results"][0]
    assert first["doc_id"] == "refunds" and first["node_id"] == "refunds#p0"
    assert first["text"] == DOCS[0]["text"] and first["metadata"]["source"] == "policy"
    assert 0 < first["similarity"] <= 1 and first["score"] > body["results"][1]["score"]


def test_retrieve_honours_the_metadata_filter(api: httpx.Client) -> None:
    index(api)
    body = api.post(
        "/retrieve",
        json={"index_name": "kb", "query": "refund", "metadata_filter": {"team": "logistics"}},
    ).json()
    assert [r["doc_id"] for r in body["results"]] == ["shipping"]


def test_update_and_delete_documents(api: httpx.Client) -> None:
    index(api)
    result = api.post(
        "/indexes/kb/documents",
        json={
            "documents": [
                {"doc_id": "refunds", "text": DOCS[0]["text"], "metadata": DOCS[0]["metadata"]},
                {"doc_id": "shipping", "text": "Shipping is now free.", "metadata": {}},
                {"doc_id": "ghost", "text": "Never indexed."},
            ]
        },
    ).json()
    assert [d["doc_id"] for d in result["updated_documents"]] == ["shipping"]
    assert [d["doc_id"] for d in result["unchanged_documents"]] == ["refunds"]
    assert [d["doc_id"] for d in result["not_found_documents"]] == ["ghost"]
    hits = api.post("/retrieve", json={"index_name": "kb", "query": "free shipping"}).json()
    assert hits["results"][0]["text"] == "Shipping is now free."

    deleted = api.post(
        "/indexes/kb/documents/delete", json={"doc_ids": ["shipping", "ghost"]}
    ).json()
    assert deleted == {"deleted_doc_ids": ["shipping"], "not_found_doc_ids": ["ghost"]}
    assert api.get("/indexes/kb/documents").json()["total_items"] == 2


def docs(*items: dict[str, str], name: str = "kb") -> dict[str, Any]:
    return {"index_name": name, "documents": list(items)}


OUTSIDE = "outside the persist directory"
BAD_REQUESTS = {
    "list-unknown": ("GET /indexes/nope/documents", None, 404, "No such index: 'nope' exists."),
    "retrieve-unknown": ("POST /retrieve", {"index_name": "no", "query": "q"}, 404, "No such"),
    "delete-unknown": ("DELETE /indexes/nope", None, 404, "No such index"),
    "delete-docs-unknown": ("POST /indexes/no/documents/delete", {"doc_ids": ["a"]}, 404, "No"),
    "bad-name": ("POST /index", docs({"text": "x"}, name="a b"), 400, "invalid index name"),
    "blank-text": ("POST /index", docs({"text": "  "}), 400, "has no text"),
    "no-documents": ("POST /index", docs(), 400, "documents"),
    "duplicate-ids": (
        "POST /index",
        docs({"doc_id": "a", "text": "x"}, {"doc_id": "a", "text": "y"}),
        400,
        "appears twice",
    ),
    "node-count-too-big": (
        "POST /retrieve",
        {"index_name": "kb", "query": "q", "max_node_count": 301},
        400,
        "max_node_count",
    ),
    "empty-query": ("POST /retrieve", {"index_name": "kb", "query": ""}, 400, "query"),
    "filter-not-json": ("GET /indexes/kb/documents?metadata_filter={x", None, 400, "valid JSON"),
    "filter-not-object": ("GET /indexes/kb/documents?metadata_filter=[1]", None, 400, "object"),
    "persist-outside": ("POST /persist/kb?path=../../etc", None, 400, OUTSIDE),
    "load-outside": ("POST /load/kb?path=/etc&overwrite=true", None, 400, OUTSIDE),
    # Another file over a live index (loading its own file is a no-op: test_kaito_last_mile).
    "load-over-live-index": ("POST /load/kb?path=elsewhere", None, 409, "overwrite"),
    "load-missing": ("POST /load/absent", None, 404, "Path does not exist"),
}


@pytest.mark.parametrize(
    ("line", "body", "status", "detail"),
    [pytest.param(*case, id=name) for name, case in BAD_REQUESTS.items()],
)
def test_bad_requests_get_a_clear_json_detail_and_change_nothing(
    api: httpx.Client, line: str, body: Any, status: int, detail: str
) -> None:
    index(api)
    before = api.get("/indexes/kb/documents", params={"limit": 100}).json()
    method, path = line.split(" ", 1)
    response = api.request(method, path, json=body)
    assert response.status_code == status, response.text
    assert isinstance(response.json()["detail"], str) and detail in response.json()["detail"]
    assert response.json()["error"]["message"] == response.json()["detail"]
    assert api.get("/indexes/kb/documents", params={"limit": 100}).json() == before
    assert api.get("/indexes").json() == ["kb"]


def test_persist_and_load_inside_the_persist_dir(
    api: httpx.Client, served: tuple[AppRuntime, Path]
) -> None:
    _, persist = served
    index(api)
    file = (persist / "backups/monday/kb.sentinel-index").resolve()
    saved = api.post("/persist/kb", params={"path": "backups/monday"}).json()
    assert saved == {"message": f"Successfully persisted index kb to {file}."}
    assert file.is_file()
    api.post("/indexes/kb/documents/delete", json={"doc_ids": ["refunds", "shipping"]})
    loaded = api.post("/load/kb", params={"path": "backups/monday", "overwrite": "true"}).json()
    assert loaded == {"message": f"Successfully loaded index kb from {file}."}
    assert api.get("/indexes/kb/documents").json()["total_items"] == 3


def test_delete_index_removes_its_file(api: httpx.Client, served: tuple[AppRuntime, Path]) -> None:
    _, persist = served
    index(api, "gone")
    assert (persist / "gone.sentinel-index").is_file()
    assert api.delete("/indexes/gone").status_code == 200
    assert not (persist / "gone.sentinel-index").exists()
    assert api.get("/indexes").json() == []


@pytest.mark.parametrize(
    "stop",
    [
        pytest.param(lambda r: r.stop(), id="graceful"),
        pytest.param(
            lambda r: (os.kill(r.process.pid, signal.SIGKILL), r.process.wait()), id="killed"
        ),
    ],
)
def test_a_restarted_runtime_finds_its_indexes(
    runtime_factory: Callable[..., RuntimeProcess],
    app_factory: Callable[..., AppRuntime],
    tmp_path: Path,
    stop: Callable[[RuntimeProcess], object],
) -> None:
    # A real process first: what its SIGTERM or SIGKILL leaves on disk is under test; the
    # runtime that reads it back at start may be the app in process.
    env = {**NO_DEMO, "VECTOR_DB_PERSIST_DIR": str(tmp_path / "persist")}
    first = runtime_factory(env)
    with httpx.Client(base_url=first.base_url, timeout=30) as api:
        index(api)
        index(api, "second", [{"doc_id": "x", "text": "Another index entirely."}])
        api.post("/indexes/kb/documents/delete", json={"doc_ids": ["shipping"]})
    stop(first)

    api = app_factory(env).client
    assert api.get("/indexes").json() == ["kb", "second"]
    docs = api.get("/indexes/kb/documents").json()
    assert [d["doc_id"] for d in docs["documents"]][:1] == ["refunds"] and docs["total_items"] == 2
    hits = api.post("/retrieve", json={"index_name": "kb", "query": "refund receipt"}).json()
    assert hits["results"][0]["node_id"] == "refunds#p0"


def test_without_a_persist_dir_indexes_live_in_memory_and_persist_is_refused(
    app_factory: Callable[..., AppRuntime],
) -> None:
    api = app_factory(NO_DEMO).client
    index(api)
    response = api.post("/persist/kb")
    assert response.status_code == 400
    assert "VECTOR_DB_PERSIST_DIR" in response.json()["detail"]


@pytest.fixture
def embeddings() -> Iterator[FakeEmbeddings]:
    fake = FakeEmbeddings().start()
    yield fake
    fake.stop()


def test_a_remote_embedder_indexes_and_its_failure_is_a_502(
    app_factory: Callable[..., AppRuntime], embeddings: FakeEmbeddings
) -> None:
    runtime = app_factory(
        {
            **NO_DEMO,
            "EMBEDDING_TYPE": "remote",
            "EMBEDDING_URL": embeddings.base_url,
            "EMBEDDING_ACCESS_SECRET": "embed-secret",
            "EMBEDDING_MODEL_ID": "fake-embed",
        }
    )
    api = runtime.client
    index(api)
    assert embeddings.requests[0]["headers"]["Authorization"] == "Bearer embed-secret"
    hits = api.post("/retrieve", json={"index_name": "kb", "query": "refund", "top_k": 3})
    assert hits.json()["count"] == 3

    embeddings.status = 500
    response = api.post("/index", json={"index_name": "kb", "documents": [{"text": "new"}]})
    assert response.status_code == 502
    assert "answered HTTP 500" in response.json()["detail"]
    assert api.get("/indexes/kb/documents").json()["total_items"] == 3
    assert "embed-secret" not in runtime.logs()


def test_the_index_api_needs_the_runtime_api_key(
    app_factory: Callable[..., AppRuntime],
) -> None:
    api = app_factory({**NO_DEMO, "RUNTIME_API_KEY": "k3y"}).client
    assert api.get("/indexes").status_code == 401
    ok = api.get("/indexes", headers={"Authorization": "Bearer k3y"})
    assert ok.status_code == 200 and ok.json() == []
