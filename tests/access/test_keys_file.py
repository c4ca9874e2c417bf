"""The keys file's parser: what it accepts, what it refuses and how it says so (never quoting
a key), how globs match, and how a key is found."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from sentinel_runtime.access import keys
from support.docs_site import page

KEY = "k" * 16


def parse(entries: Any) -> keys.Keyring:
    return keys.parse(yaml.safe_dump({"keys": entries}), "keys.yaml")


def test_an_entry_becomes_a_principal_found_by_its_key_only() -> None:
    ring = parse(
        [
            {"name": "team-a", "key": KEY, "read": ["a*"], "write": ["alpha"], "rpm": 5},
            {"name": "ops", "key": "o" * 20, "audit": True, "policy": True, "tpm": 100},
        ]
    )
    team = ring.find(KEY)
    assert team is not None and team.name == "team-a"
    assert (team.read, team.write, team.audit, team.policy, team.rpm, team.tpm) == (
        ("a*",),
        ("alpha",),
        False,
        False,
        5,
        None,
    )
    assert ring.find("o" * 20).name == "ops"  # type: ignore[union-attr]
    assert ring.find(KEY + "x") is None and ring.find("") is None
    # Only digests are kept: the key's text is nowhere in the keyring.
    assert KEY not in repr(ring) and KEY.encode() not in b"".join(d for d, _ in ring.entries)


@pytest.mark.parametrize(
    ("globs", "index", "allowed"),
    [
        pytest.param(["a*"], "alpha", True, id="star"),
        pytest.param(["a*"], "beta", False, id="star-other"),
        pytest.param(["a*"], "Alpha", False, id="case-sensitive"),
        pytest.param(["team-?"], "team-1", True, id="question-mark"),
        pytest.param(["[ab]*"], "beta", True, id="set"),
        pytest.param(["[!a]*"], "alpha", False, id="negated-set"),
        pytest.param([], "alpha", False, id="no-scope"),
        pytest.param(["*"], "anything", True, id="everything"),
    ],
)
def test_globs_match_index_names_case_sensitively(
    globs: list[str], index: str, allowed: bool
) -> None:
    principal = keys.Principal("p", read=tuple(globs), write=tuple(globs))
    assert principal.may_read(index) is allowed
    assert principal.may_write(index) is allowed


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        pytest.param(
            [{"name": "a", "key": "short-key"}], "keys[0] (a).key: a key has 16", id="short"
        ),
        pytest.param([{"name": "a", "key": "has a space in it!"}], "printable ASCII", id="space"),
        pytest.param(
            [{"name": "runtime-api-key", "key": KEY}],
            "'runtime-api-key' is reserved",
            id="reserved",
        ),
        pytest.param([{"name": "Team A", "key": KEY}], "keys[0] (Team A).name", id="bad-name"),
        pytest.param(
            [{"name": "a", "key": KEY}, {"name": "a", "key": "b" * 16}],
            "two keys are named 'a'",
            id="duplicate-name",
        ),
        pytest.param(
            [{"name": "a", "key": KEY}, {"name": "b", "key": KEY}],
            "keys 'a' and 'b' have the same key text",
            id="duplicate-key",
        ),
        pytest.param([{"name": "a", "key": KEY, "raed": ["x"]}], "keys[0] (a).raed", id="typo"),
        pytest.param(
            [{"name": "a", "key": KEY, "read": ["a/b"]}], "keys[0] (a).read: item 0", id="glob"
        ),
        pytest.param([{"name": "a", "key": KEY, "rpm": 0}], "keys[0] (a).rpm", id="rpm-zero"),
        pytest.param([{"name": "a"}], "keys[0] (a).key: Field required", id="no-key"),
        pytest.param("none", "keys: Input should be a valid list", id="not-a-list"),
    ],
)
def test_a_bad_entry_is_refused_by_entry_and_field(entries: Any, expected: str) -> None:
    with pytest.raises(keys.KeysFileError) as raised:
        parse(entries)
    message = str(raised.value)
    assert message.startswith("keys.yaml: ")
    assert expected in message
    assert KEY not in message and "short-key" not in message and "has a space" not in message


def test_a_yaml_error_names_the_line_not_its_text() -> None:
    text = f'keys:\n  - name: a\n    key: "{KEY}\n    read: [a\n'
    with pytest.raises(keys.KeysFileError) as raised:
        keys.parse(text, "keys.yaml")
    message = str(raised.value)
    assert "not valid YAML" in message and "line" in message
    assert KEY not in message


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("- a\n", id="list"),
        pytest.param("keys: 3\n", id="number"),
    ],
)
def test_the_file_must_be_a_mapping_with_a_keys_list(text: str) -> None:
    with pytest.raises(keys.KeysFileError):
        keys.parse(text, "keys.yaml")


def test_an_empty_list_is_valid_and_opens_nothing() -> None:
    assert keys.parse("keys: []\n", "keys.yaml").entries == ()


def test_reading_a_file(tmp_path: Path) -> None:
    path = tmp_path / "keys.yaml"
    path.write_text(yaml.safe_dump({"keys": [{"name": "a", "key": KEY}]}))
    ring, first = keys.read_file(str(path))
    assert ring.names() == ["a"]
    assert keys.read_file(str(path))[1] == first
    path.write_bytes(b"\xff\xfe")
    with pytest.raises(keys.KeysFileError, match="not UTF-8"):
        keys.read_file(str(path))
    with pytest.raises(keys.KeysFileError, match="cannot be read"):
        keys.read_file(str(tmp_path / "missing.yaml"))


def test_every_field_of_an_entry_is_documented() -> None:
    text = page("keys-and-tenants.md")
    missing = [name for name in keys.KeyEntry.model_fields if f"| `{name}` |" not in text]
    assert missing == []
