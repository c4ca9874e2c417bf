"""Proof that the streaming guard never leaks: for every scanner type and option, whatever the
pieces, the streamed text is the non-streaming answer (or clean text then the block message),
and needles cut at every position across pieces are caught as the whole text catches them."""

from __future__ import annotations

import base64
import logging
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prometheus_client import REGISTRY

from sentinel_runtime.guardrails.engine import GuardrailsEngine, build_engine
from sentinel_runtime.guardrails.policy import parse_policy
from sentinel_runtime.guardrails.state import default_policy_path
from sentinel_runtime.guardrails.streaming import BLOCK_SEPARATOR, StreamGuard, whole_text_reasons
from support.scanners import SLOW_PATTERN, SLOW_TEXT, split, stream

NEEDLES = [
    "sk-ABCDEFGHIJKLMNOPQRST",
    "ACME-1234",
    "Do Not Distribute",
    "top secret",
    "TOP SECRET",
    "bob@example.com",
    "555-123-4567",
    "4111 1111 1111 1111",
    "10.0.0.12",
    "2001:db8::8a2e:370:7334",
    "::ffff:192.0.2.1",
    "AKIAIOSFODNN7EXAMPLE",
    "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",
    'password = "hunter2hunter2"',
    "password = hunter2hunter2",
    "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnX3ZhbHVl",
    "the admin password is Tr0ub4dor&3",
    "postgres://app:Zq8vLm2x@db:5432/app",
    "zero\u200bwidth",
    "30 days",
    '{"a": 1}',
]
# The last four look like IPv6 pieces and are not (a time, C++ scope, hex word, bare "::").
FILLER = st.sampled_from(
    [
        *("the", "refund", "policy", "is", "30", "days,", "and", "call", "me.", "ok", "\n"),
        *("(see)", "10:30:00", "std::vector", "cafe", "::"),
    ]
)
BANNED = "substrings: ['Do Not Distribute', 'top secret']"

# One policy per scanner type and option (every match_type), and chains.
POLICIES = {
    "regex-search-redact": r"""
  - type: regex
    action: redact
    patterns: ['sk-[A-Za-z0-9]{20}', '\bACME-\d{4}\b', '\d+ days']""",
    "regex-search-block": r"""
  - type: regex
    action: block
    patterns: ['sk-[A-Za-z0-9]{20}', '(?i)top\s+secret']""",
    "regex-fullmatch": r"""
  - type: regex
    action: redact
    match_type: fullmatch
    patterns: ['(?s).*top secret.*']""",
    "regex-allow-list": r"""
  - type: regex
    action: block
    is_blocked: false
    patterns: ['refund']""",
    "ban-word-redact": f"""
  - type: ban_substrings
    action: redact
    {BANNED}""",
    "ban-str-redact": f"""
  - type: ban_substrings
    action: redact
    match_type: str
    {BANNED}""",
    "ban-case-sensitive-block": f"""
  - type: ban_substrings
    action: block
    case_sensitive: true
    {BANNED}""",
    "ban-contains-all-block": f"""
  - type: ban_substrings
    action: block
    contains_all: true
    {BANNED}""",
    "sensitive-redact": """
  - type: sensitive
    action: redact""",
    "sensitive-block": """
  - type: sensitive
    action: block
    detectors: [email, credit_card]""",
    "secrets-default": """
  - type: secrets
    action: redact
    redactMode: partial""",
    "secrets-keyword-entropy": """
  - type: secrets
    action: redact
    plugins: [KeywordDetector, Base64HighEntropyString, AWSKeyDetector]""",
    "invisible-text": """
  - type: invisible_text
    action: redact""",
    "token-limit": """
  - type: token_limit
    action: block
    limit: 60""",
    "reading-time-truncate": """
  - type: reading_time
    action: redact
    max_time: 0.15
    truncate: true""",
    "json": """
  - type: json
    action: block
    repair: false""",
    "chain-redaction-makes-a-hit": r"""
  - type: regex
    action: redact
    patterns: ['sk-[A-Za-z0-9]{20}', '\d{4} \d{4} \d{4} \d{4}']
  - type: sensitive
    action: redact
  - type: ban_substrings
    action: redact
    substrings: ['Do Not Distribute', 'top secret', 'REDACTED] and']
  - type: invisible_text
    action: redact""",
}


