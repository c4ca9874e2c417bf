"""``secrets`` scanner: likely secrets found by detect-secrets (docs/contracts.md).

Verdicts are those of detect-secrets scanning the text as a file, which is what llm-guard
does through a temporary file: a line pass, then (only if it found nothing) the eager
INI-transformer pass. We run the same passes in memory, and before running the plugins
and filters on a line we check whether any plugin's own detection regex can match it at
all; lines no regex can touch are skipped, which is where the time went. Findings are the
plugin's; ``test_secrets_equivalence`` checks them against detect-secrets' file scan.

The default plugins are detect-secrets' token detectors (AWS, GitHub, Slack, private keys,
JWTs, ...), the family llm-guard's Secrets scanner uses. ``KeywordDetector`` and the two
high-entropy detectors flag ``password = "..."`` and quoted random-looking strings, with
more false positives; a policy opts in with ``plugins``. Plugin instances are our own, so
another user of detect-secrets' process-wide settings (llm-guard) cannot change them.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import importlib
import inspect
import io
import pkgutil
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from pydantic import Field, field_validator

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
_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_\-]*")

# Some plugin regexes cost up to 50 microseconds per line (case-insensitive alternations
# behind lookaheads), others scan every position of the text for a character class.
# Each regex of these plugins needs, on the line it matches, one of the ``any_of``
# literals (case-folded for IGNORECASE plugins) and, when given, one of the ``and_any_of``
# characters; lines without them are not searched.
# ``test_secrets_pregates`` checks the claim against the real regexes.
_DIGITS = tuple("0123456789")
_QUOTES = ("'", '"', "`")
PREGATES: dict[str, tuple[tuple[str, ...], bool, tuple[str, ...]]] = {
    # plugin class: (any_of, compare case-folded, and_any_of)
    "KeywordDetector": (("key", "pass", "pwd", "secret", "contrase"), True, _QUOTES),
    "CloudantDetector": (("key", "pw", "pass", "token", "cloudant"), True, ()),
    "IbmCloudIamDetector": (("key", "pwd", "pass", "token"), True, ()),
    "IbmCosHmacDetector": (("key",), True, ()),
    "SoftlayerDetector": (("key", "pwd", "pass", "token", "softlayer"), True, ()),
    "ArtifactoryDetector": (("AKC", "AP"), False, ()),
    "MailchimpDetector": (("-us",), False, ()),
    "IPPublicDetector": (_DIGITS, False, (".",)),
    "AWSKeyDetector": (("a3t", "abia", "acca", "akia", "asia", "aws"), True, ()),
    "SlackDetector": (("xox", "hooks.slack.com"), True, ()),
    "StripeDetector": (("k_live_",), False, ()),
    "Base64HighEntropyString": (_QUOTES[:2], False, ()),
    "HexHighEntropyString": (_QUOTES[:2], False, ()),
    # Not _DIGITS: the regex's \d also matches other scripts' digits ("١٢٣٤٥٦٧٨:...").
    "TelegramBotTokenDetector": ((":",), False, ()),
}

# Not secrets but addresses; the sensitive scanner owns IPs.
_NOT_DEFAULT = frozenset(
    {"KeywordDetector", "Base64HighEntropyString", "HexHighEntropyString", "IPPublicDetector"}
)
_engines_lock = threading.Lock()
_engines: dict[tuple[str, ...], _DetectSecretsEngine] = {}


@functools.cache
def builtin_plugins() -> dict[str, type]:
    """detect-secrets' own plugin classes by name, found without its global registry."""
    import detect_secrets.plugins as package
    from detect_secrets.plugins.base import BasePlugin

    classes: dict[str, type] = {}
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for value in vars(module).values():
            if (
                inspect.isclass(value)
                and issubclass(value, BasePlugin)
                and value.__module__ == module.__name__
                and not inspect.isabstract(value)
            ):
                classes[value.__name__] = value
    return classes


