"""The built-in extractive answer opens with the sentence that answers the question.

Every answering sentence below sits after the first sentence of its chunk, and usually
shares fewer of the question's words than a sentence that merely names the topic: ranking by
keyword overlap alone quoted "Project Halcyon is the 2027 migration ..." for "Who leads
Project Halcyon?". The answer type the wh-word asks for (a team, a date, a number, a place, a
reason, a definition) and the chunk's relevance for sentences that refer back ("It is led by
...") decide instead.
"""

from __future__ import annotations

import re

import pytest

from sentinel_runtime.pipeline.generate.extractive import extractive_answer
from support.hits import hit

CORPUS = [
    hit(
        "halcyon#p0",
        "Project Halcyon is the 2027 migration of the billing ledger to the new cloud "
        "platform. It is led by the payments team. The cutover is planned for 14 March 2027. "
        "The team has 14 engineers and two designers.",
        rank=0,
    ),
    hit(
        "kestrel#p0",
        "Kestrel v3 shipped in spring with a faster query engine. Kestrel is an internal "
        "log-search tool used by the site reliability engineers. Its servers are hosted in the "
        "Frankfurt data center.",
        rank=1,
    ),
    hit(
        "legal-hold#p0",
        "Legal holds protect evidence once litigation is likely. A legal hold is an instruction "
        "to preserve every record relevant to a dispute. A hold stays in force until the "
        "general counsel releases it in writing.",
        rank=2,
    ),
    hit(
        "travel#p0",
        "Travel over 5,000 euros needs approval before booking. Such trips are approved by the "
        "finance director, Maria Lopez.",
        rank=3,
    ),
    hit(
        "backups#p0",
        "Backups of the billing ledger are encrypted and kept for seven years. They are kept "
        "that long because tax law requires seven years of retention.",
        rank=4,
    ),
    hit(
        "halcyon-de#p0",
        "Projekt Halcyon ist die Migration des Hauptbuchs in die Cloud. Es wird vom "
        "Zahlungsteam geleitet. Die Umstellung ist für den 14. März 2027 geplant.",
        rank=5,
    ),
    hit(
        "cafeteria#p0",
        "The cafeteria serves lunch to every team. It opens at eight on weekdays.",
        rank=6,
    ),
]
_QUOTED = re.compile(r"(.+?) \[([^\]]+)\]")


def first_quote(question: str) -> tuple[str, str]:
    """The first quoted sentence of the answer and the chunk it cites."""
    answer = extractive_answer(question, CORPUS)
    match = _QUOTED.match(answer.text)
    assert match, answer.text
    return match.group(1), match.group(2)


@pytest.mark.parametrize(
    ("question", "sentence", "chunk_id"),
    [
        pytest.param(
            "Who leads Project Halcyon?",
            "It is led by the payments team.",
            "halcyon#p0",
            id="who-pronoun-sentence",
        ),
        pytest.param(
            "Who approves travel over 5,000 euros?",
            "Such trips are approved by the finance director, Maria Lopez.",
            "travel#p0",
            id="who-person",
        ),
        pytest.param(
            "When is the Halcyon cutover planned?",
            "The cutover is planned for 14 March 2027.",
            "halcyon#p0",
            id="when-date",
        ),
        pytest.param(
            "How long does a legal hold stay in force?",
            "A hold stays in force until the general counsel releases it in writing.",
            "legal-hold#p0",
            id="how-long",
        ),
        pytest.param(
            "How many people work in the Halcyon team?",
            "The team has 14 engineers and two designers.",
            "halcyon#p0",
            id="how-many",
        ),
        pytest.param(
            "Where are the Kestrel servers hosted?",
            "Its servers are hosted in the Frankfurt data center.",
            "kestrel#p0",
            id="where",
        ),
        pytest.param(
            "What is Kestrel?",
            "Kestrel is an internal log-search tool used by the site reliability engineers.",
            "kestrel#p0",
            id="what-is",
        ),
        pytest.param(
            "Define legal hold",
            "A legal hold is an instruction to preserve every record relevant to a dispute.",
            "legal-hold#p0",
            id="define",
        ),
        pytest.param(
            "Why are billing ledger backups kept for seven years?",
            "They are kept that long because tax law requires seven years of retention.",
            "backups#p0",
            id="why",
        ),
        pytest.param(
            "Wer leitet Projekt Halcyon?",
            "Es wird vom Zahlungsteam geleitet.",
            "halcyon-de#p0",
            id="de-wer",
        ),
        pytest.param(
            "Wann ist die Umstellung von Projekt Halcyon geplant?",
            "Die Umstellung ist für den 14. März 2027 geplant.",
            "halcyon-de#p0",
            id="de-wann",
        ),
    ],
)
def test_the_answer_opens_with_the_sentence_that_answers(
    question: str, sentence: str, chunk_id: str
) -> None:
    assert first_quote(question) == (sentence, chunk_id)


def test_with_one_sentence_allowed_it_is_the_answering_one() -> None:
    answer = extractive_answer("Who leads Project Halcyon?", CORPUS, max_sentences=1)
    assert answer.text == "It is led by the payments team. [halcyon#p0]"
    assert answer.citations == ("halcyon#p0",)


def test_a_sentence_of_the_right_type_from_an_unrelated_chunk_is_not_quoted() -> None:
    # "It opens at eight on weekdays." refers back and names a time, but its chunk says
    # nothing about legal holds.
    answer = extractive_answer("When does a legal hold end?", CORPUS)
    assert "cafeteria#p0" not in answer.citations
    assert answer.citations[0] == "legal-hold#p0"


def test_a_cue_made_of_the_question_words_is_no_answer() -> None:
    # "team" names the question's own topic: it does not make a sentence the "who" answer.
    hits = [
        hit(
            "rota#p0",
            "The support team rota changes every month. Alex Weber coordinates the support team.",
        )
    ]
    answer = extractive_answer("Who coordinates the support team rota?", hits)
    assert answer.text.startswith("Alex Weber coordinates the support team. [rota#p0]")


def test_a_weakly_related_chunk_lends_its_pronoun_sentences_nothing() -> None:
    # The Halcyon chunk shares only "project" with the question: "It is led by the payments
    # team." would answer "who", but about another project.
    answer = extractive_answer("Who leads Project Orion?", CORPUS)
    assert "payments team" not in answer.text
