"""The extractive generator cites what it copies."""

from __future__ import annotations

from sentinel_runtime.pipeline.cite.citations import INSUFFICIENT_ANSWER, validate_citations
from sentinel_runtime.pipeline.generate.extractive import (
    SUMMARY_PREFIX,
    extractive_answer,
)
from sentinel_runtime.pipeline.types import Conflict
from support.hits import hit

HITS = [
    hit(
        "policy#p0",
        "Refunds are allowed within 30 days of purchase. Shipping is free over $50.",
        rank=0,
    ),
    hit("faq#p2", "Gift cards cannot be refunded. Contact support for exchanges.", rank=1),
]


def test_answer_copies_relevant_sentences_and_cites_them() -> None:
    answer = extractive_answer("When are refunds allowed?", HITS)
    assert answer.decision == "answer"
    assert "Refunds are allowed within 30 days of purchase. [policy#p0]" in answer.text
    assert "Shipping" not in answer.text  # irrelevant sentence left out
    assert "policy#p0" in answer.citations
    chunks = {h.chunk.chunk_id: h.chunk.text for h in HITS}
    assert validate_citations(answer.text, answer.citations, chunks).valid


def test_no_relevant_evidence_says_so_without_citations() -> None:
    answer = extractive_answer("What is the capital of Peru?", HITS)
    assert answer.text == INSUFFICIENT_ANSWER and answer.citations == ()
    assert validate_citations(answer.text, answer.citations, {}).valid


def test_summary_leaves_out_steps() -> None:
    hits = [
        hit(
            "lab#p0",
            "Solvents are flammable liquids used in labs.\n"
            "1. Mix 200 ml of solvent with the powder.\n"
            "Labs store solvents in ventilated cabinets.",
        )
    ]
    answer = extractive_answer("How are lab solvents handled?", hits, decision="summary")
    assert answer.text.startswith(SUMMARY_PREFIX)
    assert "200 ml" not in answer.text and "solvents" in answer.text.lower()


def test_conflicting_sources_are_both_cited_and_the_disagreement_stated() -> None:
    hits = [
        hit("a#p0", "Season 4 of Chicago Fire has 23 episodes.", rank=0),
        hit("b#p0", "Season 4 of Chicago Fire has 24 episodes.", rank=1),
    ]
    conflict = Conflict(chunk_ids=("a#p0", "b#p0"), kind="numeric_mismatch", detail="23 vs 24")
    answer = extractive_answer(
        "How many episodes in Chicago Fire season 4?", hits, conflicts=[conflict], max_sentences=1
    )
    assert set(answer.citations) == {"a#p0", "b#p0"}
    assert "23" in answer.text and "24" in answer.text and "disagree" in answer.text