def engine(scanners: str) -> GuardrailsEngine:
    return build_engine(parse_policy(f"blockMessage: Blocked.\nscanners:{scanners}\n"), "test")


ENGINES = {name: engine(body) for name, body in POLICIES.items()}
DEFAULT = build_engine(parse_policy(Path(default_policy_path()).read_text()), "test")


def assert_no_leak(policy: GuardrailsEngine, text: str, pieces: list[str]) -> None:
    """The streamed text is the non-streaming answer; a block sends only text that is a
    clean prefix of the answer, then the block message (the documented difference)."""
    assert "".join(pieces) == text
    streamed, stop = stream(StreamGuard(policy, min_interval=0), pieces)
    expected = policy.scan(text)
    if expected.action != "block":
        assert streamed == expected.text
        assert stop in (None, "truncate")
        return
    assert stop == "block" and streamed.endswith(policy.block_message)
    released = streamed.removesuffix(policy.block_message)
    if released:
        released = released.removesuffix(BLOCK_SEPARATOR)
        assert streamed == released + BLOCK_SEPARATOR + policy.block_message
        # These block policies redact nothing: what left is the answer's clean beginning.
        assert text.startswith(released)
        assert policy.scan(released).action is None


@st.composite
def texts_with_needles(draw: st.DrawFn) -> str:
    words = draw(st.lists(st.one_of(FILLER, st.sampled_from(NEEDLES)), min_size=1, max_size=80))
    separators = draw(st.lists(st.sampled_from([" ", " ", "\n", ", ", ""]), min_size=len(words)))
    return "".join(w + s for w, s in zip(words, separators, strict=False))


@pytest.mark.parametrize("name", list(POLICIES))
def test_every_scanner_type_and_option_streams_without_a_leak(name: str) -> None:
    policy = ENGINES[name]

    @settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
    @given(text=texts_with_needles(), cuts=st.lists(st.integers(0, 2000), max_size=60))
    def check(text: str, cuts: list[int]) -> None:
        assert_no_leak(policy, text, split(text, cuts))

    check()


# -- adversarial splits: each needle cut at every position ------------------------------------

CUT_NEEDLES = [
    pytest.param(DEFAULT, "AKIAIOSFODNN7EXAMPLE", id="aws-key"),
    pytest.param(DEFAULT, "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", id="github-token"),
    pytest.param(DEFAULT, "bob.smith+news@mail.example.co.uk", id="email"),
    pytest.param(DEFAULT, "4111 1111 1111 1111", id="card"),
    pytest.param(DEFAULT, "2001:db8::8a2e:370:7334", id="ipv6"),
    pytest.param(DEFAULT, "::ffff:192.0.2.1", id="ipv6-mapped"),
    pytest.param(DEFAULT, "Bearer abcdefghijklmnopqrstuvwxyz012345", id="bearer"),
    pytest.param(ENGINES["ban-word-redact"], "Do Not Distribute", id="banned-phrase"),
    pytest.param(ENGINES["ban-case-sensitive-block"], "top secret", id="banned-block"),
    pytest.param(ENGINES["secrets-keyword-entropy"], 'password = "hunter2hunter2"', id="keyword"),
    pytest.param(ENGINES["secrets-keyword-entropy"], "password = hunter2hunter2", id="ini-value"),
    pytest.param(DEFAULT, "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t", id="openai-project-key"),
    pytest.param(DEFAULT, "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnX3ZhbHVl", id="jwt"),
    pytest.param(DEFAULT, 'DB_PASSWORD="Zq8vLm2xWp"', id="password-assignment"),
    pytest.param(DEFAULT, "the admin password is Tr0ub4dor&3", id="password-prose"),
    pytest.param(DEFAULT, "postgres://app:Zq8vLm2x@db:5432/app", id="url-credentials"),
]


@pytest.mark.parametrize(("policy", "needle"), CUT_NEEDLES)
def test_a_needle_cut_at_every_position_is_caught(policy: GuardrailsEngine, needle: str) -> None:
    text = f"Please note {needle} and then some more words.\nAlso {needle}, see above."
    assert policy.scan(text).action is not None
    start = text.index(needle)
    for first in range(start, start + len(needle) + 1):
        assert_no_leak(policy, text, split(text, [first]))
        # A second cut further into the needle: three pieces around it.
        for second in range(first + 1, start + len(needle) + 1, 3):
            assert_no_leak(policy, text, split(text, [first, second]))
    assert_no_leak(policy, text, list(text))  # one character at a time


