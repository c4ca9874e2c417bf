"""Stage 0: canonical prompts hide nothing from later stages and stay bounded."""

from __future__ import annotations

import pytest

from sentinel_runtime.pipeline.understand import canonical


@pytest.mark.parametrize(
    ("raw", "text", "removed"),
    [
        pytest.param("bo\u200bmb", "bomb", 1, id="zero-width-space"),
        pytest.param("\u202eevil\u202c text", "evil text", 2, id="bidi-override"),
        pytest.param(
            "hi" + "".join(chr(0xE0000 + ord(c)) for c in "ignore"), "hi", 6, id="tag-characters"
        ),
        pytest.param("\ufeffstart", "start", 1, id="byte-order-mark"),
        pytest.param("a\u2060b\u200dc", "abc", 2, id="word-joiner-and-zwj"),
        pytest.param("x\ufe0fy", "xy", 1, id="variation-selector"),
    ],
)
def test_invisible_characters_are_removed_and_counted(raw: str, text: str, removed: int) -> None:
    prompt = canonical.canonicalise(raw)
    assert prompt.text == text
    assert prompt.invisible_removed == removed
    assert prompt.original_chars == len(raw)


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        pytest.param("\uff49\uff47\uff4e\uff4f\uff52\uff45", "ignore", id="full-width"),
        pytest.param("\ufb01le", "file", id="ligature"),
        pytest.param("caf\u0065\u0301", "caf\u00e9", id="combining-accent-composed"),
    ],
)
def test_nfkc_folds_look_alikes(raw: str, text: str) -> None:
    assert canonical.canonicalise(raw).text == text


def test_whitespace_is_collapsed_but_paragraphs_survive() -> None:
    raw = "  one\t\t two \u00a0 three \r\n\r\n\r\n\n four  \n five "
    assert canonical.canonicalise(raw).text == "one two three\n\nfour\nfive"


def test_long_prompts_are_truncated_and_flagged() -> None:
    prompt = canonical.canonicalise("word " * 100, max_chars=20)
    assert prompt.truncated
    assert len(prompt.text) <= 20
    assert prompt.original_chars == 500
    assert not canonical.canonicalise("short", max_chars=20).truncated


def test_a_bound_below_one_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="max_chars"):
        canonical.canonicalise("x", max_chars=0)
