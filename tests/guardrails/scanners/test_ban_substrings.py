"""``ban_substrings`` scanner: the contract's fields and defaults, word vs str, contains_all."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from sentinel_runtime.guardrails.scanners import REGISTRY
from sentinel_runtime.guardrails.scanners.ban_substrings import SCANNER, BanSubstringsParams
from sentinel_runtime.guardrails.scanners.base import REDACTION, ScanResult
from support.scanners import scanning

R = REDACTION


scan = scanning(SCANNER)


def test_registered_under_seed_name() -> None:
    assert REGISTRY["ban_substrings"] is SCANNER


def test_seed_defaults() -> None:
    params = BanSubstringsParams.model_validate({"substrings": ["x"]})
    assert params.match_type == "word"
    assert params.case_sensitive is False
    assert params.contains_all is False


def test_seed_example_label_is_redacted() -> None:
    result = scan(
        "Report (For Internal Use Only): numbers are up.",
        substrings=["For Internal Use Only", "Do Not Distribute"],
    )
    assert result == ScanResult(f"Report ({R}): numbers are up.", False, 1.0)


def test_no_match_is_clean() -> None:
    result = scan("A public summary.", substrings=["Do Not Distribute"])
    assert result == ScanResult("A public summary.", True, -1.0)


def test_every_occurrence_is_redacted() -> None:
    result = scan("alpha, beta, alpha again", substrings=["alpha", "beta"])
    assert result.text == f"{R}, {R}, {R} again"


@pytest.mark.parametrize(
    ("match_type", "text", "expected"),
    [
        pytest.param("word", "the password is", "the password is", id="word-skips-inside-word"),
        pytest.param("word", "the pass is", f"the {R} is", id="word-matches-whole-word"),
        pytest.param("word", "pass_through", "pass_through", id="word-underscore-is-word-char"),
        pytest.param("word", "(pass).", f"({R}).", id="word-punctuation-is-boundary"),
        pytest.param("str", "the password is", f"the {R}word is", id="str-matches-inside-word"),
        pytest.param("str", "bypass", f"by{R}", id="str-matches-suffix"),
    ],
)
def test_word_versus_str(match_type: str, text: str, expected: str) -> None:
    assert scan(text, substrings=["pass"], match_type=match_type).text == expected


@pytest.mark.parametrize(
    ("case_sensitive", "text", "hit"),
    [
        pytest.param(False, "for internal use only", True, id="insensitive-lower"),
        pytest.param(False, "FOR INTERNAL USE ONLY", True, id="insensitive-upper"),
        pytest.param(True, "for internal use only", False, id="sensitive-other-case"),
        pytest.param(True, "For Internal Use Only", True, id="sensitive-exact-case"),
    ],
)
def test_case_sensitivity(case_sensitive: bool, text: str, hit: bool) -> None:
    result = scan(text, substrings=["For Internal Use Only"], case_sensitive=case_sensitive)
    assert result.valid is not hit
    assert result.text == (R if hit else text)


@pytest.mark.parametrize(
    ("text", "hit"),
    [
        pytest.param("alpha only", False, id="one-of-two"),
        pytest.param("beta only", False, id="other-one-of-two"),
        pytest.param("alpha and BETA", True, id="both-any-case"),
    ],
)
def test_contains_all(text: str, hit: bool) -> None:
    result = scan(text, substrings=["alpha", "beta"], contains_all=True)
    assert result.valid is not hit
    assert result.text == (f"{R} and {R}" if hit else text)


def test_contains_all_counts_a_substring_inside_a_longer_one() -> None:
    # "secret" occurs (as a whole word) inside "top secret": both substrings are present.
    result = scan("this is top secret", substrings=["secret", "top secret"], contains_all=True)
    assert not result.valid
    assert result.text == f"this is {R}"


def test_contains_all_respects_word_mode_for_each_substring() -> None:
    # "pass" occurs only inside "password", which word mode does not count.
    result = scan("password and token", substrings=["pass", "token"], contains_all=True)
    assert result.valid


def test_longest_substring_wins() -> None:
    result = scan(
        "Do Not Distribute Externally, please.",
        substrings=["Do Not Distribute", "Do Not Distribute Externally"],
    )
    assert result.text == f"{R}, please."


def test_longest_first_regardless_of_list_order() -> None:
    result = scan("top secret plan", substrings=["top secret plan", "secret"], match_type="str")
    assert result.text == R


def test_substrings_are_literal_not_regex() -> None:
    assert scan("axb", substrings=["a.b"], match_type="str").valid
    assert scan("a.b", substrings=["a.b"], match_type="str").text == R


def test_substring_ending_in_symbol_matches_as_word() -> None:
    assert scan("I like C++ a lot", substrings=["C++"]).text == f"I like {R} a lot"


def test_block_action_leaves_text_unchanged() -> None:
    result = scan("Do Not Distribute", rewrite=False, substrings=["Do Not Distribute"])
    assert result == ScanResult("Do Not Distribute", False, 1.0)


@pytest.mark.parametrize(
    "config",
    [
        pytest.param({}, id="substrings-missing"),
        pytest.param({"substrings": []}, id="substrings-empty"),
        pytest.param({"substrings": [""]}, id="empty-substring"),
        pytest.param({"substrings": "abc"}, id="substrings-not-a-list"),
        pytest.param({"substrings": ["a"], "match_type": "regex"}, id="unknown-match-type"),
        pytest.param({"substrings": ["a"], "case_sensitive": "true"}, id="bool-as-string"),
        pytest.param({"substrings": ["a"], "contains_all": 1}, id="bool-as-int"),
    ],
)
def test_invalid_config_is_rejected(config: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        BanSubstringsParams.model_validate(config)


def test_no_character_past_the_searched_range_has_a_case_variant() -> None:
    # case_fold looks for IGNORECASE variants below CASED_LIMIT only.
    import sys

    from sentinel_runtime.guardrails.scanners.ban_substrings import CASED_LIMIT

    assert all(
        chr(c).lower() == chr(c) == chr(c).upper() for c in range(CASED_LIMIT, sys.maxunicode + 1)
    )


@pytest.mark.parametrize(
    ("text", "held"),
    [
        pytest.param("we say top", "top", id="a prefix of a phrase"),
        pytest.param("we say TOP SECRET", "TOP SECRET", id="a whole phrase waits for a boundary"),
        pytest.param("we say \u0131", "", id="dotless i is not a prefix here"),
        pytest.param("we say top secretary ", "", id="past the phrase: nothing"),
        pytest.param("say DO NOT DİSTR", "DO NOT DİSTR", id="re's case variants count"),
    ],
)
def test_hold_keeps_only_an_end_that_can_begin_a_banned_string(text: str, held: str) -> None:
    from sentinel_runtime.guardrails.scanners import ban_substrings

    params = ban_substrings.BanSubstringsParams(substrings=["top secret", "Do Not Distribute"])
    scanner = ban_substrings.build(params, True)
    assert text[scanner.hold(text) :] == held
