"""``json`` scanner: the contract's fields and defaults, candidates, repair, required elements."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from sentinel_runtime.guardrails.scanners import REGISTRY
from sentinel_runtime.guardrails.scanners.base import ScanResult
from sentinel_runtime.guardrails.scanners.json import SCANNER, JsonParams
from support.scanners import scanning

scan = scanning(SCANNER)


def test_registered_under_seed_name() -> None:
    assert REGISTRY["json"] is SCANNER


def test_seed_defaults() -> None:
    params = JsonParams.model_validate({})
    assert params.required_elements == 0
    assert params.repair is True
    assert params.can_redact() is True


@pytest.mark.parametrize(
    "text",
    [
        pytest.param('{"a": 1}', id="bare-object"),
        pytest.param('Result: {"a": {"b": [1, 2, {"c": null}]}} done.', id="nested-in-prose"),
        pytest.param('{"text": "braces }{ in a string"}', id="braces-inside-string"),
        pytest.param('{"q": "escaped \\" quote }"}', id="escaped-quote-in-string"),
        pytest.param('one {"a": 1} two {"b": 2}', id="two-valid-objects"),
    ],
)
def test_valid_json_is_clean(text: str) -> None:
    assert scan(text) == ScanResult(text, True, -1.0)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("Plain prose without any structure.", id="no-brackets"),
        pytest.param("As noted [citation needed], and see [1] [2].", id="square-brackets"),
        pytest.param("A list: [1, 2, 3,] is not checked.", id="broken-array-in-prose"),
    ],
)
def test_text_without_objects_is_not_json(text: str) -> None:
    assert scan(text).valid


@pytest.mark.parametrize(
    ("broken", "repaired"),
    [
        pytest.param('{"a": 1, "b": [1, 2,],}', '{"a": 1, "b": [1, 2]}', id="trailing-commas"),
        pytest.param("{'a': 'b', 'n': 2}", '{"a": "b", "n": 2}', id="single-quotes"),
        pytest.param('{"a": [1, 2', '{"a": [1, 2]}', id="unclosed-array-and-object"),
        pytest.param('{"a": {"b": 1', '{"a": {"b": 1}}', id="unclosed-nested-objects"),
        pytest.param('{"a": 1,', '{"a": 1}', id="unclosed-after-comma"),
        pytest.param(
            "{'ok': True, 'no': False, 'x': None}",
            '{"ok": true, "no": false, "x": null}',
            id="python-literals",
        ),
    ],
)
def test_repairs_broken_json(broken: str, repaired: str) -> None:
    result = scan(f"Here you go: {broken}")
    assert result == ScanResult(f"Here you go: {repaired}", False, 1.0)
    json.loads(repaired)


# Repairs json-repair makes that the hand-written repair did not (it blocked these).
@pytest.mark.parametrize(
    ("broken", "repaired"),
    [
        pytest.param('{"a": 1 "b": 2}', '{"a": 1, "b": 2}', id="missing-comma"),
        pytest.param("{a: 1, b: 'x'}", '{"a": 1, "b": "x"}', id="unquoted-keys"),
        pytest.param('{"a": 1, /* */ "b": 2}', '{"a": 1, "b": 2}', id="empty-comment"),
        pytest.param('{"note": "line\nbreak",}', '{"note": "line\\nbreak"}', id="raw-newline"),
        pytest.param('{"a": "x""b": 2}', '{"a": "x", "b": 2}', id="adjacent-strings"),
        pytest.param('{"key": "unfinished', '{"key": "unfinished"}', id="unclosed-string"),
    ],
)
def test_repairs_what_json_repair_repairs(broken: str, repaired: str) -> None:
    assert scan(f"Data: {broken}") == ScanResult(f"Data: {repaired}", False, 1.0)


def test_kaito_example_is_accepted_after_repair() -> None:
    # KAITO (through llm-guard and json-repair) delivers this repaired rather than blocking.
    result = scan('{"a": 1, "b": 2')
    assert result.text == '{"a": 1, "b": 2}'
    assert json.loads(result.text) == {"a": 1, "b": 2}


def test_repair_keeps_non_ascii_text_as_written() -> None:
    assert scan('{"name": "José", "city": "Zürich",}').text == (
        '{"name": "José", "city": "Zürich"}'
    )


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("Use {curly braces} for templates.", id="prose-in-braces"),
        pytest.param("Nested {{}} placeholders", id="double-braces"),
        pytest.param("{" * 3000, id="nesting-beyond-the-repair-depth"),
        pytest.param('{"a": 1, "b"}', id="dropped-key"),
        pytest.param('{"a": 1, // the count\n"b": 2}', id="dropped-comment"),
    ],
)
def test_a_repair_that_is_not_an_object_or_drops_words_is_not_a_repair(text: str) -> None:
    # json-repair makes ["curly braces}"] (0.64) or {} (0.44) of the first: prose, not an
    # object; a repair that drops words of the block loses data.
    assert scan(text) == ScanResult(text, False, 1.0)


def test_repair_does_not_rewrite_string_contents() -> None:
    broken = '{"title": "True story, None of it,}", "tags": ["a",],}'
    result = scan(broken)
    assert not result.valid
    assert json.loads(result.text) == {"title": "True story, None of it,}", "tags": ["a"]}


def test_only_broken_blocks_are_rewritten() -> None:
    result = scan('x {"a": True} y {"b": 2,} z')
    assert result.text == 'x {"a": true} y {"b": 2} z'


def test_unrepairable_block_is_a_hit_left_unchanged() -> None:
    text = "Use {curly braces} for templates."
    assert scan(text) == ScanResult(text, False, 1.0)


def test_one_unrepairable_block_leaves_the_whole_text_unchanged() -> None:
    text = 'a {"ok": 1,} b {not json} c'
    assert scan(text) == ScanResult(text, False, 1.0)


def test_repair_false_reports_broken_json_without_rewriting() -> None:
    text = '{"a": 1,}'
    assert scan(text, repair=False) == ScanResult(text, False, 1.0)
    assert JsonParams.model_validate({"repair": False}).can_redact() is False


@pytest.mark.parametrize(
    "text",
    [
        pytest.param('{"a": 1, "b": 2', id="unclosed-object"),
        pytest.param('{"a": 1,}', id="trailing-comma"),
        pytest.param("x {'a': True} y", id="python-literals-in-prose"),
    ],
)
def test_a_block_that_repairs_passes_under_block_unchanged(text: str) -> None:
    # llm-guard's scanner (KAITO's) counts a repaired block as valid JSON whatever the
    # action: under block the answer goes out as written, neither blocked nor rewritten.
    assert scan(text, rewrite=False) == ScanResult(text, True, -1.0)


def test_under_block_an_unrepairable_block_is_still_a_hit() -> None:
    text = 'a {"ok": 1,} b {not json} c'
    assert scan(text, rewrite=False) == ScanResult(text, False, 1.0)


def test_under_block_repair_false_judges_without_repair() -> None:
    text = '{"a": 1,}'
    assert scan(text, rewrite=False, repair=False) == ScanResult(text, False, 1.0)


def test_an_unclosed_object_that_cannot_be_repaired_is_a_hit() -> None:
    # An answer cut off inside its JSON is judged (llm-guard's brace matching would not see
    # it): prose after an opening brace is no JSON object.
    for rewrite in (True, False):
        assert scan("Result: {not json", rewrite=rewrite) == ScanResult(
            "Result: {not json", False, 1.0
        )


@pytest.mark.parametrize(
    ("text", "required", "valid"),
    [
        pytest.param('{"a": 1,} and {"b": 2', 2, True, id="repaired-blocks-count"),
        pytest.param('{"a": 1,} and {"b": 2', 3, False, id="too-few-even-repaired"),
        pytest.param('{"a": 1} and {nope}', 1, False, id="a-broken-one-is-still-a-hit"),
    ],
)
def test_required_elements_counts_blocks_that_parse_or_repair(
    text: str, required: int, valid: bool
) -> None:
    assert scan(text, rewrite=False, required_elements=required).valid is valid


@pytest.mark.parametrize(
    ("text", "required", "valid"),
    [
        pytest.param("no json here", 1, False, id="none-of-one"),
        pytest.param('{"a": 1}', 1, True, id="one-of-one"),
        pytest.param('{"a": 1}', 2, False, id="one-of-two"),
        pytest.param('{"a": 1} and {"b": 2}', 2, True, id="two-of-two"),
        pytest.param("[1, 2]", 1, False, id="array-is-not-an-element"),
    ],
)
def test_required_elements(text: str, required: int, valid: bool) -> None:
    result = scan(text, required_elements=required)
    assert result.valid is valid
    assert result.text == text


@pytest.mark.parametrize(
    "config",
    [
        pytest.param({"required_elements": -1}, id="negative-count"),
        pytest.param({"required_elements": "2"}, id="count-as-string"),
        pytest.param({"required_elements": 1.5}, id="count-as-float"),
        pytest.param({"repair": "false"}, id="bool-as-string"),
    ],
)
def test_invalid_config_is_rejected(config: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        JsonParams.model_validate(config)
