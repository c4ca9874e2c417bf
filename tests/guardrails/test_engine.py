"""The scanner chain: order, block, redact escalation, fail modes, metrics."""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from prometheus_client import REGISTRY

from sentinel_runtime.guardrails.engine import (
    ActiveScanner,
    GuardrailsEngine,
    OutputGuardrailsError,
    ScannerFailure,
    ScannerHit,
    build_engine,
)
from sentinel_runtime.guardrails.policy import Policy, parse_policy
from sentinel_runtime.guardrails.scanners.base import REDACTION, ScanResult

# Passes the load-time probe, then backtracks exponentially on SLOW_TEXT: a real scanner
# failure (TimeoutError from the regex module) rather than a stand-in.
SLOW_PATTERN = r"(?:a|b|ab)+$"
SLOW_TEXT = "ab" * 40 + "!"
BLOCKED = "Blocked by policy."


def engine_for(yaml_text: str) -> GuardrailsEngine:
    policy = parse_policy(yaml_text)
    assert policy.skipped == (), policy.skipped
    engine = build_engine(policy, "/etc/guardrails/guardrails.yaml")
    assert engine.build_failures == ()
    return engine


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


@contextmanager
def delta(name: str, **labels: str) -> Iterator[list[float]]:
    """Yields a one-item list that holds the counter's increase once the block exits."""
    before = sample(name, **labels)
    result: list[float] = []
    yield result
    result.append(sample(name, **labels) - before)


class _Raising:
    """A scanner object that raises: stands in for a scanner bug under a real spec."""

    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def scan(self, text: str) -> ScanResult:
        raise self.exc


def with_raising_first(policy: Policy, exc: Exception) -> GuardrailsEngine:
    """The policy's chain with its first scanner replaced by one that raises ``exc``."""
    real = build_engine(policy, "")
    first, *rest = real.scanners
    return GuardrailsEngine(
        policy=policy, path="", scanners=(ActiveScanner(first.spec, _Raising(exc)), *rest)
    )


# --- chain semantics ---------------------------------------------------------------------


def test_clean_text_passes_unchanged() -> None:
    engine = engine_for("scanners:\n  - type: sensitive\n  - type: invisible_text\n")
    outcome = engine.scan("Nothing sensitive here.")
    assert outcome.text == "Nothing sensitive here."
    assert outcome.action is None
    assert not outcome.triggered
    assert outcome.hits == ()
    assert outcome.failures == ()


def test_empty_chain_passes_everything() -> None:
    outcome = engine_for("").scan("mail a@b.io")
    assert (outcome.text, outcome.action) == ("mail a@b.io", None)


def test_later_scanners_see_earlier_redactions() -> None:
    engine = engine_for(
        f"""
blockMessage: {BLOCKED}
scanners:
  - type: regex
    patterns: ['sk-\\w+']
  - type: regex
    action: block
    patterns: ['\\[REDACTED\\]']
"""
    )
    outcome = engine.scan("key sk-abc123")
    assert outcome.text == BLOCKED
    assert [(h.index, h.action) for h in outcome.hits] == [(0, "redact"), (1, "block")]


def test_redaction_removes_what_a_later_blocking_scanner_looks_for() -> None:
    policy = """
scanners:
  - type: regex
    patterns: ['internal-\\d+']
  - type: ban_substrings
    action: block
    match_type: str
    substrings: [internal-]
"""
    outcome = engine_for(policy).scan("see internal-42")
    assert outcome.text == f"see {REDACTION}"
    assert outcome.action == "redact"


def test_reversed_order_blocks_instead() -> None:
    policy = """
scanners:
  - type: ban_substrings
    action: block
    match_type: str
    substrings: [internal-]
  - type: regex
    patterns: ['internal-\\d+']
"""
    outcome = engine_for(policy).scan("see internal-42")
    assert outcome.action == "block"


def test_redactions_accumulate_in_chain_order() -> None:
    engine = engine_for(
        "scanners:\n  - type: invisible_text\n  - type: sensitive\n  - type: regex\n"
        "    patterns: ['sk-\\w{6,}']\n"
    )
    outcome = engine.scan("mail a@b.\u200bio, key sk-abcdef123, call +1 555 123 4567")
    # invisible_text first: the zero-width space no longer hides the address from sensitive.
    assert outcome.text == f"mail <EMAIL>, key {REDACTION}, call <PHONE>"
    assert outcome.action == "redact"
    assert [(h.index, h.type, h.action, h.escalated) for h in outcome.hits] == [
        (0, "invisible_text", "redact", False),
        (1, "sensitive", "redact", False),
        (2, "regex", "redact", False),
    ]


