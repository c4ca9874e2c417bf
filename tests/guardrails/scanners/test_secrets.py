"""``secrets`` scanner: detect-secrets verdicts, redact modes, whole-token redaction."""

from __future__ import annotations

import ast
import hashlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from sentinel_runtime.guardrails.engine import build_engine
from sentinel_runtime.guardrails.policy import parse_policy
from sentinel_runtime.guardrails.scanners import REGISTRY
from sentinel_runtime.guardrails.scanners import secrets as secrets_module
from sentinel_runtime.guardrails.scanners.base import ScanResult
from sentinel_runtime.guardrails.scanners.secrets import (
    SCANNER,
    SecretsParams,
    builtin_plugins,
    default_plugins,
    engine,
)
from support.scanners import scanning

GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # 36 characters after the prefix
AWS = "AKIAIOSFODNN7EXAMPLE"
PASSWORD = "hunter2isgreat"
ALL = sorted(builtin_plugins())  # keyword and high-entropy detectors are opt-in


scan = scanning(SCANNER)


def test_registered_under_seed_name() -> None:
    assert REGISTRY["secrets"] is SCANNER


def test_seed_default_redact_mode_is_all() -> None:
    assert SecretsParams.model_validate({}).redact_mode == "all"
    assert SecretsParams.model_validate({}).can_redact()


@pytest.mark.parametrize(
    "config",
    [
        pytest.param({"redact_mode": "none"}, id="unknown-mode"),
        pytest.param({"redact_mode": "ALL"}, id="wrong-case"),
        pytest.param({"redact_mode": 1}, id="not-a-string"),
    ],
)
def test_invalid_config_is_rejected(config: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        SecretsParams.model_validate(config)


@pytest.mark.parametrize(
    ("mode", "mask"),
    [
        pytest.param("all", "******", id="all"),
        pytest.param("partial", f"{AWS[:2]}...{AWS[-2:]}", id="partial"),
        pytest.param("hash", hashlib.sha256(AWS.encode()).hexdigest(), id="hash"),
    ],
)
def test_aws_access_key_redact_modes(mode: str, mask: str) -> None:
    result = scan(f"Use key {AWS} for the bucket.", redact_mode=mode)
    assert result == ScanResult(f"Use key {mask} for the bucket.", False, 1.0)


@pytest.mark.parametrize("mode", ["all", "partial", "hash"])
def test_github_token_is_redacted_whole(mode: str) -> None:
    # detect-secrets reports only "ghp" for this token; the whole token must still go.
    assert {f.value for f in engine().find(GHP)} == {"ghp"}
    result = scan(f"export GITHUB_TOKEN={GHP}\necho done", redact_mode=mode)
    assert not result.valid
    assert GHP not in result.text
    assert "ghp_" not in result.text
    assert GHP[6:-2] not in result.text  # not even the middle
    assert result.text.endswith("\necho done")
    if mode == "hash":
        assert hashlib.sha256(GHP.encode()).hexdigest() in result.text


def test_github_token_mid_sentence() -> None:
    result = scan(f"The token {GHP}, which you pasted, is live.")
    assert result.text == "The token ******, which you pasted, is live."


@pytest.mark.parametrize(
    "line",
    [
        pytest.param(f'password = "{PASSWORD}"', id="double-quoted"),
        pytest.param(f"db_pass: '{PASSWORD}'", id="yaml-style"),
        pytest.param(f'PASSWORD = "{PASSWORD}"', id="upper-case-keyword"),
    ],
)
def test_keyword_password_is_redacted(line: str) -> None:
    result = scan(f"Config:\n{line}\n", plugins=ALL)
    assert PASSWORD not in result.text
    assert "******" in result.text
    assert not result.valid


def test_partial_mode_keeps_only_two_characters_each_side() -> None:
    result = scan(f'password = "{PASSWORD}"', redact_mode="partial", plugins=ALL)
    assert result.text == 'password = "hu...at"'


def test_every_occurrence_is_redacted() -> None:
    result = scan(f"{AWS} and again {AWS}")
    assert result.text == "****** and again ******"


def test_private_key_header_is_a_hit() -> None:
    result = scan("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n")
    assert not result.valid
    assert "BEGIN RSA PRIVATE KEY" not in result.text


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("The weather in Paris is mild in April.", id="weather"),
        pytest.param(
            "To reset your password, open Settings and choose Security.", id="password-word"
        ),
        pytest.param("The API key concept is explained in chapter 3.", id="api-key-words"),
        pytest.param("Call the secret santa organiser before Friday.", id="secret-word"),
        pytest.param("Version 2.4.1 was released on 2024-05-01.", id="version-and-date"),
        pytest.param('He said "hello there" and left.', id="quoted-prose"),
    ],
)
@pytest.mark.parametrize("plugins", [None, ALL], ids=["default-plugins", "all-plugins"])
def test_ordinary_prose_is_not_flagged(text: str, plugins: list[str] | None) -> None:
    assert scan(text, plugins=plugins) == ScanResult(text, True, -1.0)


