"""``regex`` scanner: the contract's fields and defaults, redaction of every match, ReDoS guard."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from sentinel_runtime.guardrails.policy import parse_policy
from sentinel_runtime.guardrails.scanners import REGISTRY
from sentinel_runtime.guardrails.scanners.base import REDACTION, ScanResult
from sentinel_runtime.guardrails.scanners.regex import SCANNER, RegexParams
from support.scanners import scanning

# Passes the load-time probe (runs of one character) but backtracks exponentially on "abab…!".
SCAN_TIME_REDOS = r"(?:a|b|ab)+$"


scan = scanning(SCANNER)


def test_registered_under_seed_name() -> None:
    assert REGISTRY["regex"] is SCANNER


def test_seed_defaults() -> None:
    params = RegexParams.model_validate({"patterns": ["x"]})
    assert params.match_type == "search"
    assert params.is_blocked is True
    assert params.can_redact() is True


def test_no_match_is_clean() -> None:
    result = scan("nothing to see here", patterns=[r"\d{3}-\d{2}-\d{4}"])
    assert result == ScanResult("nothing to see here", True, -1.0)


def test_search_match_is_redacted() -> None:
    result = scan("my ssn: 123-45-6789, ok", patterns=[r"(?i)ssn:\s*\d{3}-\d{2}-\d{4}"])
    assert result == ScanResult(f"my {REDACTION}, ok", False, 1.0)


def test_every_match_of_every_pattern_is_redacted() -> None:
    # llm-guard redacts only the first pattern's matches; we must redact all of them.
    text = "foo1 then bar, foo2 then bar again, foo3"
    result = scan(text, patterns=[r"foo\d", r"\bbar\b"])
    assert result.text == (
        f"{REDACTION} then {REDACTION}, {REDACTION} then {REDACTION} again, {REDACTION}"
    )
    assert "foo" not in result.text
    assert "bar" not in result.text
    assert not result.valid


def test_overlapping_matches_merge_into_one_redaction() -> None:
    result = scan("xx abcdefgh yy", patterns=["abcdef", "cdefgh"])
    assert result.text == f"xx {REDACTION} yy"


def test_matches_of_later_pattern_are_redacted_when_first_has_none() -> None:
    result = scan("token sk-abcdefghijklmnopqrstu", patterns=[r"AKIA\w+", r"sk-\w{20,}"])
    assert result.text == f"token {REDACTION}"


def test_zero_length_matches_are_not_hits() -> None:
    assert scan("abc", patterns=[r"\d*"]).valid


def test_inline_flags_are_honoured() -> None:
    result = scan("Authorization: BEARER abc", patterns=[r"(?i)bearer \w+"])
    assert result.text == f"Authorization: {REDACTION}"


def test_block_action_leaves_text_unchanged() -> None:
    result = scan("foo1 and foo2", rewrite=False, patterns=[r"foo\d"])
    assert result == ScanResult("foo1 and foo2", False, 1.0)


@pytest.mark.parametrize(
    ("text", "valid"),
    [
        pytest.param("123-45-6789", False, id="whole-text-matches"),
        pytest.param("SSN 123-45-6789", True, id="match-inside-text-is-not-full"),
        pytest.param("123-45-6789\n", True, id="trailing-newline-is-not-full"),
    ],
)
def test_fullmatch_requires_the_whole_text(text: str, valid: bool) -> None:
    result = scan(text, patterns=[r"\d{3}-\d{2}-\d{4}"], match_type="fullmatch")
    assert result.valid is valid
    assert result.text == (text if valid else REDACTION)


def test_search_mode_matches_inside_text_where_fullmatch_does_not() -> None:
    assert not scan("SSN 123-45-6789", patterns=[r"\d{3}-\d{2}-\d{4}"]).valid


@pytest.mark.parametrize(
    ("spelling", "meaning"),
    [
        pytest.param("FullMatch", "fullmatch", id="FullMatch"),
        pytest.param("FULLMATCH", "fullmatch", id="FULLMATCH"),
        pytest.param("Search", "search", id="Search"),
        pytest.param("ALL", "all", id="ALL"),
    ],
)
def test_match_type_is_accepted_in_any_case(spelling: str, meaning: str) -> None:
    # The contract's parser lower-cases match_type (docs/contracts.md).
    params = RegexParams.model_validate({"patterns": ["x"], "match_type": spelling})
    assert params.match_type == meaning


def test_match_type_case_changes_nothing_but_the_spelling() -> None:
    text = "SSN 123-45-6789"
    pattern = [r"\d{3}-\d{2}-\d{4}"]
    assert scan(text, patterns=pattern, match_type="FullMatch").valid
    assert scan("123-45-6789", patterns=pattern, match_type="FullMatch").text == REDACTION


def test_match_type_all_redacts_every_match_as_search_does() -> None:
    # llm-guard's "all" redacts every match of the first matching pattern; Sentinel's search
    # already redacts every match of every pattern, so "all" is that too.
    text = "foo1 bar foo2 baz3"
    patterns = [r"foo\d", r"baz\d"]
    expected = f"{REDACTION} bar {REDACTION} {REDACTION}"
    assert scan(text, patterns=patterns, match_type="all").text == expected
    assert scan(text, patterns=patterns).text == expected


@pytest.mark.parametrize(
    ("text", "valid"),
    [
        pytest.param("OK: the deployment finished", True, id="allowed-pattern-present"),
        pytest.param("Something else entirely", False, id="no-allowed-pattern"),
    ],
)
def test_allow_list_mode(text: str, valid: bool) -> None:
    result = scan(text, patterns=[r"^OK:", r"^DONE\b"], is_blocked=False)
    assert result.valid is valid
    assert result.text == text  # nothing to cut out in allow-list mode
    assert result.score == (-1.0 if valid else 1.0)


def test_allow_list_mode_cannot_redact() -> None:
    params = RegexParams.model_validate({"patterns": ["x"], "is_blocked": False})
    assert params.can_redact() is False


@pytest.mark.parametrize(
    "pattern",
    [
        pytest.param(r"(a+)+$", id="nested-plus"),
        pytest.param(r"(a*)*$", id="nested-star"),
        pytest.param(r"(a|aa)+$", id="overlapping-alternation"),
        pytest.param(r"(x+x+)+y", id="overlapping-plus"),
        pytest.param(r"(\w+\s?)+$", id="words-optional-space"),
    ],
)
def test_catastrophic_backtracking_pattern_is_rejected(pattern: str) -> None:
    with pytest.raises(ValidationError, match="backtracks catastrophically"):
        RegexParams.model_validate({"patterns": ["ok", pattern]})


@pytest.mark.parametrize(
    "pattern",
    [
        pytest.param("(", id="unbalanced-paren"),
        pytest.param("[a-", id="unterminated-class"),
        pytest.param("a{2,1}", id="bad-repeat"),
    ],
)
def test_invalid_regex_is_rejected(pattern: str) -> None:
    with pytest.raises(ValidationError, match="does not compile"):
        RegexParams.model_validate({"patterns": [pattern]})


@pytest.mark.parametrize(
    "config",
    [
        pytest.param({}, id="patterns-missing"),
        pytest.param({"patterns": []}, id="patterns-empty"),
        pytest.param({"patterns": [""]}, id="empty-pattern"),
        pytest.param({"patterns": "abc"}, id="patterns-not-a-list"),
        pytest.param({"patterns": [1]}, id="pattern-not-a-string"),
        pytest.param({"patterns": ["a"], "match_type": "match"}, id="unknown-match-type"),
        pytest.param({"patterns": ["a"], "is_blocked": "false"}, id="bool-as-string"),
    ],
)
def test_invalid_config_is_rejected(config: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        RegexParams.model_validate(config)


def test_pattern_that_backtracks_only_at_scan_time_raises_timeout() -> None:
    # The load-time probe cannot catch every ReDoS; the per-scan timeout must.
    params = RegexParams.model_validate({"patterns": [SCAN_TIME_REDOS]})
    scanner = SCANNER.build(params, True)
    assert scanner.scan("abab").text == REDACTION
    with pytest.raises(TimeoutError):
        scanner.scan("ab" * 40 + "!")


@pytest.mark.parametrize(
    "secret",
    [
        pytest.param("-----BEGIN RSA PRIVATE KEY-----", id="pem-header"),
        pytest.param("-----BEGIN PRIVATE KEY-----", id="pem-header-no-algorithm"),
        pytest.param("AKIAIOSFODNN7EXAMPLE", id="aws-access-key-id"),
        pytest.param("AIzaSyA1234567890abcdefghijklmnopqrstuv", id="google-api-key"),
        pytest.param("ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", id="github-ghp"),
        pytest.param("gho_" + "z" * 36, id="github-gho"),
        pytest.param("sk-" + "a1B2" * 6, id="sk-key"),
        pytest.param("Bearer eyJhbGciOiJIUzI1NiJ9.abcdefghijk", id="bearer-token"),
    ],
)
def test_default_policy_patterns_cover_seed_token_formats(secret: str) -> None:
    spec = next(s for s in parse_policy(_default_policy()).scanners if s.type == "regex")
    scanner = SCANNER.build(spec.params, True)
    result = scanner.scan(f"here it is: {secret} (done)")
    assert result.text == f"here it is: {REDACTION} (done)"


def _default_policy() -> bytes:
    from importlib.resources import files

    return (files("sentinel_runtime.guardrails") / "default_policy.yaml").read_bytes()