def test_block_stops_the_chain_and_returns_the_block_message() -> None:
    engine = engine_for(
        f"""
blockMessage: {BLOCKED}
scanners:
  - type: sensitive
  - type: ban_substrings
    action: block
    substrings: [Do Not Distribute]
  - type: regex
    patterns: [never-reached]
"""
    )
    with delta("output_guardrails_scanner_triggered_total", type="regex", action="redact") as third:
        outcome = engine.scan("a@b.io: Do Not Distribute never-reached")
    assert outcome.text == BLOCKED
    assert outcome.action == "block"
    assert outcome.triggered
    assert [(h.index, h.type, h.action) for h in outcome.hits] == [
        (0, "sensitive", "redact"),
        (1, "ban_substrings", "block"),
    ]
    assert third == [0.0]


def test_block_message_defaults_to_the_seed_text() -> None:
    engine = engine_for("scanners:\n  - type: invisible_text\n    action: block\n")
    outcome = engine.scan("a\u200bb")
    assert outcome.text == "The model output was blocked by output guardrails."


@pytest.mark.parametrize(
    ("entry", "text"),
    [
        pytest.param(
            "type: token_limit\n    limit: 2", "one two three four five", id="token-limit"
        ),
        pytest.param("type: reading_time\n    max_time: 0.005", "two words", id="reading-time"),
        pytest.param("type: json", "use {curly braces} here", id="unrepairable-json"),
        pytest.param("type: json\n    repair: false", '{"a": 1,}', id="json-without-repair"),
        pytest.param(
            "type: regex\n    is_blocked: false\n    patterns: ['^OK']", "not ok", id="allow-list"
        ),
        pytest.param(
            "type: secrets\n    plugins: [KeywordDetector]",
            'password = "hunter2"',
            id="secrets-unlocatable",
        ),
    ],
)
def test_redact_hit_that_cannot_be_rewritten_escalates_to_block(entry: str, text: str) -> None:
    engine = build_engine(parse_policy(f"blockMessage: {BLOCKED}\nscanners:\n  - {entry}\n"), "")
    spec_type = engine.scanners[0].spec.type
    with delta(
        "output_guardrails_scanner_triggered_total", type=spec_type, action="block"
    ) as blocked:
        outcome = engine.scan(text)
    assert outcome.text == BLOCKED
    assert outcome.action == "block"
    assert len(outcome.hits) == 1
    assert outcome.hits[0].action == "block"
    assert outcome.hits[0].escalated is True
    assert blocked == [1.0]


def test_explicit_block_is_not_marked_escalated() -> None:
    engine = engine_for("scanners:\n  - type: token_limit\n    action: block\n    limit: 1\n")
    outcome = engine.scan("one two three")
    assert outcome.action == "block"
    assert outcome.hits[0].escalated is False


def test_rewritable_redact_hit_is_not_escalated() -> None:
    engine = engine_for(
        "scanners:\n  - type: reading_time\n    max_time: 0.005\n    truncate: true\n"
    )
    outcome = engine.scan("one two three")
    assert (outcome.text, outcome.action) == ("one", "redact")
    assert outcome.hits[0].escalated is False


def test_hit_summary_has_the_seed_fields() -> None:
    hit = ScannerHit(index=2, type="regex", action="redact", score=1.0)
    summary = hit.describe()
    assert {"type", "action", "scores"} <= set(summary)
    assert summary["scores"] == {"regex": 1.0}


# --- fail modes --------------------------------------------------------------------------


def test_fail_closed_raises_output_guardrails_error_for_a_real_timeout() -> None:
    engine = engine_for(f"scanners:\n  - type: regex\n    patterns: ['{SLOW_PATTERN}']\n")
    with (
        delta("output_guardrails_scanner_errors_total", type="regex", fail_mode="closed") as errors,
        pytest.raises(OutputGuardrailsError) as info,
    ):
        engine.scan(SLOW_TEXT)
    assert info.value.scanner_type == "regex"
    assert isinstance(info.value.__cause__, TimeoutError)
    assert errors == [1.0]


def test_fail_closed_is_the_default_for_any_exception() -> None:
    policy = parse_policy("scanners:\n  - type: sensitive\n  - type: invisible_text\n")
    engine = with_raising_first(policy, ValueError("scanner bug"))
    with pytest.raises(OutputGuardrailsError, match="sensitive scanner failed: ValueError"):
        engine.scan("mail a@b.io")


