"""The secrets evaluation set: deterministic for a seed, every positive carries its secret, every
kind has enough samples, negatives are benign (no e-mail, IP, phone or card number, no positive's
secret) and the generator shares nothing with the scanner it measures. Recall and precision are
the bench's business (bench/secrets_detectors.py), not asserted here."""

from __future__ import annotations

import ast
import collections
import json
import re
from pathlib import Path

import pytest

from sentinel_runtime.evaluation import secrets_set
from sentinel_runtime.evaluation.secrets_set import BENIGN, Sample, generate

# The kinds the evaluation set must cover (the ids the detector table is judged by).
REQUIRED_KINDS = {
    "aws-access-key-id", "gcp-api-key", "azure-ad-client-secret",
    "azure-storage-connection-string", "digitalocean-token", "alibaba-access-key-id",
    "hashicorp-vault-token", "terraform-cloud-token", "github-pat", "github-oauth",
    "github-app-token", "github-refresh-token", "github-fine-grained-pat", "gitlab-pat",
    "gitlab-pipeline-trigger", "gitlab-runner-token", "bitbucket-app-password",
    "atlassian-api-token", "circleci-token", "buildkite-token", "doppler-token", "slack-token",
    "slack-webhook", "discord-webhook", "telegram-bot-token", "teams-webhook", "stripe-key",
    "stripe-webhook-secret", "square-token", "paypal-braintree-token", "shopify-token",
    "sendgrid-api-key", "mailgun-api-key", "mailchimp-api-key", "brevo-api-key", "npm-token",
    "pypi-token", "rubygems-token", "nuget-api-key", "dockerhub-pat", "openai-api-key",
    "anthropic-api-key", "huggingface-token", "groq-api-key", "replicate-token",
    "perplexity-api-key", "xai-api-key", "langsmith-api-key", "twilio-api-key", "linear-api-key",
    "notion-token", "grafana-token", "sentry-token", "newrelic-api-key", "postman-api-key",
    "pulumi-token", "flyio-token", "supabase-token", "planetscale-token", "age-secret-key",
    "databricks-token", "dynatrace-token", "private-key-pem", "jwt", "url-credentials",
    "docker-config-auth", "npmrc-auth", "pip-config", "password-assignment",
    "secret-assignment", "hex-key-assignment",
}  # fmt: skip

# What the default policy's ``sensitive`` scanner is there for, written independently of it.
EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
IPV4 = re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d.])")
IPV6 = re.compile(r"(?<![\w:])(?:[0-9A-Fa-f]{1,4}:){2,7}[0-9A-Fa-f]{1,4}(?![\w:])|::1\b")
PHONE = re.compile(
    r"\+\d{1,3}[ .-]?\(?\d{2,4}\)?[ .-]?\d{3,4}[ .-]?\d{3,4}"
    r"|\(\d{3}\)\s?\d{3}[ .-]\d{4}"
    r"|(?<![\w-])\d{3}[ .-]\d{3}[ .-]\d{4}(?![\w-])"
)
CARD_DIGITS = re.compile(r"(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)")


@pytest.fixture(scope="module")
def samples() -> list[Sample]:
    return generate(0)


def luhn(number: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(number)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def test_the_same_seed_gives_the_same_set() -> None:
    assert generate(3) == generate(3)
    assert generate(0) != generate(1)


def test_every_positive_text_holds_its_secret(samples: list[Sample]) -> None:
    for sample in samples:
        if sample.positive:
            assert sample.secret, sample
            assert sample.secret in sample.text, (sample.kind, sample.framing)
        else:
            assert sample.secret == ""


def test_every_kind_has_at_least_ten_samples(samples: list[Sample]) -> None:
    counts = collections.Counter(s.kind for s in samples if s.positive)
    assert set(counts) == REQUIRED_KINDS == set(secrets_set.KINDS)
    assert min(counts.values()) >= 10, counts.most_common()[-3:]


def test_kinds_vary_their_framing_and_secrets(samples: list[Sample]) -> None:
    by_kind: dict[str, list[Sample]] = collections.defaultdict(list)
    for s in samples:
        if s.positive:
            by_kind[s.kind].append(s)
    for kind, group in by_kind.items():
        assert len({s.framing for s in group}) >= 3, kind
        assert len({s.secret for s in group}) == len(group), kind


def test_at_least_600_negatives_in_every_family(samples: list[Sample]) -> None:
    negatives = [s for s in samples if not s.positive]
    assert len(negatives) >= 600
    families = collections.Counter(s.framing for s in negatives)
    assert set(families) == set(secrets_set.NEGATIVE_FAMILIES)
    assert all(s.kind == BENIGN for s in negatives)


def test_negatives_hold_no_pii(samples: list[Sample]) -> None:
    for s in samples:
        if s.positive:
            continue
        for name, pattern in (("email", EMAIL), ("ipv4", IPV4), ("ipv6", IPV6), ("phone", PHONE)):
            assert not pattern.search(s.text), (name, s.framing, s.text)
        for m in CARD_DIGITS.finditer(s.text):
            number = re.sub(r"\D", "", m.group())
            assert not luhn(number), ("card", s.framing, m.group())


def test_no_negative_holds_a_positive_secret(samples: list[Sample]) -> None:
    negatives = "\n\x00\n".join(s.text for s in samples if not s.positive)
    leaked = [s.kind for s in samples if s.positive and s.secret in negatives]
    assert leaked == []


def test_cli_writes_json_lines(tmp_path: Path) -> None:
    out = tmp_path / "set.jsonl"
    assert secrets_set.main(["--out", str(out), "--seed", "2"]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [Sample(**row) for row in rows] == generate(2)


def test_the_generator_is_independent_of_the_scanners() -> None:
    """An independent check: nothing of the guardrails (detector tables included) is read."""
    modules = sorted(Path(secrets_set.__file__).parent.glob("*.py"))
    assert len(modules) > 1  # the package's every module, not only its __init__
    for module in modules:
        source = module.read_text(encoding="utf-8")
        tree = ast.parse(source)
        imported = {
            node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
        } | {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
             for alias in node.names}  # fmt: skip
        assert not any(name.startswith("sentinel_runtime") for name in imported), module
        assert "provider_tokens" not in source, module
