"""Policy parsing: the contract's permissive rules, key spellings, load statuses, diagnostics."""

from __future__ import annotations

import hashlib
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest

from sentinel_runtime.guardrails.policy import (
    DEFAULT_BLOCK_MESSAGE,
    MAX_POLICY_BYTES,
    Policy,
    PolicyError,
    parse_policy,
    read_policy_file,
)

UNKNOWN_SCANNER = "output_guardrails_policy_unknown_scanner"
INVALID_CONFIG = "output_guardrails_policy_invalid_scanner_config"
INVALID_ACTION = "output_guardrails_policy_invalid_action"
INVALID_SCANNERS = "output_guardrails_policy_invalid_scanners"
INCOMPATIBLE_ACTION = "output_guardrails_policy_incompatible_scanner_action"
INVALID_FAIL_MODE = "output_guardrails_policy_invalid_fail_mode"
UNKNOWN_FIELD = "output_guardrails_policy_unknown_field"
INVALID_BLOCK_MESSAGE = "output_guardrails_policy_invalid_block_message"

FULLWIDTH_REGEX = "".join(chr(ord(c) + 0xFEE0) for c in "regex")
DEFAULT_PATTERNS = [
    "-----BEGIN (?:[A-Z ]+)?PRIVATE KEY-----",
    r"\bAKIA[0-9A-Z]{16}\b",
    r"\bAIza[0-9A-Za-z\-_]{35}\b",
    r"\bgh[pousr]_[A-Za-z0-9_]{20,}\b",
    r"(?i)\bsk-[A-Za-z0-9]{20,}\b",
    r"(?i)\bbearer\s+[A-Za-z0-9._\-]{20,}\b",
]


def events_of(policy: Policy) -> list[str]:
    return [d.event for d in policy.diagnostics]


def single(entry: str, top: str = "") -> Policy:
    """A policy with one scanner entry given as indented YAML mapping lines."""
    body = "\n".join(f"    {line}" for line in entry.strip().splitlines())
    return parse_policy(f"{top}scanners:\n  -\n{body}\n")


# --- key spellings -----------------------------------------------------------------------


@pytest.mark.parametrize("key", ["blockMessage", "block_message", "block-message", "BlockMessage"])
def test_block_message_spellings(key: str) -> None:
    policy = parse_policy(f"{key}: Nope.\n")
    assert policy.block_message == "Nope."
    assert policy.diagnostics == ()


@pytest.mark.parametrize(
    ("entry", "field", "value"),
    [
        pytest.param("type: secrets\nredactMode: hash", "redact_mode", "hash", id="redactMode"),
        pytest.param("type: secrets\nredact_mode: hash", "redact_mode", "hash", id="redact_mode"),
        pytest.param(
            "type: regex\npatterns: [a]\nmatchType: fullmatch",
            "match_type",
            "fullmatch",
            id="matchType",
        ),
        pytest.param(
            "type: regex\npatterns: [a]\nmatch_type: fullmatch",
            "match_type",
            "fullmatch",
            id="match_type",
        ),
        pytest.param(
            "type: regex\npatterns: [a]\nisBlocked: false", "is_blocked", False, id="isBlocked"
        ),
        pytest.param(
            "type: ban_substrings\nsubstrings: [a]\ncaseSensitive: true",
            "case_sensitive",
            True,
            id="caseSensitive",
        ),
        pytest.param(
            "type: ban_substrings\nsubstrings: [a]\ncontainsAll: true",
            "contains_all",
            True,
            id="containsAll",
        ),
        pytest.param(
            "type: ban_substrings\nsubstrings: [a]\nmatchType: str",
            "match_type",
            "str",
            id="ban-matchType",
        ),
        pytest.param(
            "type: json\nrequiredElements: 2", "required_elements", 2, id="requiredElements"
        ),
        pytest.param("type: reading_time\nmaxTime: 0.5", "max_time", 0.5, id="maxTime"),
        pytest.param("type: reading_time\nmax-time: 0.5", "max_time", 0.5, id="max-time"),
        pytest.param(
            "type: token_limit\nencodingName: cl100k_base",
            "encoding_name",
            "cl100k_base",
            id="encodingName",
        ),
        pytest.param("type: token_limit\nmodelName: gpt-4", "model_name", "gpt-4", id="modelName"),
    ],
)
def test_scanner_field_spellings(entry: str, field: str, value: Any) -> None:
    policy = single(entry, top="action: block\n")  # block: no incompatible-action notes
    assert policy.diagnostics == ()
    assert getattr(policy.scanners[0].params, field) == value


