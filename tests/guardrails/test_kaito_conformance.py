"""Policies as KAITO's output-guardrails contract reads them (docs/contracts.md), end to end:
parsed, built and scanned the way the runtime does, streamed as well as whole.

Each test is a behaviour the contract's parser or llm-guard's scanners (which KAITO builds)
have and Sentinel once lacked: ban_substrings' word boundaries, permissive items, match_type
in any case, invisible_text without fields, JSON that repairs.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sentinel_runtime.guardrails.engine import GuardrailsEngine, build_engine
from sentinel_runtime.guardrails.policy import parse_policy
from sentinel_runtime.guardrails.streaming import BLOCK_SEPARATOR, StreamGuard
from support.scanners import split, stream

R = "[REDACTED]"


def engine(policy: str) -> GuardrailsEngine:
    return build_engine(parse_policy(policy), "test")


def streams_as_it_scans(policy: GuardrailsEngine, text: str, pieces: list[str]) -> None:
    """Streamed, ``text`` leaves as the whole answer is scanned (a block: a clean prefix,
    then the block message)."""
    streamed, stop = stream(StreamGuard(policy, min_interval=0), pieces)
    expected = policy.scan(text)
    if expected.action != "block":
        assert (streamed, stop) == (expected.text, None)
        return
    assert stop == "block"
    released = streamed.removesuffix(policy.block_message).removesuffix(BLOCK_SEPARATOR)
    assert text.startswith(released)
    assert policy.scan(released).action is None


# -- 1. ban_substrings match_type word: a \b on each side, as llm-guard's BanSubstrings -------

WORD_POLICY = engine(
    "scanners:\n  - type: ban_substrings\n    action: redact\n"
    "    substrings: ['unsafe-', '.', 'C++', top secret]\n"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("an unsafe-x call", f"an {R}x call", id="unsafe-dash-before-a-word"),
        pytest.param("an unsafe- suffix", "an unsafe- suffix", id="unsafe-dash-before-space"),
        pytest.param("see a.b here", f"see a{R}b here", id="dot-between-words"),
        pytest.param("The end. Next", "The end. Next", id="dot-before-space"),
        pytest.param("C++ is fine", "C++ is fine", id="plus-before-space"),
        pytest.param("C++x", f"{R}x", id="plus-before-a-word"),
        pytest.param("it is TOP SECRET.", f"it is {R}.", id="phrase-any-case"),
        pytest.param("top secretary", "top secretary", id="phrase-inside-a-word"),
    ],
)
def test_word_boundaries(text: str, expected: str) -> None:
    outcome = WORD_POLICY.scan(text)
    assert outcome.text == expected
    assert outcome.action == (None if expected == text else "redact")


@pytest.mark.parametrize(
    "text",
    [
        "an unsafe-x call, an unsafe- suffix",
        "see a.b here. The end. C++x and C++ too",
        "it is top secret.unsafe-unsafe-x a..b",
    ],
)
def test_word_boundaries_stream_as_they_scan_at_every_cut(text: str) -> None:
    for cut in range(len(text) + 1):
        streams_as_it_scans(WORD_POLICY, text, split(text, [cut]))
        for second in range(cut + 1, len(text) + 1, 5):
            streams_as_it_scans(WORD_POLICY, text, split(text, [cut, second]))
    streams_as_it_scans(WORD_POLICY, text, list(text))


WORDS = st.sampled_from(
    ["unsafe-", "unsafe", "x", ".", "a", "b", "C++", "top", "secret", "-", "_", "é", "1"]
)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    words=st.lists(WORDS, min_size=1, max_size=40),
    glue=st.lists(st.sampled_from(["", " ", "", ".", "\n"]), min_size=40, max_size=40),
    cuts=st.lists(st.integers(0, 400), max_size=30),
)
def test_word_boundaries_never_leak_whatever_the_pieces(
    words: list[str], glue: list[str], cuts: list[int]
) -> None:
    text = "".join(w + g for w, g in zip(words, glue, strict=False))
    streams_as_it_scans(WORD_POLICY, text, split(text, cuts))
    block = engine(
        "scanners:\n  - type: ban_substrings\n    action: block\n"
        "    substrings: ['unsafe-', '.', 'C++', top secret]\n"
    )
    streams_as_it_scans(block, text, split(text, cuts))


# -- 2. one bad item of patterns or substrings costs that item, not the scanner ---------------


def test_bad_items_are_dropped_and_both_scanners_still_run() -> None:
    policy = engine(
        "scanners:\n"
        "  - type: regex\n    patterns: ['https?://\\S+', '', 123, null]\n"
        "  - type: ban-substrings\n    substrings: [secret, null, '']\n"
    )
    assert [a.spec.type for a in policy.scanners] == ["regex", "ban_substrings"]
    assert policy.skipped == ()
    outcome = policy.scan("the secret is at https://example.com/x")
    assert outcome.text == f"the {R} is at {R}"
    dropped = [d for d in policy.policy.diagnostics if d.fields.get("effect") == "item dropped"]
    assert [(d.fields["index"], d.fields["item"]) for d in dropped] == [
        (0, 1),
        (0, 2),
        (0, 3),
        (1, 1),
        (1, 2),
    ]


def test_a_number_is_dropped_not_matched_as_text() -> None:
    policy = engine("scanners:\n  - type: ban_substrings\n    substrings: [123, keep]\n")
    assert policy.scan("123 and keep").text == f"123 and {R}"


def test_no_usable_item_skips_the_scanner_and_the_others_run() -> None:
    policy = engine(
        "scanners:\n  - type: ban_substrings\n    substrings: ['', null]\n"
        "  - type: regex\n    patterns: ['\\d{4}']\n"
    )
    assert [s.type for s in policy.skipped] == ["ban_substrings"]
    assert policy.scan("pin 1234").text == f"pin {R}"


# -- 3. match_type in any case -------------------------------------------------------------


def test_match_type_spellings_take_effect() -> None:
    policy = engine(
        "scanners:\n"
        "  - type: ban_substrings\n    match_type: WORD\n    substrings: [pass]\n"
        "  - type: ban_substrings\n    match_type: Str\n    substrings: [cret]\n"
        "  - type: regex\n    action: block\n    match_type: FullMatch\n    patterns: ['\\d+']\n"
    )
    assert policy.skipped == ()
    assert policy.scan("password pass secret").text == f"password {R} se{R}"
    assert policy.scan("12345").action == "block"
    assert policy.scan("12345 apples").action is None


# -- 4. invisible_text takes no fields -----------------------------------------------------


def test_invisible_text_with_a_field_is_skipped_and_the_rest_runs() -> None:
    policy = engine(
        "scanners:\n  - type: invisible_text\n    mode: strict\n"
        "  - type: ban_substrings\n    substrings: [secret]\n"
    )
    assert [(s.index, s.type) for s in policy.skipped] == [(0, "invisible_text")]
    assert policy.scan("a\u200bb secret").text == f"a\u200bb {R}"


def test_invisible_text_without_fields_runs() -> None:
    policy = engine("scanners:\n  - type: invisible_text\n    action: redact\n")
    assert policy.scan("a\u200bb").text == "ab"


# -- 5. JSON that llm-guard's repair fixes is accepted ------------------------------------


@pytest.mark.parametrize("text", ['{"a": 1, "b": 2', '{"a": 1, "b": 2,}', "{'a': True}"])
def test_repairable_json_passes_under_block(text: str) -> None:
    policy = engine("scanners:\n  - type: json\n    action: block\n")
    outcome = policy.scan(text)
    assert (outcome.text, outcome.action) == (text, None)


def test_repairable_json_under_redact_is_delivered_repaired() -> None:
    # Sentinel's delivery (KAITO sends it as written): not blocked either way.
    policy = engine("scanners:\n  - type: json\n    action: redact\n")
    outcome = policy.scan('{"a": 1, "b": 2')
    assert (outcome.text, outcome.action) == ('{"a": 1, "b": 2}', "redact")


def test_unrepairable_json_is_still_blocked() -> None:
    policy = engine("scanners:\n  - type: json\n    action: block\n")
    assert policy.scan("Use {curly braces} here").action == "block"


def test_repairable_json_streams_whole_and_passes() -> None:
    policy = engine("scanners:\n  - type: json\n    action: block\n")
    text = 'Here: {"a": 1, "b": 2'
    assert stream(StreamGuard(policy, min_interval=0), [text[:5], text[5:]]) == (text, None)
