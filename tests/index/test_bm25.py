"""BM25: Okapi scores (checked against the formula written out plainly), incremental
add and remove, allowed masks, compaction."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from sentinel_runtime.index.analysis import tokenize
from sentinel_runtime.index.bm25 import BM25

CORPUS = {
    0: "the refund policy allows a refund within thirty days",
    1: "shipping takes five days and express shipping one day",
    2: "the logo colour is blue",
    3: "refund requests need the receipt",
    4: "holiday calendar for the support team",
}


def reference(docs: dict[int, str], query: str, k1: float = 1.5, b: float = 0.75) -> dict:
    """Okapi BM25 with Lucene's non-negative idf, the slow obvious way."""
    tokenised = {key: tokenize(text) for key, text in docs.items()}
    n = len(tokenised)
    average = sum(map(len, tokenised.values())) / n
    scores: dict[int, float] = {}
    for term in set(tokenize(query)):
        df = sum(term in words for words in tokenised.values())
        if not df:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        for key, words in tokenised.items():
            tf = words.count(term)
            if tf:
                norm = k1 * (1 - b + b * len(words) / average)
                scores[key] = scores.get(key, 0.0) + idf * tf * (k1 + 1) / (tf + norm)
    return scores


def build(docs: dict[int, str]) -> BM25:
    index = BM25()
    for key, text in docs.items():
        index.add(key, tokenize(text))
    return index


@pytest.mark.parametrize(
    "query",
    [
        pytest.param("refund", id="one-term"),
        pytest.param("refund receipt days", id="several-terms"),
        pytest.param("the shipping shipping", id="repeated-and-common"),
    ],
)
def test_scores_match_okapi_bm25(query: str) -> None:
    got = dict(build(CORPUS).search(tokenize(query), 10))
    expected = reference(CORPUS, query)
    assert got.keys() == expected.keys()
    for key, score in expected.items():
        assert got[key] == pytest.approx(score, rel=1e-9)


def test_results_are_best_first_and_only_documents_sharing_a_word() -> None:
    results = build(CORPUS).search(tokenize("refund receipt"), 10)
    assert [key for key, _ in results] == [3, 0]
    assert results[0][1] > results[1][1] > 0
    assert build(CORPUS).search(tokenize("unrelated words"), 10) == []


def test_removed_documents_vanish_and_statistics_follow() -> None:
    index = build(CORPUS)
    index.remove(3)
    remaining = {k: v for k, v in CORPUS.items() if k != 3}
    got = dict(index.search(tokenize("refund the"), 10))
    expected = reference(remaining, "refund the")
    assert got == pytest.approx(expected, rel=1e-9)
    assert 3 not in index and len(index) == 4
    with pytest.raises(KeyError):
        index.remove(3)


def test_a_key_is_never_reused() -> None:
    index = build(CORPUS)
    index.remove(1)
    with pytest.raises(ValueError, match="already used"):
        index.add(1, ["again"])
    with pytest.raises(ValueError, match="already used"):
        index.add(0, ["again"])


def test_allowed_mask_limits_results_but_not_idf() -> None:
    index = build(CORPUS)
    allowed = np.zeros(8, dtype=bool)
    allowed[[0, 2]] = True
    got = dict(index.search(tokenize("refund"), 10, allowed))
    full = reference(CORPUS, "refund")
    assert got == pytest.approx({0: full[0]})


def test_top_n_holds_the_n_best_of_many() -> None:
    rng = random.Random(7)
    vocabulary = [f"w{i}" for i in range(50)]
    docs = {k: " ".join(rng.choices(vocabulary, k=rng.randint(3, 30))) for k in range(500)}
    expected = sorted(reference(docs, "w1 w2 w3").items(), key=lambda kv: (-kv[1], kv[0]))[:7]
    got = build(docs).search(tokenize("w1 w2 w3"), 7)
    assert [k for k, _ in got] == [k for k, _ in expected]


def test_compaction_after_mass_removal_keeps_results_right() -> None:
    rng = random.Random(3)
    vocabulary = [f"t{i}" for i in range(30)]
    docs = {k: " ".join(rng.choices(vocabulary, k=12)) for k in range(3000)}
    index = build(docs)
    before = sum(len(keys) for keys, _ in index._postings.values())
    for key in range(0, 2500):
        index.remove(key)
    remaining = {k: v for k, v in docs.items() if k >= 2500}
    expected = reference(remaining, "t1 t7")
    got = dict(index.search(tokenize("t1 t7"), 1000))
    assert got == pytest.approx(expected, rel=1e-9)
    # Compacted once the dead outnumbered the living (at 1501 removals): 999 dead remain.
    after = sum(len(keys) for keys, _ in index._postings.values())
    assert after < before * 0.55


def test_cached_term_scores_follow_every_change() -> None:
    index = build(CORPUS)
    docs = dict(CORPUS)
    query = tokenize("refund the days")
    for change in range(3):
        assert dict(index.search(query, 10)) == pytest.approx(reference(docs, "refund the days"))
        assert dict(index.search(query, 10)) == pytest.approx(reference(docs, "refund the days"))
        if change == 0:
            docs[9] = "refund refund the receipt"
            index.add(9, tokenize(docs[9]))
        else:
            index.remove(0 if change == 1 else 9)
            del docs[0 if change == 1 else 9]