@pytest.mark.parametrize(
    "spelled",
    [
        "ban_substrings",
        "banSubstrings",
        "BanSubstrings",
        "ban-substrings",
        "BAN_SUBSTRINGS",
        " ban_substrings ",
    ],
)
def test_type_name_spellings(spelled: str) -> None:
    policy = single(f"type: '{spelled}'\nsubstrings: [x]")
    assert [s.type for s in policy.scanners] == ["ban_substrings"]


@pytest.mark.parametrize(
    ("key", "value", "expected", "diagnostic"),
    [
        pytest.param("failMode", "open", "open", None, id="camel-open"),
        pytest.param("fail_mode", "closed", "closed", None, id="snake-closed"),
        pytest.param("failMode", "OPEN", "open", None, id="upper-case-open"),
        pytest.param(None, None, "closed", None, id="default-closed"),
        pytest.param("failMode", "sometimes", "closed", INVALID_FAIL_MODE, id="invalid-word"),
        pytest.param("failMode", "off", "closed", INVALID_FAIL_MODE, id="yaml-boolean"),
        pytest.param("failMode", "[open]", "closed", INVALID_FAIL_MODE, id="list"),
    ],
)
def test_fail_mode(
    key: str | None, value: str | None, expected: str, diagnostic: str | None
) -> None:
    extra = f"\n{key}: {value}" if key else ""
    policy = single(f"type: regex\npatterns: [a]{extra}")
    assert policy.scanners[0].fail_mode == expected
    assert events_of(policy) == ([diagnostic] if diagnostic else [])


# --- actions -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("top", "entry", "expected", "diagnostics"),
    [
        pytest.param(None, None, "redact", [], id="default-is-redact"),
        pytest.param("block", None, "block", [], id="top-level-default-applies"),
        pytest.param("block", "redact", "redact", [], id="scanner-redact-wins"),
        pytest.param("redact", "block", "block", [], id="scanner-block-wins"),
        pytest.param(None, "' Block '", "block", [], id="case-and-space-insensitive"),
        pytest.param("explode", None, "redact", [INVALID_ACTION], id="invalid-top-level"),
        pytest.param("block", "explode", "block", [INVALID_ACTION], id="invalid-falls-back-to-top"),
        pytest.param(
            None, "explode", "redact", [INVALID_ACTION], id="invalid-falls-back-to-redact"
        ),
        pytest.param(None, "[block]", "redact", [INVALID_ACTION], id="list-is-invalid"),
        pytest.param("explode", "block", "block", [INVALID_ACTION], id="invalid-top-valid-entry"),
    ],
)
def test_action_resolution(
    top: str | None, entry: str | None, expected: str, diagnostics: list[str]
) -> None:
    head = f"action: {top}\n" if top else ""
    line = f"\naction: {entry}" if entry else ""
    policy = single(f"type: ban_substrings\nsubstrings: [x]{line}", top=head)
    assert policy.scanners[0].action == expected
    assert events_of(policy) == diagnostics


def test_invalid_action_diagnostic_names_the_action() -> None:
    policy = single("type: ban_substrings\nsubstrings: [x]\naction: shred")
    assert dict(policy.diagnostics[0].fields) == {"action": "shred"}


def test_top_level_action_is_recorded_as_default() -> None:
    assert parse_policy("action: block\n").default_action == "block"
    assert parse_policy("").default_action == "redact"


@pytest.mark.parametrize(
    ("entry", "incompatible"),
    [
        pytest.param("type: token_limit\nlimit: 5", True, id="token-limit-redact"),
        pytest.param("type: token_limit\nlimit: 5\naction: block", False, id="token-limit-block"),
        pytest.param("type: reading_time\nmax_time: 1", True, id="reading-time-no-truncate"),
        pytest.param("type: reading_time\nmax_time: 1\ntruncate: true", False, id="truncate"),
        pytest.param("type: json\nrepair: false", True, id="json-no-repair"),
        pytest.param("type: json", False, id="json-repair"),
        pytest.param("type: regex\npatterns: [a]\nis_blocked: false", True, id="regex-allow-list"),
        pytest.param("type: secrets", False, id="secrets"),
    ],
)
def test_incompatible_action_diagnostic(entry: str, incompatible: bool) -> None:
    policy = single(entry)
    spec = policy.scanners[0]
    assert spec.escalates_to_block is incompatible
    if incompatible:
        assert events_of(policy) == [INCOMPATIBLE_ACTION]
        assert dict(policy.diagnostics[0].fields)["type"] == spec.type
        assert dict(policy.diagnostics[0].fields)["action"] == "redact"
    else:
        assert policy.diagnostics == ()


