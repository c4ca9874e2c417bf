"""Two runtimes, one Milvus: documents indexed through one runtime answer questions asked of
the other, as two replicas of one RAGEngine would (issue 8's done-when)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from openai import OpenAI

from support.milvus import REASON, MilvusServer, binary
from support.runtime import RuntimeProcess, start_runtime

pytestmark = pytest.mark.skipif(binary() is None, reason=REASON)

QUESTION = "How long do customers have to request a refund?"
POLICY_TEXT = (
    "Customers may request a full refund within 45 days of purchase when the item is unused. "
    "Refunds are paid to the original payment method within five business days."
)


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[RuntimeProcess]]:
    root = tmp_path_factory.mktemp("shared-milvus")
    milvus = MilvusServer(root / "milvus").start()
    env = {
        "VECTOR_DB_TYPE": "milvus",
        "VECTOR_DB_URL": milvus.url,
        "VECTOR_DB_COLLECTION_PREFIX": "shop_engine",
    }
    started: list[RuntimeProcess] = []
    try:
        for name in ("a", "b"):
            directory = root / name
            directory.mkdir()
            started.append(start_runtime(directory, env, ("--no-demo",)))
        yield started
    finally:
        for runtime in started:
            runtime.stop()
        milvus.stop()


def test_a_document_indexed_through_one_runtime_answers_on_the_other(
    replicas: list[RuntimeProcess],
) -> None:
    writer, reader = replicas
    indexed = httpx.post(
        f"{writer.base_url}/index",
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
        timeout=60,
    )
    assert indexed.status_code == 200, indexed.text

    # The reader never saw the request: it lists and answers from the shared store.
    assert "handbook" in httpx.get(f"{reader.base_url}/indexes", timeout=30).json()
    client = OpenAI(base_url=f"{reader.base_url}/v1", api_key="unused", max_retries=0)
    reply = client.chat.completions.create(
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
    deleted = httpx.post(
        f"{reader.base_url}/indexes/handbook/documents/delete",
        json={"doc_ids": ["refunds-2026"]},
        timeout=30,
    )
    assert deleted.status_code == 200, deleted.text
    listed = httpx.get(f"{writer.base_url}/indexes/handbook/documents", timeout=30).json()
    assert (listed["documents"], listed["total_items"]) == ([], 0)


def test_an_unreachable_milvus_is_a_clear_error_at_start(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError) as failed:
        start_runtime(
            tmp_path,
            {"VECTOR_DB_TYPE": "milvus", "VECTOR_DB_URL": "http://127.0.0.1:9"},
            ("--no-demo",),
        )
    assert "Milvus" in str(failed.value) or "milvus" in str(failed.value)
