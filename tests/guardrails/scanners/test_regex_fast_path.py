"""``regex`` scanner: the joined pre-check (one alternation, one timeout) gives exactly what
running every pattern alone gives: the same result on every text, the same errors."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from scanner_corpus import corpus

from sentinel_runtime.guardrails.scanners import regex as regex_scanner
from sentinel_runtime.guardrails.scanners.regex import RegexParams, RegexScanner
from support.scanners import SLOW_PATTERN, SLOW_TEXT

DEFAULT_POLICY = (
    Path(regex_scanner.__file__).resolve().parents[1] / "default_policy.yaml"
).read_text(encoding="utf-8")
DEFAULT_PATTERNS: list[str] = yaml.safe_load(DEFAULT_POLICY)["scanners"][0]["patterns"]

# Pattern sets with what makes joining them delicate; each must scan as the patterns alone do.
PATTERN_SETS = [
    pytest.param(DEFAULT_PATTERNS, id="default-policy"),
    pytest.param([r"abc", r"bcd", r"(?i)CDE", r"\bde"], id="overlapping"),
    pytest.param([r"(?i)stra(?:ss|ß)e", r"(?i)k\w+", r"(?s)a.b", r"(?m)^x$"], id="flags"),
    pytest.param([r"^\w", r"\w$", r"\A.", r".\Z"], id="anchors-start-end"),
    pytest.param([r"a*", r"(?=b)", r"x|"], id="empty-matches"),
    pytest.param([r"(?<=\d)[a-z]{2}", r"(?<![A-Z])[A-Z]\d", r"(?>a+)b"], id="lookarounds"),
    pytest.param([r"(\w)\1", r"(?P<n>o)(?P=n)", r"sk-\w{3}"], id="backreferences-alone"),
    pytest.param([r"(x)y", r"(\w)\1", r"(?P<q>u)(?P=q)"], id="backreferences-after-groups"),
    pytest.param([r"(?P<n>ab)", r"(?P<n>cd)", r"ef"], id="named-groups-collide"),
    pytest.param([r"a(?i)B", r"(?x) c d", r"(?:ef){e<=1}", r"x"], id="not-joinable"),
    pytest.param([r"\p{Lu}{2}", r"\N{GREEK SMALL LETTER ALPHA}", r"\x41", r"[(]"], id="escapes"),
    pytest.param([r"(?i)\u017f", r"(?i)K", r"(?i)İ", r"é|e\u0301"], id="unicode-case"),
]
PIECES = [
    "abc",
    "bcd",
    "CDE",
    "de",
    "strasse",
    "STRAßE",
    "\u212a",
    "\u017f",
    "İ",
    "i̇",
    "é",
    "e\u0301",
    "a\nb",
    "x\n",
    "\nx",
    "aaab",
    "oo",
    "ss",
    "sk-abc",
    "12ab",
    "A1",
    "ab",
    "cd",
    "ef",
    "eF",
    "\u03b1",
    "AB",
    "(",
    " ",
    "\r\n",
    "\t",
    "😀",
    "AKIAABCDEFGHIJKLMNOP",
    "bearer " + "t" * 20,
    "ghp_" + "a" * 24,
    "-----BEGIN RSA PRIVATE KEY-----",
    "sk-" + "B" * 24,
    "AIza" + "x" * 35,
]
TEXTS = st.lists(st.sampled_from(PIECES) | st.text(max_size=4), max_size=8).map("".join)


def per_pattern(scanner: RegexScanner) -> RegexScanner:
    """The same scanner without the pre-check: every pattern runs alone, as before it."""
    return dataclasses.replace(scanner, joined=None, alone=())


def built(patterns: list[str], **config: object) -> RegexScanner:
    params = RegexParams.model_validate({"patterns": patterns, **config})
    return regex_scanner.build(params, rewrite=True)


CONFIGS = [
    pytest.param({}, id="search"),
    pytest.param({"match_type": "fullmatch"}, id="fullmatch"),
    pytest.param({"is_blocked": False}, id="allow-list"),
]


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("patterns", PATTERN_SETS)
def test_joined_scan_is_the_per_pattern_scan_on_the_corpus(
    patterns: list[str], config: dict[str, object]
) -> None:
    scanner = built(patterns, **config)
    alone = per_pattern(scanner)
    texts = [*corpus(), *(p * 2 for p in PIECES), ""]
    for text in texts:
        assert scanner.scan(text) == alone.scan(text), text


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("patterns", PATTERN_SETS)
@settings(max_examples=150, deadline=None, database=None)
@given(text=TEXTS)
def test_joined_scan_is_the_per_pattern_scan_on_generated_texts(
    patterns: list[str], config: dict[str, object], text: str
) -> None:
    scanner = built(patterns, **config)
    assert scanner.scan(text) == per_pattern(scanner).scan(text)


@pytest.mark.parametrize("patterns", PATTERN_SETS)
@settings(max_examples=100, deadline=None, database=None)
@given(
    head=st.sampled_from(["", " ", "x", "\n"]),
    tail=st.sampled_from(["", " ", "y", "\n", "."]),
    piece=st.sampled_from(PIECES),
)
def test_matches_at_the_start_and_end_are_found(
    patterns: list[str], head: str, tail: str, piece: str
) -> None:
    scanner = built(patterns)
    for text in (piece + tail, head + piece, piece):
        assert scanner.scan(text) == per_pattern(scanner).scan(text), text


@pytest.mark.parametrize("config", CONFIGS)
def test_joined_scan_on_long_texts_too(
    config: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Texts over JOIN_MAX_CHARS skip the pre-check for speed; it stays exact on them."""
    monkeypatch.setattr(regex_scanner, "JOIN_MAX_CHARS", 10**9)
    scanner = built(DEFAULT_PATTERNS, **config)
    long_texts = [t for t in corpus() if len(t) > 400]
    for text in [*long_texts, "x" * 5000 + "AKIAABCDEFGHIJKLMNOP", "sk-" + "a" * 5000]:
        assert scanner.scan(text) == per_pattern(scanner).scan(text), text


