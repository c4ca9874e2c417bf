"""Chunking: paragraphs, then sentences, then words; exact slices; stable ids."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sentinel_runtime.index import chunking
from sentinel_runtime.index.types import Document

PARAGRAPHS = (
    "Refunds are issued within thirty days. Keep the receipt.\n\n"
    "Shipping takes five business days.\n   \n\n"
    "Express shipping costs extra and arrives the next day."
)


def chunks(text: str, max_chars: int = chunking.DEFAULT_MAX_CHARS) -> list[str]:
    return [c.text for c in chunking.chunk_document(Document("d", text), max_chars)]


def test_ids_are_doc_id_and_position_and_the_same_for_the_same_text() -> None:
    doc = Document("faq-7", PARAGRAPHS, {"source": "faq"})
    first = chunking.chunk_document(doc, 60)
    again = chunking.chunk_document(Document("faq-7", PARAGRAPHS), 60)
    assert [c.chunk_id for c in first] == [f"faq-7#p{n}" for n in range(len(first))]
    assert [(c.chunk_id, c.text) for c in first] == [(c.chunk_id, c.text) for c in again]
    assert all(c.doc_id == "faq-7" and c.metadata == {"source": "faq"} for c in first)
    assert [c.position for c in first] == list(range(len(first)))


def test_short_paragraphs_are_packed_into_one_chunk_verbatim() -> None:
    assert chunks(PARAGRAPHS) == [PARAGRAPHS]


def test_paragraphs_that_do_not_fit_together_become_separate_chunks() -> None:
    assert chunks(PARAGRAPHS, 60) == [
        "Refunds are issued within thirty days. Keep the receipt.",
        "Shipping takes five business days.",
        "Express shipping costs extra and arrives the next day.",
    ]


def test_a_long_paragraph_is_cut_between_sentences() -> None:
    text = "First sentence is here. Second one follows! Third asks why? Fourth ends it."
    assert chunks(text, 45) == [
        "First sentence is here. Second one follows!",
        "Third asks why? Fourth ends it.",
    ]


def test_a_long_sentence_is_cut_between_words_never_inside_one() -> None:
    text = "alpha beta gamma delta epsilon zeta eta theta iota kappa"
    result = chunks(text, 20)
    assert all(len(c) <= 20 for c in result)
    assert " ".join(result).split() == text.split()


def test_a_word_longer_than_the_limit_stays_whole() -> None:
    token = "ghp_" + "x" * 60
    assert chunks(f"key {token} here", 20) == ["key", token, "here"]


@pytest.mark.parametrize(
    "text",
    [pytest.param("", id="empty"), pytest.param(" \n\t\n ", id="whitespace")],
)
def test_a_document_without_text_is_an_error(text: str) -> None:
    with pytest.raises(ValueError, match=r"'d' has no text"):
        chunking.chunk_document(Document("d", text))


def test_max_chars_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_chars"):
        chunking.split_spans("text", 0)


words = st.text(alphabet="abcdefghij", min_size=1, max_size=15)
separators = st.sampled_from([" ", "  ", ". ", "! ", "\n", "\n\n", " \n \n", "? "])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(words, separators), min_size=1, max_size=60), st.integers(5, 80))
def test_chunks_keep_every_word_in_order_and_respect_the_limit(
    parts: list[tuple[str, str]], max_chars: int
) -> None:
    text = "".join(w + s for w, s in parts)
    spans = chunking.split_spans(text, max_chars)
    pieces = [text[s:e] for s, e in spans]
    assert " ".join(pieces).split() == text.split()
    for piece in pieces:
        assert piece == piece.strip()
        assert len(piece) <= max_chars or len(piece.split()) == 1
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))