# --- permissive parsing ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "shown"),
    [
        pytest.param("type: toxicity", "toxicity", id="unknown-name"),
        pytest.param('type: "re\\u200bgex"\npatterns: [a]', "re\u200bgex", id="zero-width-inside"),
        pytest.param('type: "\\u202eregex"\npatterns: [a]', "\u202eregex", id="bidi-prefix"),
        pytest.param('type: "regex\\U000e0041"\npatterns: [a]', "regex\U000e0041", id="tag-char"),
        pytest.param(f"type: {FULLWIDTH_REGEX}\npatterns: [a]", FULLWIDTH_REGEX, id="fullwidth"),
    ],
)
def test_unknown_scanner_type_is_skipped(entry: str, shown: str) -> None:
    policy = single(entry)
    assert policy.scanners == ()
    assert events_of(policy) == [UNKNOWN_SCANNER]
    assert dict(policy.diagnostics[0].fields)["type"] == shown
    assert policy.skipped[0].type == shown


@pytest.mark.parametrize(
    "entry",
    [
        pytest.param("type: regex", id="required-field-missing"),
        pytest.param("type: regex\npatterns: ['(']", id="pattern-does-not-compile"),
        pytest.param("type: regex\npatterns: ['(a+)+$']", id="catastrophic-pattern"),
        pytest.param("type: regex\npatterns: [a]\nis_blocked: 'false'", id="bool-as-string"),
        pytest.param("type: reading_time\nmax_time: '1'", id="number-as-string"),
        pytest.param("type: token_limit\nlimit: 0", id="out-of-range"),
        pytest.param("type: token_limit\nencoding_name: o200k_base", id="encoding-not-offline"),
        pytest.param("type: sensitive\ndetectors: [ssn]", id="unknown-detector"),
        pytest.param("type: secrets\nredact_mode: some", id="unknown-redact-mode"),
        pytest.param("type: ban_substrings\nsubstrings: Do Not Distribute", id="string-not-list"),
        pytest.param("type: llm_guard\nscanner: Relevance", id="prompt-dependent-llm-guard"),
    ],
)
def test_invalid_scanner_config_is_skipped(entry: str) -> None:
    policy = single(entry)
    assert policy.scanners == ()
    assert events_of(policy) == [INVALID_CONFIG]
    fields = dict(policy.diagnostics[0].fields)
    assert fields["type"] == policy.skipped[0].type
    assert fields["error"]
    assert policy.skipped[0].reason.startswith("invalid config")


@pytest.mark.parametrize(
    ("entries", "reason"),
    [
        pytest.param("  - 5\n", "entry is a int, not a mapping", id="integer-entry"),
        pytest.param("  - regex\n", "entry is a str, not a mapping", id="string-entry"),
        pytest.param("  - patterns: [a]\n", "missing 'type'", id="type-missing"),
        pytest.param("  - type: ''\n", "missing 'type'", id="type-empty"),
        pytest.param("  - type: [regex]\n", "missing 'type'", id="type-not-a-string"),
    ],
)
def test_malformed_entry_is_skipped(entries: str, reason: str) -> None:
    policy = parse_policy(f"scanners:\n{entries}")
    assert policy.scanners == ()
    assert events_of(policy) == [INVALID_CONFIG]
    assert policy.skipped[0].reason == reason


