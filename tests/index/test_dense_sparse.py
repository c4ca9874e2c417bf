"""The dense half's column scan for sparse queries (the hashing embedder's): the same
results as FAISS's exact search, before and after the adds and removals that the
column-major copy follows, and no copy at all for dense queries."""

from __future__ import annotations

import faiss
import numpy as np
import pytest

from sentinel_runtime.index import dense
from sentinel_runtime.index.dense import DenseIndex
from sentinel_runtime.index.hashing import HashingEmbedder

DIM = 64


def unit(rows: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).normal(size=(rows, DIM)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def sparse(rows: int, seed: int, nonzero: int = 6) -> np.ndarray:
    """Unit rows with ``nonzero`` non-zero components each, as a short question's."""
    rng = np.random.default_rng(seed)
    x = np.zeros((rows, DIM), dtype=np.float32)
    for row in x:
        row[rng.choice(DIM, size=nonzero, replace=False)] = rng.normal(size=nonzero)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def check_equal(ours: DenseIndex, reference: faiss.IndexIDMap2, queries: np.ndarray) -> None:
    for query in queries:
        keys, scores = ours.search(query, 12)
        ref_scores, ref_keys = reference.search(query[None], 12)
        assert keys.tolist() == ref_keys[0].tolist()
        assert np.allclose(scores, ref_scores[0], atol=1e-5)
        assert np.allclose(ours._scan(query), ours.vectors() @ query, atol=1e-6)


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    # Blocks of a few hundred columns: several blocks per scan, copy and compaction.
    monkeypatch.setattr(dense, "BLOCK_BYTES", 4096)


def test_sparse_queries_follow_adds_and_removals() -> None:
    ours = DenseIndex(DIM)
    reference = faiss.IndexIDMap2(faiss.IndexFlatIP(DIM))
    queries = sparse(15, 9)
    first = np.arange(0, 1500, dtype=np.int64)
    ours.add(first, unit(1500, 1))
    reference.add_with_ids(unit(1500, 1), first)
    check_equal(ours, reference, queries)
    assert ours._columns is not None  # built by the first sparse query

    more = np.arange(2000, 3700, dtype=np.int64)  # grows the copy
    ours.add(more, unit(1700, 2))
    reference.add_with_ids(unit(1700, 2), more)
    check_equal(ours, reference, queries)

    removed = np.concatenate([np.arange(3, 1500, 5), [5, 999_999]]).astype(np.int64)
    ours.remove(removed)  # compacted in place
    reference.remove_ids(removed)
    assert ours._columns is not None
    check_equal(ours, reference, queries)

    allowed = ours.keys()[::2].copy()
    params = faiss.SearchParameters(sel=faiss.IDSelectorBatch(allowed))
    for query in queries:
        keys, _ = ours.search(query, 7, allowed)
        assert keys.tolist() == reference.search(query[None], 7, params=params)[1][0].tolist()


def test_a_shrinking_removal_drops_the_copy_and_the_next_query_rebuilds_it() -> None:
    ours = DenseIndex(DIM)
    keys = np.arange(3000, dtype=np.int64)
    vectors = unit(3000, 3)
    ours.add(keys, vectors)
    ours.search(sparse(1, 4)[0], 5)
    ours.remove(keys[:2500])  # at least SHRINK_MIN_ROWS, leaving under half: rebuilt
    assert ours._columns is None
    reference = faiss.IndexIDMap2(faiss.IndexFlatIP(DIM))
    reference.add_with_ids(vectors[2500:], keys[2500:])
    check_equal(ours, reference, sparse(10, 5))
    ours.remove(ours.keys().copy())
    assert len(ours) == 0 and ours._columns is None
    assert len(ours.search(sparse(1, 6)[0], 5)[0]) == 0


def test_dense_queries_never_build_the_copy() -> None:
    ours = DenseIndex(DIM)
    ours.add(np.arange(500, dtype=np.int64), unit(500, 7))
    for query in unit(5, 8):
        ours.search(query, 5)
    assert ours._columns is None


def test_the_hashing_embedders_questions_take_the_column_scan() -> None:
    embedder = HashingEmbedder()
    query = embedder.embed(["how long do customers have to request a refund"])[0]
    assert np.count_nonzero(query) <= dense.SPARSE_MAX_SHARE * embedder.dim


def test_tied_scores_come_back_alike_with_and_without_a_filter() -> None:
    """Many chunks equal on the query's words: the scan only shortlists, the row-major scores
    decide, and ties (at the cut too) go to the lowest keys on every path."""
    embedder = HashingEmbedder()
    texts = [f"release notes {i} for the payment service" for i in range(300)]
    ours = DenseIndex(embedder.dim)
    ours.add(np.arange(300, dtype=np.int64) * 3, embedder.embed(texts))
    for question in ["payment notes 42", "release service", "payment"]:
        query = embedder.embed([question])[0]
        plain = ours.search(query, 40)
        filtered = ours.search(query, 40, ours.keys().copy())
        assert plain[0].tolist() == filtered[0].tolist()
        assert np.array_equal(plain[1], filtered[1])
        scores = ours.vectors() @ query
        expected = sorted(range(300), key=lambda row: (-scores[row], row))[:40]
        assert plain[0].tolist() == [3 * row for row in expected]


def test_a_query_of_stop_words_alone_scores_every_chunk_zero() -> None:
    embedder = HashingEmbedder()
    ours = DenseIndex(embedder.dim)
    ours.add(np.arange(50, dtype=np.int64), embedder.embed([f"text {i}" for i in range(50)]))
    keys, scores = ours.search(embedder.embed(["the of and"])[0], 5)
    assert keys.tolist() == [0, 1, 2, 3, 4] and not scores.any()
