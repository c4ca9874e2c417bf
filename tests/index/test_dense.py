"""The dense half: its BLAS scan over FAISS's storage returns what FAISS's own exact
search returns, with and without an allowed set, after adds and removals."""

from __future__ import annotations

import faiss
import numpy as np
import pytest

from sentinel_runtime.index import dense
from sentinel_runtime.index.dense import DenseIndex

DIM = 24


def unit(rows: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).normal(size=(rows, DIM)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.fixture
def pair() -> tuple[DenseIndex, faiss.IndexIDMap2]:
    """Our index and a plain FAISS one with the same content and history."""
    ours = DenseIndex(DIM)
    reference = faiss.IndexIDMap2(faiss.IndexFlatIP(DIM))
    for start, seed in [(0, 1), (3000, 2)]:
        keys = np.arange(start, start + 2500, dtype=np.int64)
        vectors = unit(2500, seed)
        ours.add(keys, vectors)
        reference.add_with_ids(vectors, keys)
    removed = np.arange(100, 2600, 7, dtype=np.int64)
    ours.remove(removed)
    reference.remove_ids(removed)
    return ours, reference


@pytest.mark.parametrize(
    "direct_max", [pytest.param(0, id="full-scan"), pytest.param(10**6, id="direct")]
)
@pytest.mark.parametrize(
    "allowed_every", [pytest.param(None, id="unfiltered"), pytest.param(3, id="filtered")]
)
def test_search_equals_faiss_exact_search(
    pair: tuple[DenseIndex, faiss.IndexIDMap2],
    monkeypatch: pytest.MonkeyPatch,
    direct_max: int,
    allowed_every: int | None,
) -> None:
    monkeypatch.setattr(dense, "DIRECT_MAX", direct_max)
    ours, reference = pair
    allowed = None
    params = None
    if allowed_every:
        allowed = ours.keys()[::allowed_every].copy()
        params = faiss.SearchParameters(sel=faiss.IDSelectorBatch(allowed))
    for query in unit(20, 9):
        keys, scores = ours.search(query, 15, allowed)
        ref_scores, ref_keys = reference.search(query[None], 15, params=params)
        assert keys.tolist() == ref_keys[0].tolist()
        assert np.allclose(scores, ref_scores[0], atol=1e-5)


def test_similarity_and_vectors_follow_removals(pair: tuple[DenseIndex, faiss.IndexIDMap2]) -> None:
    ours, reference = pair
    keys = np.array([0, 1, 3001, 5499], dtype=np.int64)
    expected = np.stack([reference.reconstruct(int(k)) for k in keys])
    assert np.array_equal(ours.vectors_of(keys), expected)
    query = unit(1, 4)[0]
    assert np.allclose(ours.similarity(query, keys), expected @ query)
    assert len(ours) == reference.ntotal


def test_an_empty_index_finds_nothing() -> None:
    keys, scores = DenseIndex(DIM).search(unit(1, 1)[0], 5)
    assert len(keys) == len(scores) == 0
