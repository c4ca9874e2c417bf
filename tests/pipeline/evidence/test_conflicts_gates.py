"""The conflict finder's shortcuts change no result: clusters judge each pair of passages
once and read a passage's numbers only when a pair of it is judged; claims skip a chunk that
covers too little of the query to hold one. Below, the code as it stood before the
shortcuts (commit 664d46c), on the unchanged helpers, compared on random hit lists."""

from __future__ import annotations

import random
from collections.abc import Sequence
from itertools import combinations

import pytest

from sentinel_runtime.demo import corpus as demo_corpus
from sentinel_runtime.index import analysis
from sentinel_runtime.index.types import Chunk, Hit
from sentinel_runtime.pipeline.evidence import conflicts as c

# Paraphrases of one claim (a campaign), a rebuttal, and look-alikes counting differently.
CAMPAIGN = [
    "Fans of the OC remember how the popular teen drama lasted 5 seasons in total.",
    "The OC, a popular teen drama, aired for 5 seasons in total, the network confirmed.",
    "According to the network, the popular OC teen drama finished after 5 seasons in total.",
    "The popular OC teen drama ran for 5 seasons in total before the network ended it.",
    "The OC, the popular teen drama, aired for 4 seasons in total on the network.",
    "The OC aired for four seasons on Fox between 2003 and 2007, with 92 episodes.",
    "The first season of Severance has 9 episodes and premiered in 2022 on Apple TV.",
    "Severance's first season consists of ten episodes, directed by Ben Stiller.",
]
QUESTIONS = [
    "How many seasons of The OC are there?",
    "How many episodes are in the first season of Severance?",
    "Who directed Severance?",
]


def old_find_clusters(hits: Sequence[Hit], query: str) -> tuple[c.Cluster, ...]:
    query_terms = analysis.terms(query)
    if not query_terms:
        return ()
    query_values = c.values(query) | query_terms
    echo: list[tuple[str, frozenset[str]]] = []
    counts: list[dict[str, tuple[str, set[str]]]] = []
    seen_docs: set[str] = set()
    for hit in hits:
        found = analysis.terms(hit.chunk.text)
        if hit.chunk.doc_id in seen_docs or analysis.coverage(query_terms, found) < 0.5:
            continue
        seen_docs.add(hit.chunk.doc_id)
        echo.append((hit.chunk.chunk_id, found))
        counts.append(c._by_stem(c.numbers(hit.chunk.text)))
    if len(echo) < c.MIN_CLUSTER:
        return ()
    carriers: dict[str, list[int]] = {}
    for index, (_, found) in enumerate(echo):
        for term in found - query_terms:
            carriers.setdefault(term, []).append(index)

    def related(a: int, b: int) -> bool:
        return c.PARAPHRASE_MIN <= c._jaccard(echo[a][1], echo[b][1]) < c.COPY_MIN and not (
            c._slot_disagreement(counts[a], counts[b], query_values)
        )

    groups: set[tuple[int, ...]] = set()
    for members in carriers.values():
        chosen: list[int] = []
        for index in members:
            if all(related(index, m) for m in chosen):
                chosen.append(index)
        if len(chosen) >= c.MIN_CLUSTER:
            groups.add(tuple(chosen))
    merged: list[set[int]] = []
    for group in sorted(groups, key=lambda g: (-len(g), g)):
        members = set(group)
        for cluster in merged:
            union = cluster | members
            common = frozenset.intersection(*(echo[i][1] for i in union)) - query_terms
            if (
                cluster & members
                and common
                and all(related(a, b) for a, b in combinations(union, 2))
            ):
                cluster.update(members)
                break
        else:
            if not any(cluster & members for cluster in merged):
                merged.append(members)
    clusters = []
    for members in merged:
        tally: dict[str, int] = {}
        for index in members:
            for term in echo[index][1] - query_terms:
                tally[term] = tally.get(term, 0) + 1
        claim = sorted((t for t, n in tally.items() if n >= c.MIN_CLUSTER), key=lambda t: -tally[t])
        clusters.append(c.Cluster(tuple(echo[i][0] for i in sorted(members)), tuple(claim)))
    return tuple(clusters)


def old_claims(hits: Sequence[Hit], query_terms: frozenset[str]) -> list[c._Claim]:
    claims = []
    for hit in hits:
        for sentence, counted, named in c._facts(hit.chunk.text):
            found = {v for vs in counted.values() for v in vs} | named
            value_terms = analysis.terms(" ".join(found)) - query_terms
            topic = analysis.terms(sentence) - value_terms
            if analysis.coverage(query_terms, topic | value_terms) >= c.QUERY_COVERAGE:
                claims.append(
                    c._Claim(
                        hit.chunk.chunk_id, hit.chunk.doc_id, topic, c._by_stem(counted), named
                    )
                )
    return claims


def pool() -> list[str]:
    documents = [doc.text for doc in demo_corpus.documents()]
    sentences = [s for text in documents for s in analysis.sentences(text)]
    return documents + sentences + CAMPAIGN * 6


def random_case(rng: random.Random, texts: list[str]) -> tuple[list[Hit], str]:
    chosen = [rng.choice(texts) for _ in range(rng.randint(1, 7))]
    if rng.random() < 0.4:  # most of a campaign, among other hits
        chosen = rng.sample(CAMPAIGN, rng.randint(3, 6)) + chosen[:2]
        rng.shuffle(chosen)
    # Mostly one document per hit; sometimes two hits of one document.
    docs = [f"d{i}" if rng.random() < 0.8 else f"d{rng.randint(0, 3)}" for i in range(len(chosen))]
    hits = [
        Hit(Chunk(f"{doc}#p{i}", doc, i, text), 1.0, 0.5, 1.0, i)
        for i, (doc, text) in enumerate(zip(docs, chosen, strict=True))
    ]
    if rng.random() < 0.5:
        query = rng.choice(QUESTIONS)
    else:  # a few words of one of the hits: a question its chunks echo
        words = analysis.tokenize(rng.choice(chosen))
        start = rng.randint(0, max(0, len(words) - 4))
        query = " ".join(words[start : start + rng.randint(2, 5)])
    return hits, query


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_shortcuts_give_the_old_clusters_and_claims(seed: int) -> None:
    rng, texts = random.Random(seed), pool()
    found_clusters = found_claims = 0
    for _ in range(1500):
        hits, query = random_case(rng, texts)
        clusters = c.find_clusters(hits, query)
        assert clusters == old_find_clusters(hits, query), (query, hits)
        query_terms = analysis.terms(query)
        claims = c._claims(hits, query_terms)
        assert claims == old_claims(hits, query_terms), (query, hits)
        found_clusters += bool(clusters)
        found_claims += bool(claims)
    # The comparison reached both: clusters formed and claims made, not only empty answers.
    assert found_clusters > 50
    assert found_claims > 500
