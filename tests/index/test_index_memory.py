"""Memory goes back after a delete: what a deleted document held is released by the
structures (BM25 postings and cached scores, FAISS rows, chunk tables), a deleted index is
freed at once, and the allocator is asked to return the pages (``index.memory``). RSS itself
is measured by ``bench/index_memory.py``, not here."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import numpy as np

from sentinel_runtime.index import memory
from sentinel_runtime.index.bm25 import BM25
from sentinel_runtime.index.dense import SHRINK_MIN_ROWS, DenseIndex
from sentinel_runtime.index.embedders import HashingEmbedder
from sentinel_runtime.index.manager import IndexManager
from sentinel_runtime.index.types import Document


def big_document(paragraphs: int = 3000) -> Document:
    # About two paragraphs a chunk (max_chars 100); words that differ per chunk, as in real text.
    return Document(
        "big", "\n\n".join(f"Paragraph {i} about item{i} and w{i % 97}." for i in range(paragraphs))
    )


def test_deleting_every_document_releases_the_store_structures(tmp_path: Path) -> None:
    manager = IndexManager(HashingEmbedder(), tmp_path, max_chars=100)
    manager.add_documents("kb", [big_document(), Document("small", "Small text.")])
    store = manager.get("kb")
    assert store.chunk_count > SHRINK_MIN_ROWS
    store.search("item7 paragraph", 3)  # fills BM25's score cache
    flat = store._dense._flat

    manager.delete_documents("kb", ["big", "small"])

    assert store.chunk_count == 0 and store._key_of == {} and store._docs == {}
    assert store._bm25.posting_count == 0 and store._bm25._postings == {}
    assert store._bm25._cache == {}
    assert len(store._dense) == 0
    assert store._dense._flat is not flat  # a fresh FAISS index: the old storage is freed


def test_a_deleted_index_is_freed_at_once(tmp_path: Path) -> None:
    manager = IndexManager(HashingEmbedder(), tmp_path, max_chars=100)
    manager.add_documents("kb", [big_document()])
    gone = weakref.ref(manager.get("kb"))
    gc.disable()  # freed by reference counting alone: nothing keeps it, no cycle holds it
    try:
        manager.delete("kb")
        assert gone() is None
    finally:
        gc.enable()


def test_bm25_drops_stale_scores_and_compacts_a_batch_once() -> None:
    bm25 = BM25()
    for key in range(3000):
        bm25.add(key, ["common", f"w{key}"])
    assert bm25.search(["common"], 5)
    assert bm25._cache  # the term's scores, until the next change
    bm25.add(3000, ["other"])
    assert bm25._cache == {}
    bm25.remove_many(list(range(2000)))  # more dead than living: compacted
    assert bm25.posting_count == 1000 * 2 + 1
    assert [key for key, _ in bm25.search(["common"], 3)] == [2000, 2001, 2002]


def test_a_shrunk_dense_index_answers_as_before() -> None:
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(3000, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    keys = np.arange(3000, dtype=np.int64)
    dense = DenseIndex(16)
    dense.add(keys, vectors)
    dense.remove(keys[:2000])
    expected = DenseIndex(16)
    expected.add(keys[2000:], vectors[2000:])
    query = vectors[2500]
    found, scores = dense.search(query, 5)
    want, want_scores = expected.search(query, 5)
    assert found.tolist() == want.tolist() and np.allclose(scores, want_scores)
    assert found[0] == 2500
    assert np.array_equal(dense.vectors_of(np.array([2999])), vectors[2999:])


def test_memory_release_trims_the_heap_on_glibc() -> None:
    assert memory.release() is True