def test_default_plugins_are_the_token_detectors() -> None:
    assert "AWSKeyDetector" in default_plugins()
    assert "GitHubTokenDetector" in default_plugins()
    for opt_in in ("KeywordDetector", "Base64HighEntropyString", "HexHighEntropyString"):
        assert opt_in not in default_plugins()
    # The keyword plugin is off by default; our assignments family catches the same form.
    assert scan(f'password = "{PASSWORD}"', detectors=[]).valid
    assert scan(f'password = "{PASSWORD}"').text == 'password = "******"'


def test_unknown_plugin_name_is_invalid_config() -> None:
    with pytest.raises(ValidationError, match="unknown detect-secrets plugins"):
        SecretsParams.model_validate({"plugins": ["NoSuchDetector"]})


def test_token_longer_than_the_plugin_pattern_is_redacted_whole() -> None:
    long_token = "ghp_" + "Ab1" * 14  # 42 characters after the prefix; the plugin wants 36
    result = scan(f"push with {long_token} now", redact_mode="all")
    assert result.text == "push with ****** now"


def test_block_action_leaves_text_unchanged() -> None:
    text = f"key {AWS}"
    assert scan(text, rewrite=False) == ScanResult(text, False, 1.0)


def test_allowlist_pragma_on_the_same_line_is_honoured_by_the_plugins_only() -> None:
    # detect-secrets semantics: the line filter drops the plugins' finding.
    assert scan(f'key = "{AWS}"  # pragma: allowlist secret', detectors=[]).valid
    # Our detectors do not read the pragma: an answer is not a repository, and text that a
    # document or a prompt put in the answer must not switch the scanner off.
    assert not scan(f'key = "{AWS}"  # pragma: allowlist secret').valid


@pytest.mark.parametrize(
    "newline",
    [pytest.param("\n", id="lf"), pytest.param("\r\n", id="crlf"), pytest.param("\r", id="cr")],
)
def test_allowlist_pragma_does_not_cover_the_next_line(newline: str) -> None:
    # A lone CR ends a line in detect-secrets' file scan too (universal newlines).
    text = f"ok  # pragma: allowlist secret{newline}{AWS}"
    result = scan(text)
    assert not result.valid
    assert AWS not in result.text


def test_unlocatable_finding_leaves_text_unchanged_even_with_other_findings() -> None:
    # "hunter2" is too short to cut out alone; redacting only the AWS key would leak it.
    text = f'password = "hunter2"\n{AWS}'
    assert {f.value for f in engine(tuple(ALL)).find(text)} == {"hunter2", AWS}
    assert scan(text, plugins=ALL) == ScanResult(text, False, 1.0)


def test_unlocatable_finding_escalates_to_block_in_the_engine() -> None:
    policy = parse_policy(
        "blockMessage: BLOCKED\nscanners:\n"
        "  - {type: secrets, plugins: [KeywordDetector, AWSKeyDetector]}\n"
    )
    outcome = build_engine(policy, "").scan(f'password = "hunter2"\n{AWS}')
    assert outcome.text == "BLOCKED"
    assert outcome.action == "block"
    assert outcome.hits[0].escalated


def test_ini_style_value_is_found_by_the_eager_pass() -> None:
    text = "api_key: abcd1234efgh5678ijkl"
    result = scan(text, plugins=ALL)
    assert result.text == "api_key: ******"


def test_importing_the_registry_does_not_load_detect_secrets() -> None:
    code = (
        "import sys, sentinel_runtime.guardrails.scanners\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'detect_secrets'))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"


def test_only_public_detect_secrets_names_are_used() -> None:
    # The `<1.6` pin guarded calls of scan._scan_line and _is_filtered_out; with public names
    # only, an upgrade that changes behaviour shows in test_secrets_equivalence instead.
    tree = ast.parse(Path(secrets_module.__file__).read_text(encoding="utf-8"))
    bound: set[str] = set()
    private: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("detect_secrets"):
            parts = [*node.module.split("."), *(alias.name for alias in node.names)]
            private += [p for p in parts if p.startswith("_")]
            bound |= {alias.asname or alias.name for alias in node.names}
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("detect_secrets"):
                    private += [p for p in alias.name.split(".") if p.startswith("_")]
                    bound.add(alias.asname or alias.name.split(".")[0])
    assert "get_filters_with_parameter" in bound  # the walk does see the imports
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in bound
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            private.append(f"{node.value.id}.{node.attr}")
    assert private == []
