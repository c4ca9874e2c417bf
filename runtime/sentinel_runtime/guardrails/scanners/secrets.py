"""``secrets`` scanner: likely secrets found by detect-secrets (seed 003).

Verdicts are those of detect-secrets scanning the text as a file, which is what llm-guard
does through a temporary file: a line pass, then (only if it found nothing) the eager
INI-transformer pass. We run the same passes in memory, and before running the 27 plugins
and filters on a line we check whether any plugin's own detection regex can match it at
all; lines no regex can touch are skipped, which is where the time went. Findings are the
plugin's; ``test_secrets_equivalence`` checks them against detect-secrets' file scan.
"""

from __future__ import annotations

import bisect
import hashlib
import io
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from sentinel_runtime.guardrails.scanners.base import (
    ScannerParams,
    ScannerType,
    ScanResult,
    replace_spans,
)

# No extension: detect-secrets treats the text as FileType.OTHER, as llm-guard's temp file.
VIRTUAL_FILENAME = "assistant-output"
# Shorter findings are prefixes that a plugin captured (GitHubTokenDetector reports "ghp");
# for those the whole regex match is redacted, never the three letters alone.
MIN_SECRET_LENGTH = 8

# Some plugin regexes cost up to half a millisecond per 2 KB (case-insensitive alternations
# behind lookbehinds). Each of these plugins' regexes needs one of the literals to match, so
# when none occurs in the text (case-folded for IGNORECASE plugins) the regex is not run.
# ``test_secrets_pregates`` checks the claim against the real regexes.
PREGATES: dict[str, tuple[tuple[str, ...], bool]] = {
    # plugin class: (literals, compare case-folded)
    "KeywordDetector": (("key", "pass", "pwd", "secret", "contrase"), True),
    "CloudantDetector": (("key", "pw", "pass", "token", "cloudant"), True),
    "IbmCloudIamDetector": (("key", "pwd", "pass", "token"), True),
    "IbmCosHmacDetector": (("key",), True),
    "SoftlayerDetector": (("key", "pwd", "pass", "token", "softlayer"), True),
    "ArtifactoryDetector": (("AKC", "AP"), False),
    "MailchimpDetector": (("-us",), False),
    "IPPublicDetector": ((".",), False),
}

_configure_lock = threading.Lock()
_engine: _DetectSecretsEngine | None = None


class SecretsParams(ScannerParams):
    redact_mode: Literal["all", "partial", "hash"] = "all"


class _NamedStringIO(io.StringIO):
    name = VIRTUAL_FILENAME


@dataclass(frozen=True)
class Finding:
    secret_type: str
    value: str


