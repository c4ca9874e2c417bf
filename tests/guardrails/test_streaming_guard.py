"""The streaming guard releases what the non-streaming path returns, never earlier than every
scanner that can judge the text has seen it, and differs only where the docs say it does."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prometheus_client import REGISTRY

from sentinel_runtime.guardrails.engine import GuardrailsEngine, OutputGuardrailsError, build_engine
from sentinel_runtime.guardrails.policy import parse_policy
from sentinel_runtime.guardrails.state import default_policy_path
from sentinel_runtime.guardrails.streaming import (
    BLOCK_SEPARATOR,
    UNBOUNDED_REACH,
    StreamGuard,
    regex_reach,
)
from support.scanners import SLOW_PATTERN, SLOW_TEXT, split, stream

REDACT_POLICY = r"""
action: redact
scanners:
  - type: regex
    patterns: ['sk-[A-Za-z0-9]{20}', '\bACME-\d{4}\b']
  - type: ban_substrings
    substrings: ['Do Not Distribute', 'top secret']
  - type: sensitive
  - type: secrets
  - type: invisible_text
"""
# Small window (no line-sized secrets reach), so cuts happen often and multi-word matches
# straddle them.
NARROW_POLICY = r"""
action: redact
scanners:
  - type: regex
    patterns: ['sk-[A-Za-z0-9]{20}', '\d{4} \d{4} \d{4} \d{4}', '\d{3}-\d{3}-\d{4}']
  - type: ban_substrings
    substrings: ['Do Not Distribute', 'top secret']
  - type: invisible_text
"""
BLOCK_POLICY = """
action: block
blockMessage: Blocked by policy.
scanners:
  - type: ban_substrings
    substrings: ['Do Not Distribute', 'top secret']
