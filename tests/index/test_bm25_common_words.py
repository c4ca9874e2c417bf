"""BM25 on queries with words most chunks contain: the spread (dense) cache of common terms
and the top-n cut by partition give exactly the scores, order and tie-breaking of scoring
each posting and listing every scored chunk first (written out plainly below)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from sentinel_runtime.index import bm25 as bm25_module
from sentinel_runtime.index.bm25 import BM25


def plain_search(index: BM25, words: list[str], n: int) -> list[tuple[int, float]]:
    """Posting by posting, then every scored key sorted by (-score, key): the obvious way."""
    scores = np.zeros(index._high, dtype=np.float64)
    for term in dict.fromkeys(words):
        found = index._term(term)
        if found is not None:
            scores[found[0]] += found[1]
    hits = np.flatnonzero(scores)
    ranked = sorted(hits.tolist(), key=lambda k: (-scores[k], k))[:n]
    return [(k, float(scores[k])) for k in ranked]


def corpus(seed: int, size: int = 3000) -> list[list[str]]:
    rng = random.Random(seed)
    rare = [f"w{i}" for i in range(400)]
    docs = []
    for _ in range(size):
        # "the" in almost every chunk, "of" in a third, some chunks identical: many ties.
        words = ["the"] * rng.randint(0, 2) + ["of"] * (rng.random() < 0.3)
        words += rng.sample(rare, rng.randint(1, 4))
        docs.append(words)
    return docs


@pytest.mark.parametrize("n", [1, 5, 40, 5000])
@pytest.mark.parametrize(
    "query",
    [["the"], ["the", "of"], ["of", "w3", "the", "w3"], ["w7", "w8"], ["absent"], ["the", "w1"]],
)
def test_common_words_give_the_plain_result(query: list[str], n: int) -> None:
    index = BM25()
    for key, words in enumerate(corpus(1)):
        index.add(key, words)
    for _ in range(2):  # computed, then from the caches
        assert index.search(query, n) == plain_search(index, query, n)
    index.remove_many(list(range(0, 3000, 4)))
    index.add(5000, ["the", "of", "w3"])
    assert index._spread == {}  # a change drops the spread scores with the others
    assert index.search(query, n) == plain_search(index, query, n)


def test_a_full_cache_scores_common_words_without_keeping_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    index = BM25()
    for key, words in enumerate(corpus(2, size=500)):
        index.add(key, words)
    monkeypatch.setattr(bm25_module, "_CACHE_POSTINGS", 600)
    assert index.search(["the", "of"], 10) == plain_search(index, ["the", "of"], 10)
    assert "the" not in index._spread
