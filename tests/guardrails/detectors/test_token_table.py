"""The provider token table: every entry compiles and finds a token written in its format,
and the prefixes alone, inside words or with a short body, find nothing."""

from __future__ import annotations

import random
import re

import pytest

from sentinel_runtime.guardrails.detectors import tokens
from sentinel_runtime.guardrails.detectors.tokens import CHARSETS, TokenDetector, compile_rule

DETECTOR = TokenDetector()
CHARSET_ENTRIES = [e for e in tokens.table() if "charset" in e and "before" not in e]


def _body(entry: dict, rng: random.Random, length: int) -> str:
    chars = [c for c in map(chr, range(33, 127)) if re.fullmatch(CHARSETS[entry["charset"]], c)]
    return "".join(rng.choice(chars) for _ in range(length))


def _min_length(entry: dict) -> int:
    length = entry["length"]
    return length if isinstance(length, int) else length[0]


def test_every_entry_compiles_and_ids_are_unique() -> None:
    ids = [e["id"] for e in tokens.table()]
    assert len(ids) == len(set(ids))
    assert len(DETECTOR.rules) == len(ids) >= 80
    categories = {rule.category for rule in DETECTOR.rules}
    assert {"cloud", "vcs", "ci", "chat", "payment", "email", "registry", "ai"} <= categories


@pytest.mark.parametrize("entry", CHARSET_ENTRIES, ids=lambda e: e["id"])
def test_a_token_in_its_documented_format_is_found_whole(entry: dict) -> None:
    rng = random.Random(entry["id"])
    for prefix in entry["prefixes"]:
        token = prefix + _body(entry, rng, _min_length(entry))
        text = f'Use "{token}" for the deploy.'
        found = {(d.start, d.end) for d in DETECTOR.find(text) if d.detector.endswith(entry["id"])}
        start = text.index(token)
        assert (start, start + len(token)) in found, (entry["id"], token)


@pytest.mark.parametrize("entry", CHARSET_ENTRIES, ids=lambda e: e["id"])
def test_a_prefix_with_too_short_a_body_or_inside_a_word_is_not_its_token(entry: dict) -> None:
    rng = random.Random(entry["id"])
    prefix = entry["prefixes"][0]
    short = prefix + _body(entry, rng, _min_length(entry) - 1)
    assert not [d for d in DETECTOR.find(f"{short} ") if d.detector.endswith(entry["id"])]
    if prefix[0].isalnum():
        glued = "x" + prefix + _body(entry, rng, _min_length(entry))
        assert not [d for d in DETECTOR.find(glued) if d.detector.endswith(entry["id"])]


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("tenant secret abc8Q~" + "A" * 32, "azure-ad-client-secret"),
        ("bot 1234567890:" + "AAH" + "x" * 32 + " ready", "telegram-bot-token"),
        ("0123456789abcdef0123456789abcdef-us21", "mailchimp-api-key"),
        ("SG." + "a" * 22 + "." + "B" * 43, "sendgrid-api-key"),
        ("abcdefghijklmn.atlasv1." + "c" * 64, "terraform-cloud-token"),
        ("access_token$production$" + "a1" * 8 + "$" + "f" * 32, "paypal-braintree-token"),
        ("lsv2_pt_" + "a" * 32 + "_" + "b" * 10, "langsmith-api-key"),
        ("https://hooks.slack.com/services/T0123ABCD/B0123ABCD/" + "x" * 24, "slack-webhook"),
        ("https://discord.com/api/webhooks/123456789012345678/" + "y" * 68, "discord-webhook"),
        ("sk-" + "A1b2" * 5 + "T3BlbkFJ" + "C3d4" * 5, "openai-legacy-key"),
    ],
)
def test_formats_with_inner_structure(text: str, rule: str) -> None:
    assert any(d.detector == f"tokens/{rule}" for d in DETECTOR.find(text))


def test_a_longer_run_of_the_body_characters_is_redacted_whole() -> None:
    token = "ghp_" + "Ab1" * 20  # longer than GitHub documents
    found = [d for d in DETECTOR.find(f"x {token} y") if d.detector == "tokens/github-pat"]
    assert [(d.start, d.end) for d in found] == [(2, 2 + len(token))]


def test_a_malformed_entry_is_named() -> None:
    with pytest.raises(ValueError, match="'broken'"):
        compile_rule({"id": "broken", "prefixes": ["x_"], "charset": "nope", "length": 3})


def test_hold_is_the_last_run_of_non_whitespace() -> None:
    assert DETECTOR.hold("the key is ghp_abc") == len("the key is ")
    assert DETECTOR.hold("the key is ") == len("the key is ")
