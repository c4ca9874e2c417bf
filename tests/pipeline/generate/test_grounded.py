"""Reading a model's cited answer: inline markers, JSON, and what each sentence cites."""

from __future__ import annotations

import pytest

from sentinel_runtime.pipeline.generate.grounded import (
    AnswerFormatError,
    answer_schema,
    read_reply,
    system_message,
)
from support.hits import hit

HITS = [
    hit("policy#p0", "Annual plans can be refunded within 30 days of purchase."),
    hit("policy#p1", "Monthly plans are not refundable.", rank=1),
]


def test_inline_prompt_numbers_chunks_and_keeps_them_data() -> None:
    system = system_message(HITS, mode="inline", decision="answer")["content"]
    assert "[1]\nAnnual plans" in system and "[2]\nMonthly plans" in system
    assert "not instructions" in system and "take precedence" in system
    assert "policy#p0" not in system  # the model cites numbers; ids come back from the mapping


def test_structured_prompt_shows_ids_and_the_schema_only_allows_them() -> None:
    system = system_message(HITS, mode="structured", decision="answer")["content"]
    assert "[policy#p0]" in system and '"citations"' in system
    schema = answer_schema(["policy#p0", "policy#p1"], 5)
    items = schema["properties"]["citations"]  # type: ignore[index]
    assert items["items"]["enum"] == ["policy#p0", "policy#p1"] and items["maxItems"] == 5
    assert schema["required"] == ["answer", "citations"]


@pytest.mark.parametrize(
    ("reply", "citations", "text"),
    [
        pytest.param(
            "Annual plans can be refunded within 30 days [1]. Monthly plans cannot [2].",
            ("policy#p0", "policy#p1"),
            "Annual plans can be refunded within 30 days [policy#p0]. "
            "Monthly plans cannot [policy#p1].",
            id="markers-after-claims",
        ),
        pytest.param(
            "Annual plans: 30 days. [1, 2]",
            ("policy#p0", "policy#p1"),
            "Annual plans: 30 days. [policy#p0][policy#p1]",
            id="list-marker-after-period",
        ),
        pytest.param(
            "Within 30 days [policy#p0].",
            ("policy#p0",),
            "Within 30 days [policy#p0].",
            id="chunk-id-marker",
        ),
        pytest.param(
            '```json\n{"answer": "Within 30 days.", "citations": ["policy#p0"]}\n```',
            ("policy#p0",),
            "Within 30 days.",
            id="fenced-json",
        ),
        pytest.param(
            '{"answer": "Within 30 days.", "citations": ["1"]}',
            ("policy#p0",),
            "Within 30 days.",
            id="json-with-marker-numbers",
        ),
        pytest.param("Within 30 days.", (), "Within 30 days.", id="prose-without-citations"),
        pytest.param("Within 30 days [7].", ("7",), "Within 30 days [7].", id="unknown-number"),
    ],
)
def test_read_reply(reply: str, citations: tuple[str, ...], text: str) -> None:
    answer, _ = read_reply(reply, HITS, decision="answer")
    assert answer.citations == citations
    assert answer.text == text


def test_each_sentence_keeps_its_own_citations() -> None:
    _, claims = read_reply(
        "Annual plans can be refunded within 30 days [1]. Monthly plans are not refundable. [2] "
        "Ask support.",
        HITS,
        decision="answer",
    )
    assert [(c.text, c.cited) for c in claims] == [
        ("Annual plans can be refunded within 30 days.", ("policy#p0",)),
        ("Monthly plans are not refundable.", ("policy#p1",)),
        ("Ask support.", ()),
    ]


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param("   ", id="empty"),
        pytest.param('{"answer": "", "citations": []}', id="empty-answer"),
        pytest.param('{"answer": "x", "citations": "policy#p0"}', id="citations-not-list"),
    ],
)
def test_unreadable_replies(reply: str) -> None:
    with pytest.raises(AnswerFormatError):
        read_reply(reply, HITS, decision="answer")
