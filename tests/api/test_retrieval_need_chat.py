"""Questions about an indexed corpus are retrieved for, through the runtime's app (in process).

"What is Kestrel?" once counted as self-contained and skipped retrieval, so a question about
the user's own corpus was answered "not in the documents". Here an index of invented
documents is asked with the official openai client: definitions and wh-questions retrieve
and cite the right document, a greeting skips retrieval and says why, and a question the
index cannot answer is retrieved for and answered with the insufficient-context text.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest

from sentinel_runtime.pipeline.cite.citations import INSUFFICIENT_ANSWER
from support.inprocess import app_runtime

INDEX = "acme-kb"
DOCS = [
    {
        "doc_id": "kestrel-overview",
        "text": "Kestrel v3 shipped in spring with a faster query engine. Kestrel is an "
        "internal log-search tool that the site reliability team uses to search production "
        "logs. Its servers are hosted in the Frankfurt data center.",
        "metadata": {"source": "wiki"},
    },
    {
        "doc_id": "legal-hold-policy",
        "text": "Legal holds are issued by the legal department when litigation is likely. "
        "A legal hold is an instruction to preserve every record relevant to a dispute, "
        "overriding normal deletion schedules. A hold stays in force until the general "
        "counsel releases it in writing.",
        "metadata": {"source": "policy"},
    },
    {
        "doc_id": "project-halcyon",
        "text": "Project Halcyon is the 2027 migration of the billing ledger to the new cloud "
        "platform. It is led by the payments team. The migration is expected to finish in "
        "March 2027.",
        "metadata": {"source": "wiki"},
    },
    {
        "doc_id": "cafeteria-hours",
        "text": "The cafeteria opens at eight on weekdays. Vegetarian dishes are served every "
        "day of the week.",
        "metadata": {"source": "facilities"},
    },
]


@pytest.fixture(scope="module")
def client() -> Iterator[openai.OpenAI]:
    with app_runtime({"DEMO_CORPUS": "false"}) as runtime:
        response = runtime.client.post("/index", json={"index_name": INDEX, "documents": DOCS})
        assert response.status_code == 200, response.text
        yield runtime.openai()


def ask(client: openai.OpenAI, question: str) -> tuple[str, dict[str, Any]]:
    reply = client.chat.completions.create(
        model="any",
        messages=[{"role": "user", "content": question}],
        extra_body={"index_name": INDEX},
    )
    return reply.choices[0].message.content or "", reply.model_extra["sentinel"]


@pytest.mark.parametrize(
    ("question", "doc_id", "quoted"),
    [
        pytest.param(
            "What is Kestrel?",
            "kestrel-overview",
            "Kestrel is an internal log-search tool",
            id="kestrel",
        ),
        pytest.param(
            "What is a legal hold?",
            "legal-hold-policy",
            "A legal hold is an instruction to preserve",
            id="legal-hold",
        ),
        pytest.param(
            "What is Project Halcyon?",
            "project-halcyon",
            "Project Halcyon is the 2027 migration",
            id="halcyon",
        ),
        pytest.param(
            "Who leads Project Halcyon?",
            "project-halcyon",
            "It is led by the payments team.",
            id="who-leads",
        ),
        pytest.param(
            "Was ist Kestrel?",
            "kestrel-overview",
            "Kestrel is an internal log-search tool",
            id="de-was-ist",
        ),
    ],
)
def test_a_question_about_the_corpus_is_retrieved_for_and_cites_its_document(
    client: openai.OpenAI, question: str, doc_id: str, quoted: str
) -> None:
    content, sentinel = ask(client, question)
    assert sentinel["gate"]["action"] == "retrieve"
    assert sentinel["gate"]["retrievalPerformed"] is True
    assert sentinel["introspection"]["retrievalNeed"] != "none"
    assert sentinel["decision"] == "answer"
    # The answer opens with the sentence that answers, followed by its citation.
    assert content.startswith(quoted)
    assert f"[{doc_id}#p0]" in content
    assert sentinel["citations"]["ids"][0] == f"{doc_id}#p0"
    assert sentinel["citations"]["validation"]["citation_valid"] is True


def test_a_greeting_skips_retrieval_and_says_why(client: openai.OpenAI) -> None:
    _, sentinel = ask(client, "Good morning!")
    assert sentinel["gate"]["action"] == "no_retrieve"
    assert sentinel["gate"]["reasons"] == ["no_retrieval_needed", "need_reason:greeting"]
    assert sentinel["gate"]["retrievalPerformed"] is False
    assert sentinel["gate"]["attempts"] == []


def test_a_question_the_index_cannot_answer_is_retrieved_for_then_said_so(
    client: openai.OpenAI,
) -> None:
    content, sentinel = ask(client, "What is the parental leave allowance in Portugal?")
    assert sentinel["gate"]["action"] == "retrieve"
    # Retrieval ran (the trace shows the attempt) and found nothing that answers.
    assert sentinel["gate"]["retrievalPerformed"] is True
    assert [a["action"] for a in sentinel["gate"]["attempts"]][:1] == ["retrieve"]
    assert content == INSUFFICIENT_ANSWER
    assert sentinel["citations"]["ids"] == []
    assert sentinel["citations"]["validation"]["citation_valid"] is True
