"""VECTOR_DB_* settings choose the backend: ``backends.from_settings`` is what the runtime's
services call, so these build managers exactly as a runtime does at start."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from sentinel_runtime.index import backends
from sentinel_runtime.index.embedders import HashingEmbedder
from sentinel_runtime.index.manager import IndexManager
from sentinel_runtime.index.types import Document
from sentinel_runtime.settings import Settings


def settings(**values: str) -> Settings:
    return Settings(**values)  # type: ignore[arg-type]


def test_embedded_is_the_default() -> None:
    chosen = settings()
    assert chosen.VECTOR_DB_TYPE == "embedded"
    assert backends.from_settings(chosen) is None
    manager = IndexManager(HashingEmbedder(), None, backend=backends.from_settings(chosen))
    assert manager.backend.kind == "embedded"


@pytest.mark.parametrize(
    ("values", "message"),
    [
        pytest.param({"VECTOR_DB_TYPE": "milvus"}, "needs VECTOR_DB_URL", id="no-url"),
        pytest.param({"VECTOR_DB_TYPE": "qdrant"}, "VECTOR_DB_TYPE", id="unknown-type"),
        pytest.param(
            {
                "VECTOR_DB_TYPE": "milvus",
                "VECTOR_DB_URL": "http://m",
                "VECTOR_DB_COLLECTION_PREFIX": "9x",
            },
            "VECTOR_DB_COLLECTION_PREFIX",
            id="prefix-not-a-name",
        ),
        pytest.param(
            {
                "VECTOR_DB_TYPE": "milvus",
                "VECTOR_DB_URL": "http://m",
                "VECTOR_DB_COLLECTION_PREFIX": "a-b",
            },
            "VECTOR_DB_COLLECTION_PREFIX",
            id="prefix-with-dash",
        ),
    ],
)
def test_bad_vector_db_settings_stop_the_start(values: dict[str, str], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        settings(**values)


def test_milvus_settings_build_a_shared_manager(milvus_server, tmp_path: Path) -> None:
    chosen = settings(
        VECTOR_DB_TYPE="milvus",
        VECTOR_DB_URL=milvus_server.url,
        VECTOR_DB_COLLECTION_PREFIX="from_settings",
        VECTOR_DB_PERSIST_DIR=str(tmp_path),
    )
    first = IndexManager(
        HashingEmbedder(), chosen.persist_dir(), backend=backends.from_settings(chosen)
    )
    second = IndexManager(
        HashingEmbedder(), chosen.persist_dir(), backend=backends.from_settings(chosen)
    )
    assert first.backend.kind == "milvus"
    first.add_documents("kb", [Document("a", "Shared through the settings.")])
    assert second.names() == ["kb"]
    assert second.get("kb").search("shared settings", 1)[0].chunk.doc_id == "a"
    assert list(tmp_path.iterdir()) == []  # nothing written beside Milvus
    assert second.describe() == {"kb": {"documents": 1, "chunks": 1}}
    first.delete("kb")
    first.close()
    second.close()
