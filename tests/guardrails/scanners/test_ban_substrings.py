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


# match_type word is a \b on each side of the substring (docs/contracts.md: the contract's
# ban_substrings is llm-guard's). Which characters a \b needs depends on the substring's own
# edges: a word character at its edge needs a non-word one beside it, and a non-word
# character at its edge needs a word one.
@pytest.mark.parametrize(
    ("substring", "text", "expected"),
    [
        pytest.param("unsafe-", "go unsafe-x now", f"go {R}x now", id="dash-end-before-a-word"),
        pytest.param("unsafe-", "go unsafe- now", "go unsafe- now", id="dash-end-before-space"),
        pytest.param("unsafe-", "unsafe-", "unsafe-", id="dash-end-at-text-end"),
        pytest.param(".", "a.b", f"a{R}b", id="dot-between-words"),
        pytest.param(".", "the end.", "the end.", id="dot-before-text-end"),
        pytest.param(".", "a . b", "a . b", id="dot-between-spaces"),
        pytest.param("-x", "a-x", f"a{R}", id="dash-start-after-a-word"),
        pytest.param("-x", "a -x", "a -x", id="dash-start-after-space"),
        pytest.param("C++", "I like C++ a lot", "I like C++ a lot", id="plus-end-before-space"),
        pytest.param("C++", "C++x", f"{R}x", id="plus-end-before-a-word"),
        pytest.param("secret", "a secret.", f"a {R}.", id="word-edges-beside-punctuation"),
        pytest.param("secret", "secret_key", "secret_key", id="underscore-is-a-word-character"),
        pytest.param("for", "for—it", f"{R}—it", id="unicode-dash-is-not-a-word-character"),
        pytest.param("é", "café", "café", id="unicode-letters-are-word-characters"),
    ],
)
def test_word_boundaries_are_those_of_a_regex_word_boundary(
    substring: str, text: str, expected: str
) -> None:
    result = scan(text, substrings=[substring])
    assert result.text == expected
    assert result.valid is (expected == text)


def test_each_substring_of_a_list_gets_its_own_boundaries() -> None:
    # One alternation for the list, but "a.b" still needs the dot between word characters
    # and "top secret" a non-word character after it.
    result = scan("top secret a.b top secrets", substrings=[".", "top secret"])
    assert result.text == f"{R} a{R}b top secrets"


def test_case_insensitive_word_match_keeps_the_boundaries() -> None:
    result = scan("UNSAFE-X and Unsafe- x", substrings=["unsafe-"])
    assert result.text == f"{R}X and Unsafe- x"


def test_only_the_matches_are_redacted_not_other_occurrences() -> None:
    # llm-guard also replaces "secret" inside "secrets" once "secret" matched as a word; a
    # stream cannot take back "secrets" sent before that word came, so only matches go.
    result = scan("secrets first, then the secret", substrings=["secret"])
    assert result.text == f"secrets first, then the {R}"


@pytest.mark.parametrize("spelling", ["WORD", "Word", "STR", "Str"])
def test_match_type_is_accepted_in_any_case(spelling: str) -> None:
    params = BanSubstringsParams.model_validate({"substrings": ["x"], "match_type": spelling})
    assert params.match_type == spelling.lower()
    expected = "a[REDACTED]b" if spelling.lower() == "str" else "axb"
    assert scan("axb", substrings=["x"], match_type=spelling).text == expected


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
        pytest.param("go unsafe-", "unsafe-", id="a non-word end waits for a word character"),
        pytest.param("go unsafe- ", "", id="a space after it settles it"),
        pytest.param("a.", ".", id="a lone dot waits for what follows"),
        pytest.param("a.b", "", id="a dot with a word after it is final"),
    ],
)
def test_hold_keeps_only_an_end_that_can_begin_a_banned_string(text: str, held: str) -> None:
    from sentinel_runtime.guardrails.scanners import ban_substrings

    params = ban_substrings.BanSubstringsParams(
        substrings=["top secret", "Do Not Distribute", "unsafe-", "."]
    )
    scanner = ban_substrings.build(params, True)
    assert text[scanner.hold(text) :] == held