def default_plugins() -> tuple[str, ...]:
    return tuple(sorted(set(builtin_plugins()) - _NOT_DEFAULT))


class SecretsParams(ScannerParams):
    redact_mode: Literal["all", "partial", "hash"] = "all"
    # Ours: detect-secrets plugin class names; absent means default_plugins().
    plugins: list[str] | None = Field(default=None, min_length=1)

    @field_validator("plugins")
    @classmethod
    def _known(cls, names: list[str] | None) -> list[str] | None:
        if names is None:
            return None
        unknown = sorted(set(names) - set(builtin_plugins()))
        if unknown:
            raise ValueError(
                f"unknown detect-secrets plugins {unknown}; available: {sorted(builtin_plugins())}"
            )
        return names

    def plugin_names(self) -> tuple[str, ...]:
        return tuple(sorted(set(self.plugins))) if self.plugins else default_plugins()


class _NamedStringIO(io.StringIO):
    name = VIRTUAL_FILENAME


@dataclass(frozen=True)
class Gate:
    """One plugin regex and the cheap checks that decide whether it needs to run."""

    regex: re.Pattern[str]
    any_of: tuple[str, ...] = ()  # PREGATES: per-line literals
    folded: bool = False
    and_any_of: tuple[str, ...] = ()
    prefixes: tuple[str, ...] = ()  # derived: every match starts with one of these


def literal_prefixes(pattern: re.Pattern[str]) -> tuple[str, ...]:
    """Literal strings one of which starts every match of a case-sensitive ``pattern``.

    Empty when none can be read off the pattern (a class, an assertion or IGNORECASE first).
    Uses the ``re`` module's own parser, so the answer is what ``re`` will match.
    """
    if pattern.flags & re.IGNORECASE:
        return ()
    try:
        from re import _constants, _parser  # type: ignore[attr-defined]

        parsed = _parser.parse(pattern.pattern, pattern.flags)
    except Exception:  # a parser we do not know: no shortcut, just run the regex
        return ()

    def walk(items: list[tuple[object, object]]) -> tuple[str, ...]:
        literal: list[str] = []
        for op, arg in items:
            if op is _constants.LITERAL:
                literal.append(chr(arg))  # type: ignore[arg-type]
                continue
            if not literal and op is _constants.SUBPATTERN:
                _group, add_flags, del_flags, sub = arg  # type: ignore[misc]
                return () if add_flags or del_flags else walk(list(sub))
            if not literal and op is _constants.BRANCH:
                branches = [walk(list(branch)) for branch in arg[1]]  # type: ignore[index]
                return () if not all(branches) else tuple(p for b in branches for p in b)
            break
        return ("".join(literal),) if literal else ()

    return walk(list(parsed))


@dataclass(frozen=True)
class Finding:
    secret_type: str
    value: str