def test_one_bad_scanner_does_not_disable_the_others() -> None:
    policy = parse_policy(
        """
scanners:
  - type: toxicity
  - type: ban_substrings
    action: block
    substrings: [Do Not Distribute]
  - type: regex
    patterns: ['(']
  - 42
  - type: secrets
    action: vaporise
  - type: invisible_text
"""
    )
    assert [(s.index, s.type, s.action) for s in policy.scanners] == [
        (1, "ban_substrings", "block"),
        (4, "secrets", "redact"),
        (5, "invisible_text", "redact"),
    ]
    assert [(s.index, s.type) for s in policy.skipped] == [(0, "toxicity"), (2, "regex"), (3, "")]
    assert events_of(policy) == [UNKNOWN_SCANNER, INVALID_CONFIG, INVALID_CONFIG, INVALID_ACTION]


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("{type: regex}", id="mapping"),
        pytest.param("regex", id="string"),
        pytest.param("3", id="integer"),
    ],
)
def test_scanners_not_a_list(value: str) -> None:
    policy = parse_policy(f"blockMessage: Still used.\nscanners: {value}\n")
    assert policy.scanners == ()
    assert events_of(policy) == [INVALID_SCANNERS]
    assert policy.block_message == "Still used."


@pytest.mark.parametrize(
    "document",
    [
        pytest.param("", id="empty"),
        pytest.param("---\n", id="document-marker"),
        pytest.param("# nothing but a comment\n", id="comment-only"),
        pytest.param("scanners:\n", id="scanners-null"),
        pytest.param("scanners: []\n", id="scanners-empty"),
    ],
)
def test_empty_documents_have_no_scanners(document: str) -> None:
    policy = parse_policy(document)
    assert policy.scanners == ()
    assert policy.skipped == ()
    assert policy.diagnostics == ()
    assert policy.block_message == DEFAULT_BLOCK_MESSAGE


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("''", id="empty"),
        pytest.param("'   '", id="blank"),
        pytest.param("42", id="int"),
    ],
)
def test_invalid_block_message_falls_back(value: str) -> None:
    policy = parse_policy(f"blockMessage: {value}\n")
    assert policy.block_message == DEFAULT_BLOCK_MESSAGE
    assert events_of(policy) == [INVALID_BLOCK_MESSAGE]


# --- items of a list field: one bad item costs that item, not the scanner -----------------


@pytest.mark.parametrize(
    ("field", "scanner_type", "items", "kept", "dropped"),
    [
        pytest.param(
            "patterns",
            "regex",
            "['https?://\\S+', '', 123, null]",
            [r"https?://\S+"],
            [1, 2, 3],
            id="regex-empty-number-null",
        ),
        pytest.param(
            "substrings",
            "ban_substrings",
            "[secret, null, '']",
            ["secret"],
            [1, 2],
            id="ban-substrings-null-empty",
        ),
        pytest.param(
            "substrings",
            "ban_substrings",
            "[true, 1.5, {a: 1}, [x], Keep]",
            ["Keep"],
            [0, 1, 2, 3],
            id="boolean-float-mapping-list",
        ),
        pytest.param(
            "substrings",
            "ban_substrings",
            "[42, ' ', '7']",
            [" ", "7"],
            [0],
            id="numbers-are-dropped-not-turned-into-strings",
        ),
    ],
)
def test_a_bad_item_is_dropped_with_a_diagnostic(
    field: str, scanner_type: str, items: str, kept: list[str], dropped: list[int]
) -> None:
    # The contract's parser keeps the non-empty strings of the list (docs/contracts.md).
    policy = single(f"type: {scanner_type}\n{field}: {items}")
    assert policy.skipped == ()
    assert [getattr(s.params, field) for s in policy.scanners] == [kept]
    assert events_of(policy) == [INVALID_CONFIG] * len(dropped)
    for position, diagnostic in zip(dropped, policy.diagnostics, strict=True):
        fields = dict(diagnostic.fields)
        assert fields["type"] == scanner_type
        assert (fields["field"], fields["item"], fields["index"]) == (field, position, 0)
        assert fields["effect"] == "item dropped"
        assert fields["error"].startswith(f"{field}[{position}] is ")


@pytest.mark.parametrize(
    ("item", "said"),
    [
        pytest.param("''", "an empty string", id="empty"),
        pytest.param("null", "null", id="null"),
        pytest.param("7", "a number", id="number"),
        pytest.param("false", "a boolean", id="boolean"),
        pytest.param("{a: 1}", "a mapping", id="mapping"),
        pytest.param("[a]", "a list", id="list"),
    ],
)
def test_a_dropped_item_diagnostic_says_what_it_was(item: str, said: str) -> None:
    policy = single(f"type: ban_substrings\nsubstrings: [ok, {item}]")
    assert dict(policy.diagnostics[0].fields)["error"].startswith(f"substrings[1] is {said};")


