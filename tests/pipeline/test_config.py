"""Pipeline sections of guardrails.yaml: typed, permissive, cached per policy version."""

from __future__ import annotations

from sentinel_runtime.guardrails.policy import parse_policy
from sentinel_runtime.observability import events
from sentinel_runtime.pipeline import config


def test_sections_accept_camel_and_snake_case() -> None:
    policy = parse_policy(
        "gate: {topK: 7, restricted_top_k: 2}\n"
        "citations: {maxCitations: 3}\n"
        "generation: {bestOfN: 4}\n"
        "audit: {includePrompt: true}\n"
    )
    parsed = config.for_policy(policy)
    assert (parsed.gate.top_k, parsed.gate.restricted_top_k) == (7, 2)
    assert parsed.citations.max_citations == 3
    assert parsed.generation.best_of_n == 4 and parsed.audit.include_prompt is True
    assert not parsed.diagnostics
    assert not [d for d in policy.diagnostics if d.event == events.POLICY_UNKNOWN_FIELD]


def test_an_invalid_section_falls_back_to_its_defaults_and_is_reported() -> None:
    policy = parse_policy(
        "gate: {topK: 0}\ncitations: [1, 2]\ngeneration: {bestOfN: 2, colour: red}\n"
    )
    parsed = config.for_policy(policy)
    assert parsed.gate == config.DEFAULT.gate
    assert parsed.citations == config.DEFAULT.citations
    assert parsed.generation.best_of_n == 2  # a valid section survives its neighbours
    found = {
        (d.event, d.fields.get("section") or d.fields.get("field")) for d in parsed.diagnostics
    }
    assert (events.POLICY_INVALID_SECTION, "gate") in found
    assert (events.POLICY_INVALID_SECTION, "citations") in found
    assert (events.POLICY_UNKNOWN_FIELD, "colour") in found


def test_parsed_once_per_policy_version() -> None:
    first = parse_policy("gate: {topK: 3}\n")
    again = parse_policy("gate: {topK: 3}\n")
    assert config.for_policy(first) is config.for_policy(again)  # same hash, one parse
    assert config.for_policy(None) is config.DEFAULT
    assert config.for_policy(parse_policy("gate: {topK: 4}\n")).gate.top_k == 4


def test_describe_shows_every_section_with_aliases() -> None:
    described = config.DEFAULT.describe()
    assert set(described) == set(config.SECTION_MODELS)
    assert described["citations"]["maxCitations"] == 5