class _Unused:
    def search(self, text: str, timeout: float) -> None:
        raise AssertionError("the pre-check ran on a long text")


def test_long_texts_go_straight_to_the_patterns() -> None:
    scanner = dataclasses.replace(built(DEFAULT_PATTERNS), joined=_Unused())
    text = "x " * regex_scanner.JOIN_MAX_CHARS + "AKIAABCDEFGHIJKLMNOP"
    assert scanner.scan(text) == per_pattern(scanner).scan(text)


def test_the_default_policy_joins_every_pattern() -> None:
    scanner = built(DEFAULT_PATTERNS)
    assert scanner.joined is not None
    assert scanner.alone == ()


@pytest.mark.parametrize(
    ("pattern", "branch"),
    [
        pytest.param(r"\bAKIA[0-9A-Z]{16}\b", r"(?:\bAKIA[0-9A-Z]{16}\b)", id="plain"),
        pytest.param(r"(?i)\bsk-\w{3}", r"(?i:\bsk-\w{3})", id="leading-flag-scoped"),
        pytest.param(r"(?is)a.b", r"(?is:a.b)", id="leading-flags-scoped"),
        pytest.param(r"(?P<k>a)(?i:b)", r"(?:(?P<k>a)(?i:b))", id="named-and-scoped"),
        pytest.param(r"\p{L}{2,}", r"(?:\p{L}{2,})", id="braced-escape"),
        pytest.param(r"(\w)\1", None, id="backreference"),
        pytest.param(r"(?P<n>a)(?P=n)", None, id="named-backreference"),
        pytest.param(r"(a)(?(1)b|c)", None, id="conditional"),
        pytest.param(r"a(?i)b", None, id="global-flag-inside"),
        pytest.param(r"(?x)a # b", None, id="verbose"),
        pytest.param(r"(?a)\w", None, id="unscopable-flag"),
        pytest.param(r"(?V1)a", None, id="version-flag"),
        pytest.param(r"(?:ab){e<=1}", None, id="fuzzy"),
        pytest.param(r"\Ga", None, id="search-anchor"),
        pytest.param(r"a\Kb", None, id="keep-out"),
        pytest.param(r"(?R)?a", None, id="recursion"),
        pytest.param(r"\\(?i)a", None, id="flag-after-escaped-backslash"),
    ],
)
def test_what_may_join_the_alternation(pattern: str, branch: str | None) -> None:
    found = regex_scanner.as_branch(pattern)
    assert (found[0] if found else None) == branch


def test_patterns_that_cannot_join_still_run_alone_every_time() -> None:
    scanner = built([r"(\w)\1", r"\bsk-\w{3}", r"\bAKIA\w{4}"])
    assert scanner.joined is not None
    assert [p.pattern for p in scanner.alone] == [r"(\w)\1"]
    # No joined pattern matches; the lone one does.
    assert scanner.scan("a book").text == "a b[REDACTED]k"


def test_colliding_names_leave_the_later_pattern_alone() -> None:
    joined, alone = regex_scanner.any_match([r"(?P<n>ab)", r"(?P<n>cd)", r"ef"])
    assert joined is not None
    assert alone == (1,)


def test_a_catastrophic_pattern_still_times_out() -> None:
    # SLOW_PATTERN passes the load-time probe, so the scanner is built as the policy would.
    scanner = built([SLOW_PATTERN, r"\bsk-\w+"])
    assert scanner.joined is not None
    with pytest.raises(TimeoutError):
        scanner.scan(SLOW_TEXT)


class _TimesOut:
    """A joined pattern that exceeds its budget on every text."""

    def search(self, text: str, timeout: float) -> None:
        raise TimeoutError("regex timed out")

    fullmatch = search


@pytest.mark.parametrize("text", ["sk-abcdef and AKIA1234", "nothing here", ""])
def test_a_pre_check_that_times_out_leaves_the_patterns_to_run_alone(text: str) -> None:
    scanner = built([r"\bsk-\w+", r"\bAKIA\w{4}"])
    slow = dataclasses.replace(scanner, joined=_TimesOut())
    assert slow.scan(text) == per_pattern(scanner).scan(text)