class _DetectSecretsEngine:
    """detect-secrets configured once with every built-in plugin and the default filters."""

    def __init__(self) -> None:
        from detect_secrets.core import scan as ds_scan
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.plugins.base import RegexBasedDetector
        from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin
        from detect_secrets.plugins.keyword import (
            QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP,
            REGEX_BY_FILETYPE,
            KeywordDetector,
            determine_file_type,
        )
        from detect_secrets.settings import get_settings
        from detect_secrets.transformers import get_transformed_file
        from detect_secrets.util.code_snippet import get_code_snippet

        get_settings().configure_plugins(
            [{"name": cls.__name__} for cls in get_mapping_from_secret_type_to_class().values()]
        )
        from detect_secrets.settings import get_plugins

        self._scan = ds_scan
        self._get_code_snippet = get_code_snippet
        self._get_transformed_file = get_transformed_file
        self.plugins = list(get_plugins())
        gates: list[tuple[tuple[str, ...], bool, re.Pattern[str]]] = []
        self.denylists: dict[str, list[re.Pattern[str]]] = {}
        for plugin in self.plugins:
            if isinstance(plugin, RegexBasedDetector):
                patterns = list(plugin.denylist)
                self.denylists[plugin.secret_type] = patterns
            elif isinstance(plugin, HighEntropyStringsPlugin):
                patterns = [plugin.regex]
            elif isinstance(plugin, KeywordDetector):
                filetype = determine_file_type(VIRTUAL_FILENAME)
                patterns = list(
                    REGEX_BY_FILETYPE.get(filetype, QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP)
                )
            else:  # pragma: no cover - a new plugin family needs its own gate
                raise RuntimeError(f"no gate for detect-secrets plugin {type(plugin).__name__}")
            literals, folded = PREGATES.get(type(plugin).__name__, ((), False))
            # MULTILINE: per-line anchors must still match inside the joined text.
            gates.extend(
                (literals, folded, re.compile(p.pattern, p.flags | re.MULTILINE)) for p in patterns
            )
        self.gates = tuple(gates)

    def _candidate_lines(self, lines: list[str]) -> list[int]:
        """1-based numbers of lines that some plugin regex can match; a superset is fine."""
        joined = "\n".join(lines)
        starts = [0]
        for line in lines[:-1]:
            starts.append(starts[-1] + len(line) + 1)
        casefolded: str | None = None
        hits: set[int] = set()
        for literals, folded, gate in self.gates:
            if literals:
                haystack = joined
                if folded:
                    casefolded = joined.casefold() if casefolded is None else casefolded
                    haystack = casefolded
                if not any(literal in haystack for literal in literals):
                    continue
            for m in gate.finditer(joined):
                first = bisect.bisect_right(starts, m.start())
                last = bisect.bisect_right(starts, max(m.start(), m.end() - 1))
                hits.update(range(first, last + 1))
        return sorted(hits)

    def _scan_lines(self, raw_lines: list[str]) -> list[Finding]:
        lines = [line.rstrip() for line in raw_lines]
        numbers = self._candidate_lines(lines)
        if not numbers:
            return []
        scan = self._scan
        findings: list[Finding] = []
        # Mirrors detect_secrets.core.scan._process_line_based_plugins, restricted to the
        # candidate lines; every other line has no plugin regex match and yields nothing.
        for number in numbers:
            line = lines[number - 1]
            snippet = self._get_code_snippet(lines=raw_lines, line_number=number)
            if scan._is_filtered_out(
                required_filter_parameters=["line"],
                filename=VIRTUAL_FILENAME,
                line=line,
                context=snippet,
            ):
                continue
            for plugin in self.plugins:
                for secret in scan._scan_line(
                    plugin=plugin,
                    filename=VIRTUAL_FILENAME,
                    line=line,
                    line_number=number,
                    context=snippet,
                ):
                    if not scan._is_filtered_out(
                        required_filter_parameters=["context"],
                        filename=VIRTUAL_FILENAME,
                        secret=secret.secret_value,
                        plugin=plugin,
                        line=line,
                        context=snippet,
                    ):
                        findings.append(Finding(secret.type, secret.secret_value or ""))
        return findings

    def _line_passes(self, text: str) -> Iterator[list[str]]:
        """The line lists detect-secrets' file scan would check, in its order."""
        handle = _NamedStringIO(text)
        yield self._get_transformed_file(handle) or handle.readlines()
        handle.seek(0)
        eager = self._get_transformed_file(handle, use_eager_transformers=True)
        if eager:
            yield eager

    def find(self, text: str) -> list[Finding]:
        for lines in self._line_passes(text):
            findings = self._scan_lines(lines)
            if findings:
                return findings
        return []


def engine() -> _DetectSecretsEngine:
    # detect-secrets keeps its plugin settings in a process-wide singleton: configure once.
    global _engine  # noqa: PLW0603
    with _configure_lock:
        if _engine is None:
            _engine = _DetectSecretsEngine()
        return _engine


def _mask(value: str, mode: str) -> str:
    if mode == "partial" and len(value) >= MIN_SECRET_LENGTH:
        return f"{value[:2]}...{value[-2:]}"
    if mode == "hash":
        return hashlib.sha256(value.encode()).hexdigest()
    return "******"


@dataclass(frozen=True)
class SecretsScanner:
    engine: _DetectSecretsEngine
    redact_mode: str
    rewrite: bool

    def _spans(self, text: str, findings: list[Finding]) -> list[tuple[int, int, str]]:
        spans: list[tuple[int, int, str]] = []
        for finding in findings:
            if len(finding.value) < MIN_SECRET_LENGTH:
                for pattern in self.engine.denylists.get(finding.secret_type, []):
                    spans.extend(
                        (m.start(), m.end(), _mask(m.group(0), self.redact_mode))
                        for m in pattern.finditer(text)
                    )
                continue
            start = text.find(finding.value)
            while start != -1:
                end = start + len(finding.value)
                spans.append((start, end, _mask(finding.value, self.redact_mode)))
                start = text.find(finding.value, end)
        return spans

    def scan(self, text: str) -> ScanResult:
        findings = self.engine.find(text)
        if not findings:
            return ScanResult.clean(text)
        if not self.rewrite:
            return ScanResult(text, False, 1.0)
        # A finding we cannot locate in the text (the eager pass re-quotes values) leaves
        # the text unchanged, so the engine escalates the hit to a block.
        return ScanResult(replace_spans(text, self._spans(text, findings)), False, 1.0)


def build(params: SecretsParams, rewrite: bool) -> SecretsScanner:
    return SecretsScanner(engine=engine(), redact_mode=params.redact_mode, rewrite=rewrite)


SCANNER = ScannerType(
    name="secrets",
    params=SecretsParams,
    build=build,
    summary="detect-secrets plugins (keys, tokens, high-entropy strings, passwords)",
)