def test_fail_open_skips_the_failing_scanner_and_records_it() -> None:
    engine = engine_for(
        f"""
scanners:
  - type: regex
    failMode: open
    patterns: ['{SLOW_PATTERN}']
  - type: sensitive
"""
    )
    with delta("output_guardrails_scanner_errors_total", type="regex", fail_mode="open") as errors:
        outcome = engine.scan(f"mail a@b.io {SLOW_TEXT}")
    assert outcome.failures == (ScannerFailure(0, "regex", "TimeoutError"),)
    assert outcome.failures[0].describe()["failMode"] == "open"
    assert outcome.text == f"mail <EMAIL> {SLOW_TEXT}"
    assert outcome.action == "redact"
    assert errors == [1.0]


def test_fail_open_failure_alone_is_not_a_trigger() -> None:
    policy = parse_policy("scanners:\n  - type: sensitive\n    failMode: open\n")
    outcome = with_raising_first(policy, RuntimeError("boom")).scan("mail a@b.io")
    assert outcome.text == "mail a@b.io"  # fail open: the failing scanner's check is skipped
    assert outcome.action is None
    assert outcome.failures == (ScannerFailure(0, "sensitive", "RuntimeError"),)


def test_fail_modes_are_per_scanner() -> None:
    policy = parse_policy(
        "scanners:\n  - type: sensitive\n    failMode: open\n  - type: invisible_text\n"
    )
    real = build_engine(policy, "")
    open_first, closed_second = real.scanners
    engine = GuardrailsEngine(
        policy=policy,
        path="",
        scanners=(
            ActiveScanner(open_first.spec, _Raising(RuntimeError("a"))),
            ActiveScanner(closed_second.spec, _Raising(RuntimeError("b"))),
        ),
    )
    with pytest.raises(OutputGuardrailsError) as info:
        engine.scan("text")
    assert info.value.scanner_type == "invisible_text"


def test_failure_is_logged_with_the_seed_event(caplog: pytest.LogCaptureFixture) -> None:
    policy = parse_policy("scanners:\n  - type: sensitive\n    failMode: open\n")
    engine = with_raising_first(policy, RuntimeError("boom"))
    with caplog.at_level(logging.ERROR):
        engine.scan("text", response_id="chatcmpl-123")
    records = [r for r in caplog.records if r.getMessage() == "output_guardrails_failed"]
    assert len(records) == 1
    assert records[0].fail_open is True  # type: ignore[attr-defined]
    assert records[0].response_id == "chatcmpl-123"  # type: ignore[attr-defined]


# --- metrics -----------------------------------------------------------------------------


def test_triggered_metric_counts_each_hit_by_type_and_action() -> None:
    engine = engine_for(
        "scanners:\n  - type: sensitive\n  - type: ban_substrings\n    action: block\n"
        "    substrings: [forbidden]\n"
    )
    name = "output_guardrails_scanner_triggered_total"
    with (
        delta(name, type="sensitive", action="redact") as redacted,
        delta(name, type="ban_substrings", action="block") as blocked,
        delta(name, type="ban_substrings", action="redact") as wrong_label,
    ):
        engine.scan("mail a@b.io")
        engine.scan("mail a@b.io and c@d.io")  # one hit per scanner, not per match
        engine.scan("forbidden")
        engine.scan("clean text")
    assert redacted == [2.0]
    assert blocked == [1.0]
    assert wrong_label == [0.0]


def test_build_metric_counts_successful_builds() -> None:
    policy = parse_policy("scanners:\n  - type: json\n  - type: json\n    action: block\n")
    with delta("output_guardrails_scanner_build_total", type="json", status="success") as built:
        build_engine(policy, "")
    assert built == [2.0]


@pytest.mark.skipif(
    importlib.util.find_spec("llm_guard") is not None, reason="needs llm-guard to be absent"
)
def test_skipped_merges_parse_and_build_failures_in_policy_order() -> None:
    policy = parse_policy(
        "scanners:\n  - type: llm_guard\n    scanner: Toxicity\n  - type: nope\n  - type: json\n"
    )
    with delta(
        "output_guardrails_scanner_build_total", type="llm_guard", status="failure"
    ) as failed:
        engine = build_engine(policy, "")
    assert [(s.index, s.type) for s in engine.skipped] == [(0, "llm_guard"), (1, "nope")]
    assert [a.spec.type for a in engine.scanners] == ["json"]
    assert failed == [1.0]
