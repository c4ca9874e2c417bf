"""Split a document into retrievable chunks: paragraphs, then sentences, then words.

Chunks are exact slices of the document's text (``split_spans`` gives their offsets, which
``store`` persists instead of a second copy of the text), so a citation quotes the source
verbatim. Ids are ``f"{doc_id}#p{n}"``: the same text always yields the same ids.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from sentinel_runtime.index.types import Chunk, Document

DEFAULT_MAX_CHARS = 1000

_BLANK_LINE = re.compile(r"\n[^\S\n]*\n\s*")
# A sentence ends at . ! ? (closing quotes and brackets stay with it) before whitespace.
_SENTENCE_END = re.compile(r"[.!?\u2026]+[\"'\u201d\u2019)\]]*(?=\s)")
_WORD = re.compile(r"\S+")

Span = tuple[int, int]


def chunk_id(doc_id: str, position: int) -> str:
    return f"{doc_id}#p{position}"


def _trim(text: str, start: int, end: int) -> Span | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if start < end else None


def _pieces(text: str, start: int, end: int, separators: re.Pattern[str]) -> Iterator[Span]:
    """Trimmed spans of ``text[start:end]`` cut right after each match of ``separators``."""
    cut = start
    for match in separators.finditer(text, start, end):
        span = _trim(text, cut, match.end())
        if span:
            yield span
        cut = match.end()
    span = _trim(text, cut, end)
    if span:
        yield span


def _paragraphs(text: str) -> Iterator[Span]:
    cut = 0
    for match in _BLANK_LINE.finditer(text):
        span = _trim(text, cut, match.start())
        if span:
            yield span
        cut = match.end()
    span = _trim(text, cut, len(text))
    if span:
        yield span


def _units(text: str, max_chars: int) -> Iterator[Span]:
    """The coarsest pieces that fit: a paragraph, else its sentences, else their words."""
    for p_start, p_end in _paragraphs(text):
        if p_end - p_start <= max_chars:
            yield p_start, p_end
            continue
        for s_start, s_end in _pieces(text, p_start, p_end, _SENTENCE_END):
            if s_end - s_start <= max_chars:
                yield s_start, s_end
            else:
                for word in _WORD.finditer(text, s_start, s_end):
                    yield word.span()


def split_spans(text: str, max_chars: int = DEFAULT_MAX_CHARS) -> list[Span]:
    """Offsets of the chunks of ``text``, packed greedily up to ``max_chars`` each.

    A single word longer than ``max_chars`` becomes one oversized chunk: cutting inside a
    word would corrupt identifiers, URLs and secrets that the guardrails must see whole.
    """
    if max_chars < 1:
        raise ValueError(f"max_chars must be at least 1, got {max_chars}")
    spans: list[Span] = []
    current: Span | None = None
    for start, end in _units(text, max_chars):
        if current is not None and end - current[0] <= max_chars:
            current = (current[0], end)
            continue
        if current is not None:
            spans.append(current)
        current = (start, end)
    if current is not None:
        spans.append(current)
    return spans


def check_text(document: Document) -> None:
    """A document without text is the caller's error, never an empty chunk list."""
    if not isinstance(document.text, str) or not document.text.strip():
        raise ValueError(f"document {document.doc_id!r} has no text (empty or whitespace only)")


def chunk_document(document: Document, max_chars: int = DEFAULT_MAX_CHARS) -> list[Chunk]:
    check_text(document)
    return [
        Chunk(
            chunk_id(document.doc_id, n), document.doc_id, n, document.text[s:e], document.metadata
        )
        for n, (s, e) in enumerate(split_spans(document.text, max_chars))
    ]
