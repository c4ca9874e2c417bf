"""Retrieval necessity: every question retrieves; only turns no document could help with skip
retrieval, and the gate's plan says which kind of turn it skipped."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

from sentinel_runtime.pipeline.gate import planner
from sentinel_runtime.pipeline.types import Introspection
from sentinel_runtime.pipeline.understand import canonical, retrieval_need

QUESTION_REASONS = {"question", "information_request", "document_reference"}


def assess(text: str) -> retrieval_need.NeedAssessment:
    # The introspection assesses the canonical prompt, so the tests do too.
    return retrieval_need.assess(canonical.canonicalise(text).text)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("What is Kestrel?", id="what-is-name"),
        pytest.param("What is a legal hold?", id="what-is-term"),
        pytest.param("What is Project Halcyon?", id="what-is-project"),
        pytest.param("What's the retention period for invoices?", id="whats"),
        pytest.param("What does RPO mean?", id="what-does-mean"),
        pytest.param("What is photosynthesis?", id="what-is-general"),
        pytest.param("Who leads Project Halcyon?", id="who"),
        pytest.param("When does the legal hold end?", id="when"),
        pytest.param("Where are the Kestrel servers hosted?", id="where"),
        pytest.param("How does Kestrel index logs?", id="how"),
        pytest.param("How many engineers work on Halcyon?", id="how-many"),
        pytest.param("How much does a Kestrel licence cost?", id="how-much"),
        pytest.param("Why was Halcyon started?", id="why"),
        pytest.param("Which team owns Kestrel?", id="which"),
        pytest.param("Is Kestrel available on weekends?", id="yes-no"),
        pytest.param("Explain legal holds", id="explain"),
        pytest.param("Define legal hold.", id="define"),
        pytest.param("Definition of a legal hold", id="definition-of"),
        pytest.param("Compare Kestrel and Grafana Loki", id="compare"),
        pytest.param("Tell me about Project Halcyon", id="tell-me-about"),
        pytest.param("Please describe the Halcyon rollout plan", id="describe"),
        pytest.param("Can you explain what a legal hold is?", id="polite-explain"),
        pytest.param("Kestrel?", id="bare-term-question"),
        pytest.param("Hello! What is Kestrel?", id="greeting-then-question"),
        pytest.param("Thanks. Who leads Halcyon?", id="thanks-then-question"),
        pytest.param("Was ist Kestrel?", id="de-was-ist"),
        pytest.param("Was ist ein Legal Hold?", id="de-was-ist-term"),
        pytest.param("Wer leitet Projekt Halcyon?", id="de-wer"),
        pytest.param("Wann endet die Aufbewahrungspflicht?", id="de-wann"),
        pytest.param("Wo stehen die Kestrel-Server?", id="de-wo"),
        pytest.param("Wie funktioniert Kestrel?", id="de-wie"),
        pytest.param("Wie viele Mitarbeiter arbeiten an Halcyon?", id="de-wie-viele"),
        pytest.param("Warum gibt es Projekt Halcyon?", id="de-warum"),
        pytest.param("Erkläre Projekt Halcyon", id="de-erklaere"),
        pytest.param("Definiere Legal Hold", id="de-definiere"),
        pytest.param("Vergleiche Kestrel und Grafana Loki", id="de-vergleiche"),
        pytest.param("Was sagt unser Handbuch zu Reisekosten?", id="de-our-handbook"),
    ],
)
def test_questions_always_retrieve(text: str) -> None:
    found = assess(text)
    assert found.need != "none"
    assert found.reason in QUESTION_REASONS


@pytest.mark.parametrize(
    ("text", "need", "reason"),
    [
        pytest.param("What is Kestrel?", "optional", "question", id="question"),
        pytest.param("Explain legal holds", "optional", "information_request", id="imperative"),
        pytest.param("Kestrel pricing", "optional", "open_request", id="keywords"),
        pytest.param(
            "What does our travel policy say about per diems?",
            "required",
            "document_reference",
            id="our-policy",
        ),
        pytest.param("Summarise the attached contract.", "required", "document_reference"),
        pytest.param(
            "Rewrite this paragraph following our style guide: we is happy to help.",
            "required",
            "document_reference",
            id="rewrite-by-our-guide",
        ),
    ],
)
def test_retrieving_verdicts_carry_their_reason(text: str, need: str, reason: str) -> None:
    assert assess(text) == retrieval_need.NeedAssessment(need, reason)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        pytest.param("hi", "greeting", id="hi"),
        pytest.param("Hello there!", "greeting", id="hello-there"),
        pytest.param("Good morning", "greeting", id="good-morning"),
        pytest.param("Good morning everyone :)", "greeting", id="good-morning-everyone"),
        pytest.param("Hi Anna, how are you?", "greeting", id="hi-how-are-you"),
        pytest.param("Guten Morgen", "greeting", id="de-guten-morgen"),
        pytest.param("Hallo zusammen!", "greeting", id="de-hallo"),
        pytest.param("thanks!", "thanks", id="thanks"),
        pytest.param("Thank you so much for your help!", "thanks", id="thank-you-for"),
        pytest.param("Thanks, bye!", "thanks", id="thanks-bye"),
        pytest.param("Vielen Dank!", "thanks", id="de-vielen-dank"),
        pytest.param("How's it going?", "small_talk", id="hows-it-going"),
        pytest.param("Wie geht's?", "small_talk", id="de-wie-gehts"),
        pytest.param("ok, got it", "small_talk", id="ok-got-it"),
        pytest.param("2 + 2", "arithmetic", id="bare-sum"),
        pytest.param("What is 12 * (3 + 4)?", "arithmetic", id="what-is-expression"),
        pytest.param("What's 15% of 80?", "arithmetic", id="percent-of"),
        pytest.param("How much is 7 divided by 2?", "arithmetic", id="divided-by"),
        pytest.param("What is the square root of 144?", "arithmetic", id="square-root"),
        pytest.param("Was ist 3 mal 4?", "arithmetic", id="de-mal"),
        pytest.param("Berechne 100 geteilt durch 8", "arithmetic", id="de-berechne"),
        pytest.param(
            "Rephrase this: the meeting got moved to friday because nobody could come",
            "pasted_text_task",
            id="rephrase",
        ),
        pytest.param(
            "Translate to French: the office is closed on Monday",
            "pasted_text_task",
            id="translate",
        ),
        pytest.param(
            "Fix the grammar in the following paragraph: he go to school every days.",
            "pasted_text_task",
            id="fix-grammar",
        ),
        pytest.param(
            "Summarize this:\nQ3 revenue grew by 4 percent while costs stayed flat.",
            "pasted_text_task",
            id="summarise-next-line",
        ),
        pytest.param(
            'Translate "Guten Morgen, wie geht es Ihnen?" into English',
            "pasted_text_task",
            id="translate-quoted",
        ),
        pytest.param(
            "Proofread this sentence. Their going to the the meeting tomorow.",
            "pasted_text_task",
            id="proofread-after-full-stop",
        ),
        pytest.param(
            "Can you shorten this email: Hi team, a reminder that the kitchen closes at five.",
            "pasted_text_task",
            id="polite-shorten",
        ),
        pytest.param(
            "Übersetze ins Englische: Die Sitzung wurde auf Freitag verschoben.",
            "pasted_text_task",
            id="de-uebersetze",
        ),
        pytest.param(
            "Fasse folgenden Text zusammen: Der Umsatz stieg um vier Prozent.",
            "pasted_text_task",
            id="de-fasse-zusammen",
        ),
    ],
)
def test_turns_that_need_no_documents_skip_retrieval_with_their_reason(
    text: str, reason: str
) -> None:
    assert assess(text) == retrieval_need.NeedAssessment("none", reason)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("What is 2027?", id="number-without-operation"),
        pytest.param("Fix the VPN error: error 809 when connecting", id="fix-not-a-text"),
        pytest.param("Summarise the onboarding guide. Keep it short.", id="nothing-pasted"),
        pytest.param("Translate our handbook into French", id="translate-a-document"),
        pytest.param("Hi, what is Kestrel", id="greeting-with-question-no-mark"),
        pytest.param("Thanks for explaining how Kestrel indexes logs", id="long-thanks-topic"),
    ],
)
def test_near_misses_of_the_skip_rules_still_retrieve(text: str) -> None:
    assert assess(text).need != "none"


@pytest.mark.timeout(10)
def test_a_long_almost_arithmetic_turn_is_assessed_in_linear_time() -> None:
    # Ambiguous spacing in the expression pattern once made this backtrack exponentially
    # (14 terms took half a minute); 2,000 terms must take milliseconds.
    started = time.perf_counter()
    assert assess("1  + " * 2000 + "1  a").need != "none"
    assert time.perf_counter() - started < 1.0


NOW = datetime(2026, 6, 1, tzinfo=UTC)


def skipped_state(reason: str) -> Introspection:
    return Introspection(
        intent="benign",
        risk_category="none",
        severity=0.0,
        confidence=0.9,
        retrieval_need="none",
        retrieval_need_reason=reason,
    )


@pytest.mark.parametrize("reason", ["greeting", "arithmetic", "pasted_text_task"])
def test_the_gate_names_the_need_reason_when_it_skips_retrieval(reason: str) -> None:
    plan = planner.plan_retrieval(
        canonical.canonicalise("hi"), skipped_state(reason), planner.GateConfig(), NOW
    )
    assert plan.action == "no_retrieve"
    assert plan.reasons == ("no_retrieval_needed", f"need_reason:{reason}")


def test_a_state_without_a_need_reason_keeps_the_plain_skip_reason() -> None:
    # The LLM backend gives no reason code: the plan must not invent one.
    plan = planner.plan_retrieval(
        canonical.canonicalise("hi"), skipped_state(""), planner.GateConfig(), NOW
    )
    assert plan.reasons == ("no_retrieval_needed",)


def test_every_verdict_of_the_builtin_assessment_reaches_the_gate_as_retrieve_or_skip() -> None:
    # A question's state retrieves; a greeting's is skipped with its reason (end to end of
    # retrieval_need -> gate, as introspection wires them).
    for text, action in (("What is Kestrel?", "retrieve"), ("Thanks!", "no_retrieve")):
        found = assess(text)
        state = Introspection(
            intent="benign",
            risk_category="none",
            severity=0.0,
            confidence=0.9,
            retrieval_need=found.need,
            retrieval_need_reason=found.reason,
        )
        plan = planner.plan_retrieval(
            canonical.canonicalise(text), state, planner.GateConfig(), NOW
        )
        assert plan.action == action
        if action == "no_retrieve":
            assert plan.reasons == ("no_retrieval_needed", "need_reason:thanks")
