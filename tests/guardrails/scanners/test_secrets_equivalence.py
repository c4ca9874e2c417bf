"""Our in-memory secrets engine gives detect-secrets' own file-scan verdicts.

The scanner runs detect-secrets' line pass and eager pass in memory and skips lines no
plugin regex can match; this checks the findings, as ``(secret_type, secret_value)`` sets,
against ``detect_secrets.core.scan.scan_file`` over the same text written to a file (what
llm-guard does), for the default plugin set and for every built-in plugin. The file scan
reads detect-secrets' process-wide settings, configured here with the same plugins.
"""

from __future__ import annotations

import json
import locale
from collections.abc import Iterator
from pathlib import Path

import pytest
from detect_secrets.core.scan import scan_file
from detect_secrets.settings import transient_settings

from sentinel_runtime.guardrails.scanners.secrets import (
    VIRTUAL_FILENAME,
    builtin_plugins,
    default_plugins,
    engine,
)

# shared/ lies beside the repository, on developer machines and in CI.
PRESIDIO = (
    Path(__file__).resolve().parents[4]
    / "shared"
    / "datasets"
    / "presidio"
    / "synth_dataset_v2.json"
)
PRESIDIO_TEXTS = 300

Verdict = set[tuple[str, str]]

# Real-looking secrets (public documentation examples or made up), one per plugin family.
SECRETS = [
    "AKIAIOSFODNN7EXAMPLE",
    "aws key AKIAZ7VRSQ5TJN2EXAMP is live",
    "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "gho_0123456789abcdefghijABCDEFGHIJ012345",
    'password = "hunter2isgreat"',
    "db_pass: 'S3cr3tPassw0rd!'",
    'my_secret = "q8Zx1LmN4pR7tV2w"',
    'PaSSWord = "MixedCaseKeyword1"',
    'token = "3f2a9c8e7d6b5a4f3e2d1c0b9a8f7e6d5c4b3a29"',
    'blob = "dGhpcyBpcyBhIHZlcnkgc2VjcmV0IGtleSB2YWx1ZQ=="',
    "value: 'Zm9vYmFyYmF6cXV4cXV1eDEyMzQ1Njc4OTAhQCM='",
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwi"
    "aWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----BEGIN OPENSSH PRIVATE KEY-----",
    "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
    "api_key: abcd1234efgh5678ijkl",  # INI-looking: only the eager pass catches it
    "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "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",
    "//registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789",
    "https://admin:hunter2pass@example.com/db",
    "AKCp8jQ8abcdefghijklmno",
    "0123456789abcdef0123456789abcdef-us12",
    "glpat-abcdefghij0123456789",
    "SK0123456789abcdef0123456789abcdef",
    "server at 52.14.201.3:8080",  # the plugin matches, a filter drops it
    "cloudant_password = 'qmwnebrvtcyxuzialskdjfhg'",
    "cloudant_password = 'abcdefghijklmnopqrstuvwx'",  # sequential: filtered out
    "[creds]\napi_key = 9f8e7d6c5b4a39281706",
    "PASSWORD: Zq9!xL2#vB7@",
    "# pragma: allowlist secret AKIAIOSFODNN7EXAMPLE",
    'key = "AKIAIOSFODNN7EXAMPLE"  # pragma: allowlist secret',
    "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=lJzRc1YdHaAA2KCNJJ1tkYwF/+mKK6Ygw0"
    "NGe170Xu592euJv2wYUtBlV8z+qnlcNQSnIYVTkLUntUwIMQaaaa==",
    "1234567890:AAEhBOweik6ad9r_QXMENQjcrGbqCr4K-sQ",
]
PROSE = ["Here is the config you asked for.", "It should work on staging.", "Let me know."]
NEWLINES = {"lf": "\n", "crlf": "\r\n", "cr": "\r"}


def generated() -> Iterator[str]:
    for secret in SECRETS:
        yield secret
        yield f"Sure! {secret} (keep it safe)"
        for newline in NEWLINES.values():
            for position in range(len(PROSE) + 1):
                lines = [*PROSE]
                lines.insert(position, secret)
                yield newline.join(lines)
        yield f"ok  # pragma: allowlist secret\r{secret}"
        yield f"{secret}\u2028next\x0cpage\x85line\x0bend"
        yield f"{secret}\n{secret}"
    yield "[section]\napi_key: abcd1234efgh5678"
    yield "setting:\n  password: correcthorsebattery"
    yield "key=value\nsecret: notreallysecret99"
    yield "\n".join(SECRETS[:10])


