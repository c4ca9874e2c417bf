"""Seed 004's citation rules: exact ids, no duplicates, at most five, empty only if insufficient."""

from __future__ import annotations

import pytest

from sentinel_runtime.pipeline.cite.citations import CitationConfig, validate_citations

CHUNKS = {
    "policy#p0": "SSNs must not be stored in plaintext; encrypt them at rest.",
    "policy#p1": "Refunds are allowed within 30 days of purchase.",
}


@pytest.mark.parametrize(
    ("answer", "cited", "error"),
    [
        pytest.param("SSNs are encrypted at rest.", ["policy#p9"], "does not match", id="unknown"),
        pytest.param("SSNs are encrypted.", ["policy#p0", "policy#p0"], "more than once", id="dup"),
        pytest.param("SSNs are encrypted at rest.", [], "cites nothing", id="empty-confident"),
        pytest.param("SSNs", ["policy"], "does not match", id="doc-id-is-not-a-chunk-id"),
    ],
)
def test_errors_block(answer: str, cited: list[str], error: str) -> None:
    result = validate_citations(answer, cited, CHUNKS)
    assert not result.valid
    assert any(error in e for e in result.errors)


def test_more_than_the_maximum_is_an_error() -> None:
    chunks = {f"d#p{i}": "refunds allowed" for i in range(7)}
    result = validate_citations("Refunds are allowed.", list(chunks)[:6], chunks)
    assert not result.valid and any("at most 5" in e for e in result.errors)
    relaxed = CitationConfig(max_citations=6)
    assert validate_citations("Refunds are allowed.", list(chunks)[:6], chunks, relaxed).valid


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param("The context is insufficient to answer.", id="insufficient"),
        pytest.param("The documents do not contain that information.", id="do-not-contain"),
        pytest.param("I cannot find this in the sources.", id="cannot-find"),
    ],
)
def test_empty_citations_allowed_when_the_answer_says_context_is_insufficient(answer: str) -> None:
    assert validate_citations(answer, [], CHUNKS).valid


def test_valid_answer_and_keyword_overlap_warning() -> None:
    ok = validate_citations("SSNs must be encrypted at rest.", ["policy#p0"], CHUNKS)
    assert ok.valid and not ok.warnings
    off_topic = validate_citations("Bananas are yellow.", ["policy#p0"], CHUNKS)
    assert off_topic.valid and off_topic.warnings  # rule 5 is a warning by default
    strict = CitationConfig(require_keyword_overlap=True)
    assert not validate_citations("Bananas are yellow.", ["policy#p0"], CHUNKS, strict).valid


def test_ids_only_input_checks_existence() -> None:
    assert validate_citations("Refunds within 30 days.", ["policy#p1"], set(CHUNKS)).valid