"""
# What the generators place inside filler text: secrets, PII, banned phrases, invisible text.
NEEDLES = [
    "sk-ABCDEFGHIJKLMNOPQRST",
    "ACME-1234",
    "Do Not Distribute",
    "top secret",
    "bob@example.com",
    "555-123-4567",
    "4111 1111 1111 1111",
    "10.0.0.12",
    "AKIAIOSFODNN7EXAMPLE",
    "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",
    "zero\u200bwidth",
]
FILLER = st.sampled_from(
    ["the", "refund", "policy", "is", "30", "days,", "and", "call", "me.", "ok", "\n", "(see)"]
)


def engine(policy: str) -> GuardrailsEngine:
    return build_engine(parse_policy(policy), "test")


DEFAULT = engine(Path(default_policy_path()).read_text())
REDACT = engine(REDACT_POLICY)
NARROW = engine(NARROW_POLICY)
BLOCK = engine(BLOCK_POLICY)


def unthrottled(policy: GuardrailsEngine, **options: int) -> StreamGuard:
    """A guard that scans at every step, however fast the test feeds it."""
    return StreamGuard(policy, min_interval=0, **options)


@st.composite
def texts_with_needles(draw: st.DrawFn) -> str:
    words = draw(st.lists(st.one_of(FILLER, st.sampled_from(NEEDLES)), min_size=1, max_size=200))
    # No separator at all sometimes: a needle glued to a word may no longer match.
    separators = draw(st.lists(st.sampled_from([" ", " ", "\n", ", ", ""]), min_size=len(words)))
    return "".join(w + s for w, s in zip(words, separators, strict=False))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts_with_needles(), cuts=st.lists(st.integers(0, 5000), max_size=40))
def test_streamed_redactions_equal_the_non_streaming_answer(text: str, cuts: list[int]) -> None:
    streamed, stop = stream(unthrottled(REDACT, step=8), split(text, cuts))
    assert stop is None
    assert streamed == REDACT.scan(text).text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts_with_needles(), cuts=st.lists(st.integers(0, 5000), max_size=200))
def test_with_a_narrow_window_matches_across_cuts_are_never_split(
    text: str, cuts: list[int]
) -> None:
    guard = unthrottled(NARROW, step=1)
    assert guard.window < 80
    assert stream(guard, split(text, cuts)) == (NARROW.scan(text).text, None)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts_with_needles(), cuts=st.lists(st.integers(0, 5000), max_size=40))
def test_a_block_sends_only_clean_text_then_the_block_message(text: str, cuts: list[int]) -> None:
    streamed, stop = stream(unthrottled(BLOCK, step=8), split(text, cuts))
    expected = BLOCK.scan(text)
    if expected.action != "block":
        assert (streamed, stop) == (text, None)
        return
    # The documented difference: text released before the hit stays, the message follows.
    assert stop == "block"
    assert streamed.endswith(BLOCK.block_message)
    released = streamed.removesuffix(BLOCK.block_message).removesuffix(BLOCK_SEPARATOR)
    assert text.startswith(released)
    assert BLOCK.scan(released).action is None
    if released:
        assert streamed == released + BLOCK_SEPARATOR + BLOCK.block_message
    else:
        assert streamed == expected.text


@pytest.mark.parametrize("needle", NEEDLES)
def test_every_offset_of_a_two_piece_stream(needle: str) -> None:
    text = f"Please note {needle} and then some more words follow here.\nAnd {needle}."
    expected = REDACT.scan(text).text
    for offset in range(len(text) + 1):
        guard = unthrottled(REDACT, step=1)
        assert stream(guard, [text[:offset], text[offset:]]) == (expected, None), offset


def test_character_by_character_with_a_small_window() -> None:
    policy = engine(
        "scanners:\n  - type: regex\n    patterns: ['sk-[a-z]{8}']\n    action: redact\n"
    )
    text = " ".join(f"word{i} sk-abcdefgh" for i in range(40))
    guard = unthrottled(policy, step=1)
    assert guard.window == regex_reach("sk-[a-z]{8}") == 11 + 8
    assert stream(guard, list(text)) == (policy.scan(text).text, None)


def test_with_the_default_policy_a_clean_answer_starts_within_a_few_tokens() -> None:
    # Before partial matching the guard held the chain's whole reach (1,032 characters)
    # before it released anything; now only what could still become a match waits.
    guard = unthrottled(DEFAULT)
    assert guard.window == 1032 and not guard.holds_whole_text
    text = (
        "The refund policy gives customers thirty days to ask for their money back. "
        "Support answers by phone or mail within two working days, and 30 % of requests "
        "are settled the same day.\n"
    ) * 12
    tokens = [text[i : i + 4] for i in range(0, len(text), 4)]
    released: list[str] = []
    first = None
    for number, token in enumerate(tokens, 1):
        released.append(guard.feed(token).text)
        if released[-1] and first is None:
            first = number
        # What waits is the word being written (and a number that may become a card).
        assert guard.held <= 40, (number, guard.held)
    assert first is not None and first <= 3
    assert "".join(released) + guard.finish().text == DEFAULT.scan(text).text == text


def test_the_window_is_the_largest_reach_of_the_policy() -> None:
    assert unthrottled(BLOCK).window == len("Do Not Distribute") + 8
    # Each redacting scanner's reach adds to those after it in the chain: the regex (the
    # longer of its patterns), ban_substrings, sensitive, secrets (a line), invisible_text.
    chained = regex_reach(r"sk-[A-Za-z0-9]{20}") + (len("Do Not Distribute") + 8) + 256 + 512 + 1
    assert unthrottled(REDACT).window == chained
    assert regex_reach(r"\d+") == UNBOUNDED_REACH + 8
    assert regex_reach(r"(?<=x)\p{L}{3}") >= UNBOUNDED_REACH  # `regex` syntax: unbounded


def test_a_whole_text_scanner_holds_everything_until_the_end() -> None:
    policy = engine("action: block\nscanners:\n  - type: json\n")
    guard = StreamGuard(policy)
    assert guard.holds_whole_text
    text = '{"answer": "' + "x" * 2000 + '"}'
    assert all(guard.feed(text[i : i + 7]).text == "" for i in range(0, len(text), 7))
    assert guard.finish().text == text
    broken = StreamGuard(policy)
    broken.feed("{not json")
    assert (broken.finish().text, broken.outcome().action) == (policy.block_message, "block")


def test_reading_time_truncation_ends_the_stream_where_the_non_streaming_text_ends() -> None:
    policy = engine(
        "scanners:\n  - type: reading_time\n    max_time: 0.1\n    truncate: true\n"
        "    action: redact\n"
    )
    text = " ".join(f"w{i}" for i in range(100))
    streamed, stop = stream(
        unthrottled(policy, step=4), [text[i : i + 5] for i in range(0, 300, 5)]
    )
    assert (streamed, stop) == (policy.scan(text).text, "truncate")


def test_token_limit_blocks_once_the_released_text_would_pass_the_limit() -> None:
    policy = engine("scanners:\n  - type: token_limit\n    limit: 50\n    action: redact\n")
    text = "one two three four five six seven eight nine ten " * 10
    streamed, stop = stream(
        unthrottled(policy, step=4), [text[i : i + 3] for i in range(0, len(text), 3)]
    )
    assert stop == "block"
    released = streamed.removesuffix(policy.block_message).removesuffix(BLOCK_SEPARATOR)
    assert text.startswith(released) and policy.scan(released).action is None
    assert streamed.endswith(policy.block_message)


def test_a_fail_closed_error_ends_the_stream_with_an_exception() -> None:
    policy = engine(
        f"scanners:\n  - type: regex\n    patterns: ['{SLOW_PATTERN}']\n    action: block\n"
        "    failMode: closed\n"
    )
    guard = unthrottled(policy, step=1)
    with pytest.raises(OutputGuardrailsError):
        for piece in (SLOW_TEXT, " and more"):
            guard.feed(piece)
        guard.finish()


def test_each_scanner_counts_once_per_answer_however_many_pieces_it_hit() -> None:
    labels = {"type": "regex", "action": "redact"}

    def count() -> float:
        return REGISTRY.get_sample_value("output_guardrails_scanner_triggered_total", labels) or 0

    text = " ".join(["sk-ABCDEFGHIJKLMNOPQRST and words between them"] * 60)
    before = count()
    guard = unthrottled(REDACT, step=8)
    streamed, _ = stream(guard, [text[i : i + 4] for i in range(0, len(text), 4)])
    assert streamed == REDACT.scan(text).text
    assert count() - before == 2  # the stream, then the reference scan
    outcome = guard.outcome()
    assert outcome.action == "redact" and outcome.text == streamed
    assert [hit.type for hit in outcome.hits] == ["regex"]


def test_the_guard_keeps_the_policy_version_it_started_with() -> None:
    guard = unthrottled(BLOCK, step=1)
    guard.feed("first words ")
    # Whatever policy is active now, this guard judges with BLOCK's scanners.
    streamed, stop = stream(guard, ["then Do Not Distribute ", "x " * 40])
    assert stop == "block" and streamed.endswith(BLOCK.block_message)


def test_a_hit_at_the_edge_of_what_arrived_waits_for_the_next_piece() -> None:
    # "top secret" is banned as a word; "top secretary" is not a hit once the rest arrives.
    text = "words " * 10 + "top secret" + "ary and the rest of the answer " * 3
    cut = text.index("ary")
    guard = unthrottled(BLOCK, step=1)
    assert stream(guard, [text[:cut], text[cut:]]) == (text, None) == (BLOCK.scan(text).text, None)


def test_text_arriving_faster_than_read_is_scanned_in_bigger_steps() -> None:
    now = [0.0]
    guard = StreamGuard(NARROW, step=8, min_interval=0.01, clock=lambda: now[0])
    text = "plain words " * 250
    pieces = [text[i : i + 4] for i in range(0, len(text), 4)]
    released = [guard.feed(piece).text for piece in pieces[:100]]
    # The clock stands still: one scan when the window first filled, then none until
    # MAX_STEP characters are held.
    assert sum(1 for r in released if r) == 1
    now[0] += 0.02
    released.append(guard.feed(pieces[100]).text)
    assert released[-1]  # time has passed: the next piece is scanned
    released += [guard.feed(piece).text for piece in pieces[101:]]
    assert sum(1 for r in released if r) == 3  # MAX_STEP reached once more
    assert "".join(released) + guard.finish().text == text


def test_a_hit_straddling_the_cut_is_not_released_when_a_later_hit_blocks_the_tail() -> None:
    # Found by the block property test: the tail blocked on the second phrase, and the head
    # "Do Not" was released although the first phrase straddled the cut.
    text = "Do Not Distribute Do Not Distribute refund "
    streamed, stop = stream(unthrottled(BLOCK, step=8), [text[:35], text[35:]])
    assert (streamed, stop) == (BLOCK.block_message, "block")


def test_a_cut_never_falls_inside_a_word() -> None:
    # Found by the block property test: a cut inside "DistributeDo" let the next piece start
    # at "Do", where a word boundary matched that the whole text does not have.
    text = "is isDo Not DistributeDo Not Distribute refund days, days, days, bob@example.com"
    pieces = [text[:27], text[27:33], text[33:]]
    assert BLOCK.scan(text).action is None
    assert stream(unthrottled(BLOCK, step=8), pieces) == (text, None)


def test_a_redaction_that_makes_a_later_hit_is_waited_for() -> None:
    # Found by the narrow-window property test: redacting the key glued to the phrase gives
    # "Distribute[REDACTED]" the word boundary ban_substrings needs, so the window covers both.
    text = "the refund Do Not Distributesk-ABCDEFGHIJKLMNOPQRST the the refund is \n sk-x"
    pieces = [text[:46], text[46:]]
    assert stream(unthrottled(NARROW, step=1), pieces) == (NARROW.scan(text).text, None)
    assert "Distribute" not in NARROW.scan(text).text