def presidio_texts() -> list[str]:
    rows = json.loads(PRESIDIO.read_text(encoding="utf-8"))
    return [row["full_text"] for row in rows[:PRESIDIO_TEXTS]]


def file_verdict(text: str, directory: Path) -> Verdict:
    # Same name as the scanner's virtual file: no extension, so FileType.OTHER.
    path = directory / VIRTUAL_FILENAME
    path.write_text(text, encoding="utf-8", newline="")  # keep "\r" as written
    return {(s.type, s.secret_value or "") for s in scan_file(str(path))}


PLUGIN_SETS = {"default": default_plugins, "all": lambda: tuple(sorted(builtin_plugins()))}
ACTIVE: list[tuple[str, ...]] = []


def memory_verdict(text: str) -> Verdict:
    return {(f.secret_type, f.value) for f in engine(ACTIVE[-1]).find(text)}


@pytest.fixture(scope="module", autouse=True, params=sorted(PLUGIN_SETS))
def plugin_set(request: pytest.FixtureRequest) -> Iterator[str]:
    """Both sides use the same plugins: ours by name, the file scan via global settings."""
    assert locale.getpreferredencoding(False).lower().replace("-", "") == "utf8", (
        "scan_file reads with the locale encoding; the corpus is written as UTF-8"
    )
    names = PLUGIN_SETS[request.param]()
    ACTIVE.append(names)
    with transient_settings({"plugins_used": [{"name": name} for name in names]}):
        yield request.param
    ACTIVE.pop()


def compare(texts: list[str], directory: Path) -> tuple[int, list[str]]:
    agree = 0
    differences: list[str] = []
    for text in texts:
        expected, actual = file_verdict(text, directory), memory_verdict(text)
        if expected == actual:
            agree += 1
        else:
            differences.append(f"{text[:80]!r}: file={sorted(expected)} memory={sorted(actual)}")
    return agree, differences


@pytest.mark.skipif(not PRESIDIO.exists(), reason=f"data set not found at {PRESIDIO}")
def test_presidio_corpus_verdicts_match(tmp_path: Path) -> None:
    texts = presidio_texts()
    assert len(texts) == PRESIDIO_TEXTS
    agree, differences = compare(texts, tmp_path)
    assert not differences, f"{agree}/{len(texts)} agree; first differences: {differences[:5]}"


def test_generated_secret_verdicts_match(tmp_path: Path) -> None:
    texts = list(generated())
    agree, differences = compare(texts, tmp_path)
    assert not differences, f"{agree}/{len(texts)} agree; first differences: {differences[:5]}"


def test_generated_corpus_is_not_trivial(tmp_path: Path, plugin_set: str) -> None:
    # The comparison above means something only if most generated texts hold findings.
    texts = list(generated())
    flagged = sum(bool(file_verdict(text, tmp_path)) for text in texts)
    minimum = {"all": 0.75, "default": 0.55}[plugin_set]
    assert flagged >= minimum * len(texts), f"only {flagged}/{len(texts)} texts have findings"
    types = {t for text in texts for t, _ in memory_verdict(text)}
    assert len(types) >= {"all": 18, "default": 15}[plugin_set], sorted(types)


def test_ini_value_is_found_only_by_the_eager_pass(tmp_path: Path, plugin_set: str) -> None:
    if plugin_set == "default":
        pytest.skip("the keyword plugin that the eager pass feeds is opt-in")
    text = "api_key: abcd1234efgh5678ijkl"
    first_pass = text.splitlines(keepends=True)
    assert engine(ACTIVE[-1])._scan_lines(first_pass) == []
    expected = {("Secret Keyword", "abcd1234efgh5678ijkl")}
    assert memory_verdict(text) == expected == file_verdict(text, tmp_path)


@pytest.mark.parametrize("newline", list(NEWLINES.values()), ids=list(NEWLINES))
def test_line_endings_split_lines_as_the_file_scan_does(newline: str, tmp_path: Path) -> None:
    text = f"fine  # pragma: allowlist secret{newline}AKIAIOSFODNN7EXAMPLE"
    assert (
        memory_verdict(text)
        == file_verdict(text, tmp_path)
        == {("AWS Access Key", "AKIAIOSFODNN7EXAMPLE")}
    )
