"""The extractive generator reads each chunk's keywords and quotable sentences from a cache
per text: its candidates are those of reading them afresh for every question (the plain
loop, written out below)."""

from __future__ import annotations

import random

import pytest

from sentinel_runtime.demo import corpus as demo_corpus
from sentinel_runtime.index.analysis import keywords
from sentinel_runtime.index.types import Chunk, Hit
from sentinel_runtime.pipeline.generate import extractive
from sentinel_runtime.pipeline.signals import harm


def overlap(wanted: set[str], text: str) -> float:
    return len(wanted & keywords(text)) / len(wanted) if wanted else 0.0


def plain_candidates(query: str, hits: list[Hit], *, summary: bool) -> list[tuple[str, str, float]]:
    wanted = extractive.question_terms(query)
    kind = extractive.answer_type(query)
    found = []
    for hit in hits:
        chunk_overlap = overlap(wanted, hit.chunk.text)
        for sentence in extractive.sentences(hit.chunk.text):
            if len(sentence.split()) < extractive.MIN_WORDS:
                continue
            if summary and (
                extractive._STEP_LIKE.match(sentence) or harm.assess_harm(sentence).procedural
            ):
                continue
            relevance = overlap(wanted, sentence)
            answers = not extractive._INTERROGATIVE.search(sentence) and (
                extractive.has_answer_type(sentence, kind, wanted)
            )
            if answers and extractive._REFERS_BACK.search(sentence):
                relevance = max(relevance, extractive.CHUNK_CARRY * chunk_overlap)
            if relevance < extractive.MIN_OVERLAP:
                continue
            bonus = extractive.ANSWER_TYPE_BONUS if answers else 0.0
            found.append((sentence, hit.chunk.chunk_id, hit.rank, relevance + bonus))
    found.sort(key=lambda s: (-s[3], s[2]))
    best = found[0][3] if found else 0.0
    return [(s[0], s[1], s[3]) for s in found if s[3] >= extractive.RELATIVE_OVERLAP * best]


QUERIES = [
    "How long do customers have to request a refund?",
    "Who leads the payments team?",
    "How do I connect to the VPN?",
    "When does the legal hold end?",
    "What is the travel policy?",
    "How many days of paid leave do employees get?",
]


@pytest.mark.parametrize("summary", [False, True])
@pytest.mark.parametrize("query", QUERIES)
def test_candidates_equal_the_plain_reading(query: str, summary: bool) -> None:
    docs = demo_corpus.documents()
    hits = [
        Hit(Chunk(f"{d.doc_id}#p0", d.doc_id, 0, d.text, d.metadata), 1.0, 0.5, 0.0, rank)
        for rank, d in enumerate(docs)
    ]
    for _ in range(2):  # read afresh, then from the cache
        got = extractive._candidates(query, hits, summary=summary)
        assert [(s.text, s.chunk_id, s.score) for s in got] == plain_candidates(
            query, hits, summary=summary
        )


def _texts() -> list[str]:
    """The demo corpus, and made-up texts: line breaks of every kind, final and inner sigma,
    dotted capitals, combining marks, underscores, digits, words glued to punctuation."""
    pieces = [
        "Refund policy.",
        "Customers may ask for a refund within 30 days.",
        "ΟΔΟΣ ΣΑΣ.",
        "Σίσυφος Σ.",
        "İstanbul İİ",
        "e\u0301cole caf\u00e9",
        "snake_case_words here",
        "ends?",
        "Q3 2024!",
        "(Quoted) start",
        "\u2028",
        "\x1c",
        "\r\n",
        "\n\n",
        "\t",
        "The VPN client needs the token.",
        "a b",
    ]
    rng = random.Random(7)
    made = ["".join(rng.choices(pieces + [" "] * 8, k=rng.randint(1, 14))) for _ in range(3000)]
    return [d.text for d in demo_corpus.documents()] + made


def test_chunk_keywords_are_those_of_the_whole_text() -> None:
    texts = _texts()
    assert sum(len(extractive.sentences(t)) > 1 for t in texts) > 1000
    for text in texts:
        chunk_words, quotable = extractive._quotable.__wrapped__(text)
        assert chunk_words == frozenset(keywords(text)), repr(text)
        long_enough = [s for s in extractive.sentences(text) if len(s.split()) >= 4]
        assert quotable == tuple((s, frozenset(keywords(s))) for s in long_enough), repr(text)
