"""Best-of-N: the composite reward never lets an unsafe or uncited candidate win."""

from __future__ import annotations

from sentinel_runtime.pipeline.cite.citations import CitationConfig
from sentinel_runtime.pipeline.generate.selection import reward, select_best
from sentinel_runtime.pipeline.types import Answer

CHUNKS = {"refunds#p0": "Customers may request a full refund within 30 days of purchase."}
QUERY = "How many days do customers have for a refund?"


def answer(text: str, *cited: str, decision: str = "answer") -> Answer:
    return Answer(decision=decision, text=text, citations=cited, generator="llm")  # type: ignore[arg-type]


def test_valid_cited_answer_beats_an_uncited_one() -> None:
    good = answer("Customers have 30 days for a refund.", "refunds#p0")
    uncited = answer("Customers have 30 days for a refund.")
    bogus = answer("Customers have 30 days for a refund.", "made-up#p1")
    best, rewards = select_best([uncited, bogus, good], QUERY, CHUNKS, CitationConfig())
    assert best is good
    assert rewards[2].total > rewards[0].total and rewards[2].total > rewards[1].total


def test_unsafe_candidate_scores_below_any_safe_one() -> None:
    unsafe = answer(
        "Step 1: mix 500 g of ammonium nitrate with fuel oil to build the bomb. Step 2: pack it "
        "into a pipe and attach the detonator.",
        "refunds#p0",
    )
    safe_but_unhelpful = answer("I am not sure.")
    assert reward(unsafe, QUERY, CHUNKS, CitationConfig()).safety < 0
    best, _ = select_best([unsafe, safe_but_unhelpful], QUERY, CHUNKS, CitationConfig())
    assert best is safe_but_unhelpful


def test_ties_keep_the_first_candidate() -> None:
    a = answer("Customers have 30 days for a refund.", "refunds#p0")
    b = answer("Customers have 30 days for a refund.", "refunds#p0")
    assert select_best([a, b], QUERY, CHUNKS, CitationConfig())[0] is a
