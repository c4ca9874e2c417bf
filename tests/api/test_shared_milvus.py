"""Two runtimes, one Milvus: documents indexed through one runtime answer questions asked of
the other, as two replicas of one RAGEngine would (issue 8's done-when). The runtimes are two
apps in this process; Milvus is a real server."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack

import pytest

from support.inprocess import AppRuntime, app_runtime
from support.milvus import REASON, MilvusServer, binary

pytestmark = pytest.mark.skipif(binary() is None, reason=REASON)

QUESTION = "How long do customers have to request a refund?"
POLICY_TEXT = (
    "Customers may request a full refund within 45 days of purchase when the item is unused. "
    "Refunds are paid to the original payment method within five business days."
)


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[AppRuntime]]:
    root = tmp_path_factory.mktemp("shared-milvus")
    milvus = MilvusServer(root / "milvus").start()
    settings = {
        "VECTOR_DB_TYPE": "milvus",
        "VECTOR_DB_URL": milvus.url,
        "VECTOR_DB_COLLECTION_PREFIX": "shop_engine",
        "DEMO_CORPUS": False,
    }
    try:
        with ExitStack() as stack:
            yield [stack.enter_context(app_runtime(settings)) for _ in ("a", "b")]
    finally:
        milvus.stop()


def test_a_document_indexed_through_one_runtime_answers_on_the_other(
    replicas: list[AppRuntime],
) -> None:
    writer, reader = replicas
    indexed = writer.client.post(
        "/index",
        json={
            "index_name": "handbook",
            "documents": [
                {
                    "doc_id": "refunds-2026",
                    "text": POLICY_TEXT,
                    "metadata": {"source": "policy", "timestamp": "2026-05-01T00:00:00Z"},
                }
            ],
        },
    )
    assert indexed.status_code == 200, indexed.text

    # The reader never saw the request: it lists and answers from the shared store.
    assert "handbook" in reader.client.get("/indexes").json()
    reply = reader.openai().chat.completions.create(
        model="sentinel-embedded",
        messages=[{"role": "user", "content": QUESTION}],
        extra_body={"index_name": "handbook"},
    )
    answer = reply.choices[0].message.content or ""
    sentinel = (reply.model_extra or {})["sentinel"]
    assert "45 days" in answer
    assert [node["doc_id"] for node in reply.model_extra["source_nodes"]] == ["refunds-2026"]
    assert sentinel["decision"] in {"answer", "summary"}

    # A deletion through the reader is seen by the writer.
    deleted = reader.client.post(
        "/indexes/handbook/documents/delete", json={"doc_ids": ["refunds-2026"]}
    )
    assert deleted.status_code == 200, deleted.text
    listed = writer.client.get("/indexes/handbook/documents").json()
    assert (listed["documents"], listed["total_items"]) == ([], 0)


def test_an_unreachable_milvus_is_a_clear_error_at_start() -> None:
    settings = {"VECTOR_DB_TYPE": "milvus", "VECTOR_DB_URL": "http://127.0.0.1:9"}
    with pytest.raises(RuntimeError) as failed, app_runtime({**settings, "DEMO_CORPUS": False}):
        pass  # the app's start (its lifespan) fails
    assert "Milvus" in str(failed.value) or "milvus" in str(failed.value)