def _pem_block() -> str:
    body = base64.b64encode(random.Random(7).randbytes(180)).decode()
    lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    return f"-----BEGIN RSA PRIVATE KEY-----\n{lines}\n-----END RSA PRIVATE KEY-----"


def test_a_pem_block_cut_at_every_position_leaks_no_body_line() -> None:
    # The default policy's regex redacts the BEGIN line first, so the secrets scanner sees
    # a body with an END line and no BEGIN: its hold must keep body lines until END comes.
    pem = _pem_block()
    text = f"Here is the key:\n\n{pem}\n\nStore it in a vault."
    expected = DEFAULT.scan(text).text
    body_lines = pem.splitlines()[1:-1]
    assert not any(line in expected for line in body_lines)
    for cut in range(len(text) + 1):
        assert_no_leak(DEFAULT, text, split(text, [cut]))
    assert_no_leak(DEFAULT, text, list(text))
    assert_no_leak(DEFAULT, text, [text[i : i + 5] for i in range(0, len(text), 5)])


def test_a_redaction_that_creates_a_later_hit_at_every_cut() -> None:
    # The key's redaction makes "Do Not Distribute[REDACTED]" a banned phrase ending a word,
    # and "[REDACTED] and" a banned string of its own.
    policy = ENGINES["chain-redaction-makes-a-hit"]
    text = "the refund Do Not Distributesk-ABCDEFGHIJKLMNOPQRST and the refund is \n sk-x"
    expected = policy.scan(text).text
    assert "Distribute" not in expected and " and the" not in expected
    for cut in range(len(text) + 1):
        assert_no_leak(policy, text, split(text, [cut]))
    assert_no_leak(policy, text, list(text))


def test_contains_all_holds_the_answer_until_every_word_could_be_seen() -> None:
    # It streamed "unsafe ..." in full before, although the whole answer is blocked.
    policy = engine(
        "\n  - type: ban_substrings\n    action: block\n    contains_all: true\n"
        "    substrings: [unsafe, prohibited]"
    )
    text = "unsafe " + "word " * 300 + "prohibited end"
    guard = StreamGuard(policy, min_interval=0)
    assert guard.holds_whole_text
    assert whole_text_reasons(policy) == [
        "scanner 0 (ban_substrings): contains_all needs every substring, which only the whole "
        "answer shows"
    ]
    assert stream(guard, [text[i : i + 4] for i in range(0, len(text), 4)]) == (
        "Blocked.",
        "block",
    )
    clean = "unsafe " + "word " * 300 + "end"
    assert stream(StreamGuard(policy, min_interval=0), [clean[:100], clean[100:]]) == (
        clean,
        None,
    )


def test_a_scanner_failing_open_mid_stream_is_counted_and_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    policy = engine(
        "\n  - type: regex\n    action: block\n    failMode: open"
        f"\n    patterns: ['{SLOW_PATTERN}']"
        "\n  - type: ban_substrings\n    action: redact\n    substrings: ['top secret']"
    )
    labels = {"type": "regex", "fail_mode": "open"}

    def errors() -> float:
        return REGISTRY.get_sample_value("output_guardrails_scanner_errors_total", labels) or 0

    before = errors()
    guard = StreamGuard(policy, response_id="resp-1", min_interval=0)
    with caplog.at_level(logging.ERROR):
        streamed, stop = stream(guard, [SLOW_TEXT, " and top secret", " words"])
    # The failing scanner is passed over, as the non-streaming path does; the rest still acts.
    assert (streamed, stop) == (SLOW_TEXT + " and [REDACTED] words", None)
    assert errors() - before == 1  # once per answer, however many scans it failed in
    failed = [r for r in caplog.records if r.getMessage() == "output_guardrails_failed"]
    assert len(failed) == 1
    assert failed[0].fail_open is True  # type: ignore[attr-defined]
    assert failed[0].response_id == "resp-1"  # type: ignore[attr-defined]
    assert [f.type for f in guard.outcome().failures] == ["regex"]