class _DetectSecretsEngine:
    """One set of detect-secrets plugins, instantiated once, with its default filters."""

    def __init__(self, plugin_names: tuple[str, ...]) -> None:
        from detect_secrets.core import scan as ds_scan
        from detect_secrets.plugins.base import RegexBasedDetector
        from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin
        from detect_secrets.plugins.keyword import (
            QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP,
            REGEX_BY_FILETYPE,
            KeywordDetector,
            determine_file_type,
        )
        from detect_secrets.transformers import get_transformed_file
        from detect_secrets.util.code_snippet import get_code_snippet

        self._scan = ds_scan
        self._get_code_snippet = get_code_snippet
        self._get_transformed_file = get_transformed_file
        self.plugin_names = plugin_names
        self.plugins = [builtin_plugins()[name]() for name in plugin_names]
        gates: list[Gate] = []
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
            any_of, folded, and_any_of = PREGATES.get(type(plugin).__name__, ((), False, ()))
            for pattern in patterns:
                # MULTILINE: per-line anchors must still match inside the joined text.
                regex = re.compile(pattern.pattern, pattern.flags | re.MULTILINE)
                prefixes = () if any_of else literal_prefixes(regex)
                gates.append(Gate(regex, any_of, folded, and_any_of, prefixes))
        self.gates = tuple(gates)

    def _candidate_lines(self, lines: list[str]) -> list[int]:
        """1-based numbers of lines that some plugin regex can match; a superset is fine.

        Cheap regexes run once over the joined text; pregated ones run only on the lines
        that hold one of their literals, line by line as detect-secrets itself applies them.
        """
        joined = "\n".join(lines)
        starts = [0]
        for line in lines[:-1]:
            starts.append(starts[-1] + len(line) + 1)
        folded_lines: list[str] | None = None
        hits: set[int] = set()
        for gate in self.gates:
            if not gate.any_of:
                if gate.prefixes and not any(p in joined for p in gate.prefixes):
                    continue
                for m in gate.regex.finditer(joined):
                    first = bisect.bisect_right(starts, m.start())
                    last = bisect.bisect_right(starts, max(m.start(), m.end() - 1))
                    hits.update(range(first, last + 1))
                continue
            if gate.folded and folded_lines is None:
                folded_lines = [line.casefold() for line in lines]
            haystacks = folded_lines if gate.folded else lines
            for number, (line, haystack) in enumerate(zip(lines, haystacks, strict=True), 1):
                if (
                    number not in hits
                    and any(lit in haystack for lit in gate.any_of)
                    and (not gate.and_any_of or any(c in line for c in gate.and_any_of))
                    and gate.regex.search(line)
                ):
                    hits.add(number)
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
        # Universal newlines, as the file scan's text-mode open(): a lone "\r" ends a line.
        handle = _NamedStringIO(text, newline=None)
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


def engine(plugin_names: tuple[str, ...] | None = None) -> _DetectSecretsEngine:
    """The shared engine for a plugin set (the default set when None), built on first use."""
    names = plugin_names or default_plugins()
    with _engines_lock:
        if names not in _engines:
            _engines[names] = _DetectSecretsEngine(names)
        return _engines[names]


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

    def _spans(self, text: str, findings: list[Finding]) -> list[tuple[int, int, str]] | None:
        """Redaction spans of every finding; None when some finding cannot be located."""
        spans: list[tuple[int, int, str]] = []
        for finding in findings:
            located: list[tuple[int, int, str]] = []
            if len(finding.value) < MIN_SECRET_LENGTH:
                for pattern in self.engine.denylists.get(finding.secret_type, []):
                    for m in pattern.finditer(text):
                        # Plugins with fixed-length patterns stop short of longer tokens.
                        end = _TOKEN_TAIL.match(text, m.end()).end()
                        located.append(
                            (m.start(), end, _mask(text[m.start() : end], self.redact_mode))
                        )
            else:
                start = text.find(finding.value)
                while start != -1:
                    end = start + len(finding.value)
                    located.append((start, end, _mask(finding.value, self.redact_mode)))
                    start = text.find(finding.value, end)
            if not located:
                return None
            spans.extend(located)
        return spans

    def scan(self, text: str) -> ScanResult:
        findings = self.engine.find(text)
        if not findings:
            return ScanResult.clean(text)
        if not self.rewrite:
            return ScanResult(text, False, 1.0)
        # A finding we cannot locate in the text (the eager pass re-quotes values, a short
        # keyword value is not cut out alone) leaves the whole text unchanged, even when
        # other findings could be redacted, so the engine escalates the hit to a block.
        spans = self._spans(text, findings)
        if spans is None:
            return ScanResult(text, False, 1.0)
        return ScanResult(replace_spans(text, spans), False, 1.0)


def build(params: SecretsParams, rewrite: bool) -> SecretsScanner:
    return SecretsScanner(
        engine=engine(params.plugin_names()), redact_mode=params.redact_mode, rewrite=rewrite
    )


SCANNER = ScannerType(
    name="secrets",
    params=SecretsParams,
    build=build,
    summary="detect-secrets plugins (cloud keys, tokens, private keys; opt-in keyword/entropy)",
)
