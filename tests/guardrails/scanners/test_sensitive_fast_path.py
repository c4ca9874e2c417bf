"""``sensitive`` scanner: skipping the digit detectors on a text without a digit finds what
running every detector found, on the secrets evaluation set, every string literal of the
guardrails tests and generated texts (other scripts' digits included)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scanner_corpus import corpus

from sentinel_runtime.guardrails.scanners import sensitive
from sentinel_runtime.guardrails.scanners.sensitive import SensitiveParams

# Arabic-Indic and NKo digits: ``\d`` matches them, and the card and phone detectors read them.
ARABIC = str.maketrans("0123456789", "".join(chr(0x660 + d) for d in range(10)))
OTHER_SCRIPTS = [
    "4111111111111111".translate(ARABIC),
    "123.1.1.1".translate(ARABIC),
    "call +1 415 555 0100".translate(ARABIC),
    "1234567890".translate(ARABIC),
    "".join(chr(0x7C0 + d) for d in (1, 2, 3)),
]
PIECES = [
    *OTHER_SCRIPTS,
    "4111 1111 1111 1111",
    "+1 (415) 555-0100",
    "415.555.0100",
    "192.0.2.1",
    "10.0.0.256",
    "fe80::1",
    "::ffff:192.0.2.1",
    "2001:db8::8a2e:370:7334",
    "a@b.co",
    "x.y@example.org",
    "10:30:00",
    "2024-01-15 10:30",
    "978-3-16-148410-0",
    "ab::cd",
    ":",
    ".",
    "-",
    " ",
    "\n",
    "(",
    "+",
    "\u0130",
    "\U0001f600",
]
TEXTS = st.lists(st.sampled_from(PIECES) | st.text(max_size=5), max_size=10).map("".join)
DETECTOR_SETS = [
    pytest.param(sensitive.ALL_DETECTORS, id="all"),
    pytest.param(("email",), id="email"),
    pytest.param(("phone", "email"), id="phone-email"),
    pytest.param(("ip_address",), id="ip"),
]


def every_detector(scanner: sensitive.SensitiveScanner, text: str) -> list[tuple[int, int, str]]:
    """``find`` as it was: every chosen detector runs on every text."""
    return [
        (start, end, f"<{name.upper()}>")
        for name in scanner.detectors
        for start, end in sensitive._FINDERS[name](text)
    ]


def built(detectors: tuple[str, ...]) -> sensitive.SensitiveScanner:
    params = SensitiveParams.model_validate({"detectors": list(detectors)})
    return sensitive.build(params, rewrite=True)


@pytest.mark.parametrize("detectors", DETECTOR_SETS)
def test_find_on_the_corpus_is_every_detectors(detectors: tuple[str, ...]) -> None:
    scanner = built(detectors)
    found = 0
    for text in [*corpus(), *PIECES, ""]:
        spans = scanner.find(text)
        assert spans == every_detector(scanner, text), text
        found += bool(spans)
    assert found >= 10


@pytest.mark.parametrize("detectors", DETECTOR_SETS)
@settings(max_examples=300, deadline=None, database=None)
@given(text=TEXTS)
def test_find_on_generated_texts_is_every_detectors(detectors: tuple[str, ...], text: str) -> None:
    scanner = built(detectors)
    assert scanner.find(text) == every_detector(scanner, text)


@pytest.mark.parametrize("text", OTHER_SCRIPTS)
def test_other_scripts_digits_still_open_the_digit_detectors(text: str) -> None:
    scanner = built(sensitive.ALL_DETECTORS)
    assert scanner.find(text) == every_detector(scanner, text)