def test_a_list_of_only_bad_items_skips_the_scanner() -> None:
    policy = single("type: regex\npatterns: ['', null, 3]")
    assert policy.scanners == ()
    assert [s.type for s in policy.skipped] == ["regex"]
    assert events_of(policy) == [INVALID_CONFIG] * 4  # three items, then the scanner
    assert "effect" not in dict(policy.diagnostics[-1].fields)


def test_one_uncompilable_pattern_still_skips_the_regex_scanner() -> None:
    # Only unusable items (not strings, empty) are dropped; a string that is not a regex
    # makes the config invalid, as in the contract's parser.
    policy = single("type: regex\npatterns: [ok, '(']")
    assert policy.scanners == ()
    assert events_of(policy) == [INVALID_CONFIG]


# --- match_type in any case, invisible_text without fields ----------------------------------


@pytest.mark.parametrize(
    ("entry", "meaning"),
    [
        pytest.param("type: ban_substrings\nsubstrings: [a]\nmatch_type: WORD", "word", id="WORD"),
        pytest.param("type: ban_substrings\nsubstrings: [a]\nmatchType: Str", "str", id="Str"),
        pytest.param(
            "type: regex\npatterns: [a]\nmatch_type: FullMatch", "fullmatch", id="FullMatch"
        ),
        pytest.param("type: regex\npatterns: [a]\nmatch-type: ALL", "all", id="ALL"),
    ],
)
def test_match_type_in_any_case(entry: str, meaning: str) -> None:
    policy = single(entry)
    assert policy.diagnostics == ()
    assert [s.params.match_type for s in policy.scanners] == [meaning]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "entry",
    [
        pytest.param("type: ban_substrings\nsubstrings: [a]\nmatch_type: words", id="ban"),
        pytest.param("type: regex\npatterns: [a]\nmatch_type: match", id="regex"),
    ],
)
def test_an_unknown_match_type_still_skips_the_scanner(entry: str) -> None:
    policy = single(entry)
    assert policy.scanners == ()
    assert events_of(policy) == [INVALID_CONFIG]


def test_invisible_text_with_a_field_is_skipped_as_an_invalid_config() -> None:
    policy = parse_policy(
        "scanners:\n  - type: invisible_text\n    strict: true\n"
        "  - type: invisible_text\n    action: block\n    failMode: open\n"
    )
    assert [(s.index, s.action, s.fail_mode) for s in policy.scanners] == [(1, "block", "open")]
    assert [(s.index, s.type) for s in policy.skipped] == [(0, "invisible_text")]
    # One diagnostic: the field makes the config invalid (not an ignored unknown field too).
    assert events_of(policy) == [INVALID_CONFIG]
    assert "strict" in dict(policy.diagnostics[0].fields)["error"]


def test_unknown_fields_are_reported_but_ignored() -> None:
    policy = parse_policy("colour: blue\nscanners:\n  - type: json\n    flavour: strict\n")
    assert [s.type for s in policy.scanners] == ["json"]
    assert [(d.event, dict(d.fields)["field"]) for d in policy.diagnostics] == [
        (UNKNOWN_FIELD, "colour"),
        (UNKNOWN_FIELD, "flavour"),
    ]


def test_pipeline_sections_are_kept_without_diagnostics() -> None:
    policy = parse_policy("introspection:\n  enabled: true\n")
    assert dict(policy.sections) == {"introspection": {"enabled": True}}
    assert policy.diagnostics == ()


# --- unusable documents ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "status"),
    [
        pytest.param("- type: regex\n", "invalid", id="list-document"),
        pytest.param("just a sentence\n", "invalid", id="string-document"),
        pytest.param("42\n", "invalid", id="integer-document"),
        pytest.param("scanners: [\n", "load_failed", id="unclosed-flow"),
        pytest.param("a: b: c\n", "load_failed", id="bad-mapping"),
        pytest.param("scanners:\n\t- type: regex\n", "load_failed", id="tab-indent"),
        pytest.param("a: 1\n---\nb: 2\n", "load_failed", id="two-documents"),
        pytest.param(b"blockMessage: caf\xe9\n", "load_failed", id="latin-1"),
        pytest.param(b"\xff\xfeb\x00", "load_failed", id="utf-16"),
        pytest.param(b"scanners: [\xc3]\n", "load_failed", id="truncated-utf-8"),
    ],
)
def test_unusable_documents_raise_policy_error(data: bytes | str, status: str) -> None:
    with pytest.raises(PolicyError) as info:
        parse_policy(data)
    assert info.value.status == status


