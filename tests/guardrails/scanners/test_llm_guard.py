"""``llm_guard`` adapter: optional extra, parse-time checks, no heavy imports by default."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from typing import Any

import pytest
from pydantic import ValidationError

from sentinel_runtime.guardrails.engine import build_engine
from sentinel_runtime.guardrails.policy import parse_policy
from sentinel_runtime.guardrails.scanners import REGISTRY, SEED_TYPES
from sentinel_runtime.guardrails.scanners.base import ScanResult
from sentinel_runtime.guardrails.scanners.llm_guard import (
    PROMPT_DEPENDENT,
    SCANNER,
    LlmGuardParams,
    LlmGuardScanner,
)
from sentinel_runtime.observability import events

LLM_GUARD_INSTALLED = importlib.util.find_spec("llm_guard") is not None
needs_no_llm_guard = pytest.mark.skipif(
    LLM_GUARD_INSTALLED, reason="checks behaviour without the llm-guard extra"
)

TOXICITY_POLICY = """
scanners:
  - type: llm_guard
    scanner: Toxicity
    params: {threshold: 0.7}
  - type: ban_substrings
    action: block
    substrings: [Do Not Distribute]
"""


class _RecordingDelegate:
    """Stands in for an llm-guard output scanner: ``scan(prompt, output)`` contract."""

    def __init__(self, verdict: tuple[str, bool, float]) -> None:
        self.verdict = verdict
        self.calls: list[tuple[str, str]] = []

    def scan(self, prompt: str, output: str) -> tuple[str, bool, float]:
        self.calls.append((prompt, output))
        return self.verdict


def test_registered_but_not_a_seed_type() -> None:
    assert REGISTRY["llm_guard"] is SCANNER
    assert "llm_guard" not in SEED_TYPES


def test_policy_with_toxicity_parses() -> None:
    policy = parse_policy(TOXICITY_POLICY)
    assert [s.type for s in policy.scanners] == ["llm_guard", "ban_substrings"]
    params = policy.scanners[0].params
    assert isinstance(params, LlmGuardParams)
    assert params.scanner == "Toxicity"
    assert params.params == {"threshold": 0.7}
    assert policy.skipped == ()


@needs_no_llm_guard
def test_build_without_the_extra_is_a_reported_build_failure() -> None:
    engine = build_engine(parse_policy(TOXICITY_POLICY), "/policy/guardrails.yaml")
    assert [a.spec.type for a in engine.scanners] == ["ban_substrings"]
    assert len(engine.skipped) == 1
    skipped = engine.skipped[0]
    assert (skipped.index, skipped.type) == (0, "llm_guard")
    assert "build failed" in skipped.reason
    assert "llm-guard is not installed" in skipped.reason
    # The rest of the chain still works.
    assert engine.scan("Do Not Distribute").action == "block"


@needs_no_llm_guard
def test_build_failure_is_logged_with_the_seed_event(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("ERROR"):
        build_engine(parse_policy(TOXICITY_POLICY), "/policy/guardrails.yaml")
    assert events.SCANNER_BUILD_FAILED == "output_guardrails_policy_scanner_build_failed"
    assert any(events.SCANNER_BUILD_FAILED in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("name", sorted(PROMPT_DEPENDENT))
def test_prompt_dependent_scanner_is_rejected_at_parse(name: str) -> None:
    policy = parse_policy(f"scanners:\n  - type: llm_guard\n    scanner: {name}\n")
    assert policy.scanners == ()
    assert len(policy.skipped) == 1
    assert "compares output with the prompt" in policy.skipped[0].reason
    assert [d.event for d in policy.diagnostics] == [
        "output_guardrails_policy_invalid_scanner_config"
    ]


@pytest.mark.parametrize(
    "config",
    [
        pytest.param({}, id="scanner-missing"),
        pytest.param({"scanner": ""}, id="scanner-empty"),
        pytest.param({"scanner": "os.system"}, id="dotted-path"),
        pytest.param({"scanner": "Toxicity; rm"}, id="not-an-identifier"),
        pytest.param({"scanner": "Relevance"}, id="prompt-dependent"),
        pytest.param({"scanner": "Toxicity", "params": "threshold=1"}, id="params-not-mapping"),
    ],
)
def test_invalid_config_is_rejected(config: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        LlmGuardParams.model_validate(config)


@pytest.mark.parametrize(
    ("rewrite", "expected_text"),
    [pytest.param(True, "[sanitized]", id="redact"), pytest.param(False, "raw", id="block")],
)
def test_adapter_maps_an_invalid_verdict(rewrite: bool, expected_text: str) -> None:
    delegate = _RecordingDelegate(("[sanitized]", False, 0.93))
    result = LlmGuardScanner(delegate=delegate, rewrite=rewrite).scan("raw")
    assert result == ScanResult(expected_text, False, 0.93)
    assert delegate.calls == [("", "raw")]  # no prompt is ever passed


def test_adapter_maps_a_valid_verdict_to_clean() -> None:
    delegate = _RecordingDelegate(("changed anyway", True, 0.1))
    assert LlmGuardScanner(delegate=delegate, rewrite=True).scan("raw") == ScanResult.clean("raw")


def test_importing_scanners_does_not_import_heavy_backends() -> None:
    code = (
        "import sys, sentinel_runtime.guardrails.scanners, sentinel_runtime.guardrails.policy\n"
        "heavy = ('torch', 'transformers', 'llm_guard', 'presidio_analyzer', 'spacy')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"


def test_parsing_an_llm_guard_policy_does_not_import_heavy_backends() -> None:
    code = (
        "import sys\n"
        "from sentinel_runtime.guardrails.policy import parse_policy\n"
        f"parse_policy({TOXICITY_POLICY!r})\n"
        "heavy = ('torch', 'transformers', 'llm_guard')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.llm_guard
@pytest.mark.skipif(not LLM_GUARD_INSTALLED, reason="needs the llm-guard extra")
def test_real_llm_guard_scanner_runs_through_the_adapter() -> None:
    # NoRefusalLight and BanSubstrings need no model download, so they run offline.
    policy = parse_policy(
        "scanners:\n"
        "  - type: llm_guard\n    action: block\n    scanner: NoRefusalLight\n"
        "  - type: llm_guard\n    scanner: BanSubstrings\n"
        "    params: {substrings: [Project Falcon], match_type: str}\n"
    )
    engine = build_engine(policy, "")
    assert [a.spec.type for a in engine.scanners] == ["llm_guard", "llm_guard"]
    assert engine.scan("Project Falcon ships today").text == "[REDACTED] ships today"
    refused = engine.scan("I'm sorry, but I cannot help with that request.")
    assert refused.action == "block"
    assert engine.scan("Here is the summary you asked for.").action is None
