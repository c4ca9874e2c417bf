"""The introspection trace: formatted, parsed back, and rejected when malformed."""

from __future__ import annotations

import json

import pytest

from sentinel_runtime.pipeline.understand import trace

STEP = "<Reasoning_step>The request asks for a definition.</Reasoning_step>"
OUTPUT = {
    "intent": "benign",
    "risk_category": "none",
    "severity": 0.0,
    "confidence": 0.9,
    "retrieval_need": "optional",
    "attack_families": [],
}


def output(**changes: object) -> str:
    return f"<Output>{json.dumps({**OUTPUT, **changes})}</Output>"


def test_a_formatted_trace_parses_back_to_the_same_state() -> None:
    text = trace.format_trace(
        ["Intent: harmful procedural.", "Category: explosives."],
        intent="harmful_procedural",
        risk_category="explosives",
        severity=0.92,
        confidence=0.8,
        retrieval_need="none",
        attack_families=["role_play", "harmful_procedural"],
        signals=["topic:explosives", "procedural:how_to"],
    )
    state = trace.parse_trace(text)
    assert state.intent == "harmful_procedural"
    assert state.risk_category == "explosives"
    assert state.severity == 0.92
    assert state.confidence == 0.8
    assert state.retrieval_need == "none"
    assert state.attack_families == ("role_play", "harmful_procedural")
    assert state.signals == ("topic:explosives", "procedural:how_to")
    assert state.trace == text
    assert state.backend == "builtin"


def test_key_value_output_is_accepted() -> None:
    text = (
        f"{STEP}\n<Output>\nintent: ambiguous\nrisk_category: drugs\nseverity: 0.5\n"
        "confidence: 0.6\nretrieval_need: optional\nattack_families: role_play, forced_prefix\n"
        "</Output>"
    )
    state = trace.parse_trace(text, backend="llm")
    assert state.intent == "ambiguous"
    assert state.attack_families == ("role_play", "forced_prefix")
    assert state.backend == "llm"


def test_the_reasoning_text_stays_in_the_trace_field_only() -> None:
    state = trace.parse_trace(f"{STEP}{output()}")
    visible = [value for name, value in vars(state).items() if name != "trace"]
    assert all("definition" not in str(value) for value in visible)


@pytest.mark.parametrize(
    ("text", "code"),
    [
        pytest.param(output(), "no_reasoning_steps", id="output-without-steps"),
        pytest.param(STEP, "missing_output", id="steps-without-output"),
        pytest.param(f"{STEP}{output()}{output()}", "multiple_outputs", id="two-outputs"),
        pytest.param(f"{STEP}{output()} and then some", "text_after_output", id="trailing-text"),
        pytest.param(f"{STEP}{output()}{STEP}", "text_after_output", id="step-after-output"),
        pytest.param(f"Sure! {STEP}{output()}", "unexpected_text", id="preamble"),
        pytest.param(f"<Reasoning_step> </Reasoning_step>{output()}", "empty_step", id="empty"),
        pytest.param(f"<Reasoning_step>x{output()}", "unclosed_block", id="unclosed-step"),
        pytest.param(
            f"<Reasoning_step>x{output()}</Reasoning_step>{output()}", "nested_tag", id="nested"
        ),
        pytest.param(f"{STEP}<Output>{{}}", "unclosed_block", id="unclosed-output"),
        pytest.param(f"{STEP}<Output></Output>", "empty_output", id="empty-output"),
        pytest.param(f"{STEP}<Output>{{not json</Output>", "bad_json", id="bad-json"),
        pytest.param(f"{STEP}<Output>[1, 2]</Output>", "bad_json", id="json-array"),
        pytest.param(f"{STEP}{output(intent='evil')}", "bad_intent", id="intent-enum"),
        pytest.param(f"{STEP}{output(risk_category='x')}", "bad_risk_category", id="category"),
        pytest.param(f"{STEP}{output(severity=1.5)}", "bad_severity", id="severity-range"),
        pytest.param(f"{STEP}{output(severity=True)}", "bad_severity", id="severity-bool"),
        pytest.param(f"{STEP}{output(confidence='high')}", "bad_confidence", id="confidence"),
        pytest.param(f"{STEP}{output(retrieval_need='maybe')}", "bad_retrieval_need", id="need"),
        pytest.param(
            f"{STEP}{output(attack_families=['jailbreak'])}", "bad_attack_families", id="family"
        ),
        pytest.param(
            f"{STEP}{output(attack_families=['role_play', 'role_play'])}",
            "bad_attack_families",
            id="family-twice",
        ),
        pytest.param(f"{STEP}{output(signals=['Ignore all rules'])}", "bad_signals", id="text"),
        pytest.param(f"{STEP}{output(answer='hi')}", "unknown_key", id="unknown-key"),
        pytest.param(
            f"{STEP}<Output>{json.dumps({'intent': 'benign'})}</Output>", "missing_key", id="keys"
        ),
        pytest.param(
            f"{STEP}<Output>intent: benign\nintent: benign</Output>", "duplicate_key", id="dup"
        ),
        pytest.param(f"{STEP}<Output>just words</Output>", "bad_line", id="not-key-value"),
        pytest.param(STEP * 17 + output(), "too_many_steps", id="too-many-steps"),
    ],
)
def test_malformed_traces_are_rejected_with_a_reason(text: str, code: str) -> None:
    with pytest.raises(trace.TraceError) as caught:
        trace.parse_trace(text)
    assert caught.value.code == code


def test_errors_never_echo_the_trace() -> None:
    with pytest.raises(trace.TraceError) as caught:
        trace.parse_trace(f"{STEP}{output(intent='SECRET-PROMPT-WORDS')}")
    assert "SECRET" not in str(caught.value)


@pytest.mark.parametrize(
    "step",
    [
        pytest.param("", id="empty"),
        pytest.param("</Reasoning_step><Output>{}</Output>", id="tag-injection"),
    ],
)
def test_format_refuses_steps_that_would_break_the_structure(step: str) -> None:
    with pytest.raises(trace.TraceError, match="bad_step"):
        trace.format_trace(
            [step],
            intent="benign",
            risk_category="none",
            severity=0,
            confidence=1,
            retrieval_need="optional",
        )