def _padded(size: int) -> bytes:
    head = b"blockMessage: Padded.\n#"
    return head + b"x" * (size - len(head) - 1) + b"\n"


def test_policy_of_exactly_the_size_limit_parses() -> None:
    data = _padded(MAX_POLICY_BYTES)
    assert len(data) == MAX_POLICY_BYTES == 1024 * 1024
    assert parse_policy(data).block_message == "Padded."


def test_policy_over_the_size_limit_fails_to_load() -> None:
    with pytest.raises(PolicyError) as info:
        parse_policy(_padded(MAX_POLICY_BYTES + 1))
    assert info.value.status == "load_failed"


def test_utf8_bom_is_accepted() -> None:
    assert parse_policy(b"\xef\xbb\xbfblockMessage: Bom.\n").block_message == "Bom."


# --- hashes and files --------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b"scanners:\n  - type: json\n", id="bytes"),
        pytest.param(b"\xef\xbb\xbfblockMessage: x\n", id="bytes-with-bom"),
        pytest.param(b"", id="empty"),
    ],
)
def test_sha256_is_of_the_raw_bytes(data: bytes) -> None:
    assert parse_policy(data).sha256 == hashlib.sha256(data).hexdigest()


def test_sha256_of_text_is_of_its_utf8_encoding() -> None:
    text = "blockMessage: Bloqué.\n"
    assert parse_policy(text).sha256 == hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_equivalent_documents_with_different_bytes_hash_differently() -> None:
    assert parse_policy("action: block\n").sha256 != parse_policy("action:  block\n").sha256


def test_read_policy_file(tmp_path: Path) -> None:
    path = tmp_path / "guardrails.yaml"
    path.write_bytes(b"scanners:\n  - type: invisible_text\n")
    policy = read_policy_file(str(path))
    assert [s.type for s in policy.scanners] == ["invisible_text"]
    assert policy.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_read_policy_file_missing_path(tmp_path: Path) -> None:
    with pytest.raises(PolicyError) as info:
        read_policy_file(str(tmp_path / "absent" / "guardrails.yaml"))
    assert info.value.status == "missing"


def test_read_policy_file_on_a_directory_fails_to_load(tmp_path: Path) -> None:
    with pytest.raises(PolicyError) as info:
        read_policy_file(str(tmp_path))
    assert info.value.status == "load_failed"


def test_read_policy_file_over_the_size_limit(tmp_path: Path) -> None:
    path = tmp_path / "guardrails.yaml"
    path.write_bytes(_padded(MAX_POLICY_BYTES + 10))
    with pytest.raises(PolicyError) as info:
        read_policy_file(str(path))
    assert info.value.status == "load_failed"


# --- the default policy ------------------------------------------------------------------


def test_default_policy() -> None:
    data = (files("sentinel_runtime.guardrails") / "default_policy.yaml").read_bytes()
    policy = parse_policy(data)
    assert policy.diagnostics == ()
    assert policy.skipped == ()
    assert policy.block_message == DEFAULT_BLOCK_MESSAGE
    assert [(s.type, s.action, s.fail_mode) for s in policy.scanners] == [
        ("regex", "redact", "closed"),
        ("secrets", "redact", "closed"),
        ("sensitive", "redact", "closed"),
    ]
    regex, secrets, sensitive = (s.params for s in policy.scanners)
    assert regex.patterns == DEFAULT_PATTERNS  # type: ignore[attr-defined]
    assert regex.match_type == "search"  # type: ignore[attr-defined]
    assert secrets.redact_mode == "partial"  # type: ignore[attr-defined]
    assert sensitive.detectors == [  # type: ignore[attr-defined]
        "email",
        "phone",
        "credit_card",
        "ip_address",
    ]


@pytest.mark.parametrize("spelling", ["RegEx", "REGEX", "Regex"])
def test_type_names_in_any_case_name_the_registered_type(spelling: str) -> None:
    policy = parse_policy(f"scanners:\n  - type: {spelling}\n    patterns: ['x']\n")
    assert [spec.type for spec in policy.scanners] == ["regex"]
