"""The ``sentinel`` console script, run as a user runs it."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from sentinel_runtime.guardrails.state import default_policy_path

# Beside this interpreter first: `make test` runs .venv/bin/python without .venv/bin on PATH.
SENTINEL = shutil.which("sentinel", path=str(Path(sys.executable).parent)) or shutil.which(
    "sentinel"
)
pytestmark = pytest.mark.skipif(SENTINEL is None, reason="sentinel console script not installed")


DEFAULT_POLICY = str(Path(default_policy_path()))


def run(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([SENTINEL, *args], input=stdin, capture_output=True, timeout=60)


def test_policy_default_prints_the_shipped_template() -> None:
    result = run("policy", "default")
    assert result.returncode == 0
    policy = yaml.safe_load(result.stdout)
    assert policy["blockMessage"] == "The model output was blocked by output guardrails."
    assert [s["type"] for s in policy["scanners"]] == ["regex", "secrets", "sensitive"]


def test_policy_check_lists_active_and_skipped_scanners(tmp_path: Path) -> None:
    path = tmp_path / "guardrails.yaml"
    path.write_text(
        "action: block\n"
        "scanners:\n"
        "  - type: regex\n    patterns: ['x+']\n"
        "  - type: telepathy\n"
        "  - type: reading_time\n    max_time: -1\n"
        "  - type: token_limit\n    action: redact\n    limit: 10\n",
        encoding="utf-8",
    )
    result = run("policy", "check", str(path))
    out = result.stdout.decode()
    assert result.returncode == 0, result.stderr
    assert "active scanners: 2" in out
    assert "[0] regex" in out and "action=block" in out
    assert "unknown scanner type 'telepathy'" in out
    assert "[2] reading_time" in out and "max_time" in out
    assert "redact hits block" in out  # token_limit cannot rewrite
    assert run("policy", "check", "--strict", str(path)).returncode == 3
    report = json.loads(run("policy", "check", "--json", str(path)).stdout)
    assert [s["type"] for s in report["activeScanners"]] == ["regex", "token_limit"]
    assert {s["index"] for s in report["skipped"]} == {1, 2}


def test_policy_check_lists_the_secrets_scanners_detectors(tmp_path: Path) -> None:
    path = tmp_path / "guardrails.yaml"
    path.write_text(
        "scanners:\n"
        "  - type: secrets\n    detectors: [private_keys, jwt]\n    plugins: [AWSKeyDetector]\n",
        encoding="utf-8",
    )
    out = run("policy", "check", str(path)).stdout.decode()
    assert "private_keys: PEM private-key blocks" in out and "jwt: JSON Web Tokens" in out
    assert "tokens:" not in out and "detect-secrets: 1 plugins (AWSKeyDetector)" in out
    report = json.loads(run("policy", "check", "--json", str(path)).stdout)
    detectors = report["activeScanners"][0]["detectors"]
    assert [f["family"] for f in detectors["families"]] == ["private_keys", "jwt"]
    default = json.loads(run("policy", "check", "--json", DEFAULT_POLICY).stdout)
    families = default["activeScanners"][1]["detectors"]["families"]
    assert "tokens/github-fine-grained-pat" in families[0]["detectors"]
    assert len(families) == 6


LLM_GUARD_INSTALLED = importlib.util.find_spec("llm_guard") is not None


@pytest.mark.skipif(LLM_GUARD_INSTALLED, reason="needs an environment without the llm-guard extra")
@pytest.mark.parametrize(
    ("others", "active"),
    [
        pytest.param("", 0, id="alone"),
        pytest.param("  - type: regex\n    patterns: ['x+']\n", 1, id="beside-a-working-scanner"),
    ],
)
def test_policy_check_fails_when_a_configured_scanner_cannot_be_built(
    tmp_path: Path, others: str, active: int
) -> None:
    path = tmp_path / "guardrails.yaml"
    path.write_text(
        f"scanners:\n{others}  - type: llm_guard\n    action: block\n    scanner: Toxicity\n",
        encoding="utf-8",
    )
    result = run("policy", "check", str(path))
    out = result.stdout.decode()
    assert result.returncode == 1, out
    assert f"active scanners: {active}" in out
    assert "llm-guard is not installed: pip install 'sentinel-rag[llm-guard]'" in out
    assert "error: 1 configured scanner(s) cannot run here" in out
    assert "no active scanners" not in out
    report = run("policy", "check", "--json", str(path))
    assert report.returncode == 1
    assert json.loads(report.stdout)["skipped"][0]["reason"].startswith("build failed: llm-guard")


def test_policy_check_fails_when_every_configured_scanner_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "guardrails.yaml"
    path.write_text("scanners:\n  - type: telepathy\n  - type: regex\n", encoding="utf-8")
    result = run("policy", "check", str(path))
    assert result.returncode == 1
    assert "error: no configured scanner is active" in result.stdout.decode()


def test_policy_check_of_an_empty_scanner_list_warns_and_passes(tmp_path: Path) -> None:
    path = tmp_path / "guardrails.yaml"
    path.write_text("scanners: []\n", encoding="utf-8")
    result = run("policy", "check", str(path))
    assert result.returncode == 0
    assert "warning: no active scanners" in result.stdout.decode()


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        pytest.param(None, "(missing)", id="missing"),
        pytest.param(b"scanners: [", "(load_failed)", id="malformed"),
        pytest.param(b"- a\n- b\n", "(invalid)", id="not-a-mapping"),
        pytest.param(b"\xff\xfe\x00", "(load_failed)", id="not-utf8"),
    ],
)
def test_policy_check_exits_non_zero_for_unusable_files(
    tmp_path: Path, content: bytes | None, fragment: str
) -> None:
    path = tmp_path / "guardrails.yaml"
    if content is not None:
        path.write_bytes(content)
    result = run("policy", "check", str(path))
    assert result.returncode == 1
    assert fragment in result.stderr.decode()


@pytest.mark.parametrize(
    ("text", "code", "expected"),
    [
        pytest.param("all clear", 0, "all clear", id="clean"),
        pytest.param("key AKIAIOSFODNN7EXAMPLE", 10, "key [REDACTED]", id="redacted"),
    ],
)
def test_scan_uses_the_default_policy_and_reports_by_exit_code(
    text: str, code: int, expected: str
) -> None:
    result = run("scan", stdin=text.encode())
    assert result.returncode == code
    assert result.stdout.decode() == expected


def test_scan_blocks_with_a_policy_file(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("scanners:\n  - {type: ban_substrings, action: block, substrings: [nope]}\n")
    result = run("scan", "--policy", str(path), "--json", stdin=b"say nope")
    assert result.returncode == 11
    assert result.stdout.decode() == "The model output was blocked by output guardrails."
    assert json.loads(result.stderr)["action"] == "block"


def test_scan_rejects_non_utf8_input() -> None:
    result = run("scan", stdin=b"\xff\xfe bad")
    assert result.returncode == 1
    assert "not UTF-8" in result.stderr.decode()


def test_policy_types_lists_every_registered_type_with_its_fields() -> None:
    out = run("policy", "types").stdout.decode()
    for name in ("regex", "ban_substrings", "json", "reading_time", "secrets", "sensitive"):
        assert f"\n{name}: " in f"\n{out}"
    assert "    patterns: list[str] (required)" in out
    assert "    limit: int (default 4096)" in out


def test_policy_check_judges_the_tools_section_with_the_runtime_parser(tmp_path: Path) -> None:
    airline = Path(__file__).resolve().parents[1] / "samples" / "airline" / "guardrails.yaml"
    good = run("policy", "check", str(airline), "--json")
    assert good.returncode == 0, good.stderr
    assert "refund_booking" in json.loads(good.stdout)["tools"]["guarded"]
    bad = tmp_path / "guardrails.yaml"
    bad.write_text("scanners: []\ntools:\n  rules: |\n    a(X) :- b(X, Y.\n", encoding="utf-8")
    result = run("policy", "check", str(bad))
    assert result.returncode == 1
    assert b"tools: rejected, 1 problem" in result.stdout
    assert b"line 4, column 19" in result.stdout
