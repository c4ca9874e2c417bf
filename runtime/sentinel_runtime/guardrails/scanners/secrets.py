"""``secrets`` scanner: likely secrets, found by our detector families and detect-secrets.

Two sources, whose findings are redacted together (overlaps merge, so no part of a secret
stays visible between two redactions):

* our detector families (``guardrails.detectors``): provider token formats from a data table,
  PEM private-key blocks, JWTs, credentials in URLs and values assigned to secret-like names
  in env, YAML, JSON, INI, flag and prose forms. These cover what detect-secrets' plugins miss
  in answers (a PEM body, ``sk-proj-`` keys, a JWT's signature, ``password: ...``); a policy
  picks families with ``detectors`` (absent: all; ``[]``: none).
* detect-secrets' plugins, with verdicts as llm-guard gets them by scanning the text as a
  file: a line pass, then (only if it found nothing) the eager INI-transformer pass. We run
  the same passes in memory, and before running the plugins and filters on a line we check
  whether any plugin's own detection regex can match it at all; lines no regex can touch
  are skipped, which is where the time went. On a line that stays, only the plugins whose
  regexes match it run, and the filters run once per line rather than once per secret, so
  one long line costs what the same text in lines does (``test_secrets_long_lines``).
  Findings are the plugin's; ``test_secrets_equivalence`` checks them against
  detect-secrets' file scan.

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
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal

import regex as regex_module
from pydantic import Field, field_validator

from sentinel_runtime.guardrails.detectors import FAMILIES, Detection, DetectorSet, detector_set
from sentinel_runtime.guardrails.scanners.base import (
    ScannerParams,
    ScannerType,
    ScanResult,
    hold_from,
    hold_pattern,
    replace_spans,
)
from sentinel_runtime.guardrails.scanners.secrets_gates import (
    FILTER_PREGATES,
    PREGATES,
    EagerTriggers,
    Gate,
    GateLiterals,
    first_known,
    literal_prefixes,
    literal_reach,
)

# No extension: detect-secrets treats the text as FileType.OTHER, as llm-guard's temp file.
VIRTUAL_FILENAME = "assistant-output"
# Shorter findings are prefixes that a plugin captured (GitHubTokenDetector reports "ghp");
# for those the whole regex match is redacted, never the three letters alone.
MIN_SECRET_LENGTH = 8
_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_\-]*")

# Not secrets but addresses; the sensitive scanner owns IPs. BasicAuthDetector flags every
# ``scheme://user:x@host``, placeholders included; the url_credentials family finds the same
# passwords and leaves ``user:password@localhost`` and ``<password>`` alone.
_NOT_DEFAULT = frozenset(
    {
        "KeywordDetector",
        "Base64HighEntropyString",
        "HexHighEntropyString",
        "IPPublicDetector",
        "BasicAuthDetector",
    }
)
# Plugins that find secrets in values the eager INI pass quotes (``password = hunter2``).
# That pass parses the whole answer as one INI file, and runs only when the line pass found
# nothing anywhere in it, so their verdict on a line depends on every other line.
_QUOTING_PLUGINS = frozenset({"KeywordDetector", "Base64HighEntropyString", "HexHighEntropyString"})
# Budget of one hold search, as the regex scanner's per pattern.
HOLD_TIMEOUT_SECONDS = 0.25
# ``re`` flags a plugin regex may carry, as the ``regex`` module spells them.
_FLAGS = {
    re.IGNORECASE: regex_module.IGNORECASE,
    re.MULTILINE: regex_module.MULTILINE,
    re.DOTALL: regex_module.DOTALL,
    re.VERBOSE: regex_module.VERBOSE,
    re.ASCII: regex_module.ASCII,
}
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
    # Ours: the detector families run beside the plugins; absent means all of them, an empty
    # list none (detect-secrets' plugins alone, as llm-guard runs them).
    detectors: list[str] | None = None

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

    @field_validator("detectors")
    @classmethod
    def _known_families(cls, names: list[str] | None) -> list[str] | None:
        unknown = sorted(set(names or ()) - set(FAMILIES))
        if unknown:
            raise ValueError(f"unknown detector families {unknown}; available: {list(FAMILIES)}")
        return names

    def plugin_names(self) -> tuple[str, ...]:
        return tuple(sorted(set(self.plugins))) if self.plugins else default_plugins()

    def family_names(self) -> tuple[str, ...]:
        chosen = FAMILIES if self.detectors is None else set(self.detectors)
        return tuple(name for name in FAMILIES if name in chosen)

    def active_detectors(self) -> dict[str, object]:
        """What this scanner looks for, as ``sentinel policy check`` lists it."""
        return {
            "detectSecretsPlugins": list(self.plugin_names()),
            "families": detector_set(self.family_names()).describe(),
        }


class _NamedStringIO(io.StringIO):
    name = VIRTUAL_FILENAME


@dataclass(frozen=True)
class Finding:
    secret_type: str
    value: str


def _rejects(filter_fn: Callable[..., object], **kwargs: object) -> bool:
    """One detect-secrets filter's verdict; one that cannot take these arguments keeps all."""
    from detect_secrets.util.inject import call_function_with_arguments

    try:
        return bool(call_function_with_arguments(filter_fn, **kwargs))
    except TypeError:
        return False


@dataclass(frozen=True)
class _Filters:
    """detect-secrets' active filters, grouped by the arguments its line pass gives them."""

    line: tuple[Callable[..., object], ...]  # filename, line, context: before any plugin
    secret: tuple[Callable[..., object], ...]  # filename, secret, plugin, line
    context: tuple[Callable[..., object], ...]  # all of the above

    @classmethod
    def current(cls) -> _Filters:
        # Read per scan, as detect-secrets does: its settings are process-wide and mutable.
        from detect_secrets.core.scan import get_filters_with_parameter

        return cls(
            tuple(get_filters_with_parameter("line")),
            tuple(get_filters_with_parameter("secret")),
            tuple(get_filters_with_parameter("context")),
        )


class _LineVerdicts:
    """Filter verdicts on one line's secrets, each filter run once per line where it can.

    detect-secrets runs the ``context`` filters again for every secret, although
    ``is_line_allowlisted`` reads only the line and its neighbours: on a long line with
    several secrets that re-scanned the line per secret. A filter that takes neither the
    secret nor the plugin gives one verdict per line, so it runs once.
    """

    def __init__(self, filters: _Filters, line: str, context: object) -> None:
        self.filters = filters
        self.line = line
        self.context = context
        self._per_line: dict[Callable[..., object], bool] = {}

    def _line_rejects(self, filter_fn: Callable[..., object]) -> bool:
        if filter_fn not in self._per_line:
            literal = FILTER_PREGATES.get(f"{filter_fn.__module__}.{filter_fn.__qualname__}")
            lines = [self.line, *getattr(self.context, "lines", ())]
            self._per_line[filter_fn] = (
                literal is None or any(literal in line for line in lines)
            ) and _rejects(
                filter_fn, filename=VIRTUAL_FILENAME, line=self.line, context=self.context
            )
        return self._per_line[filter_fn]

    def drops(self, plugin: object, secret: str | None) -> bool:
        # detect-secrets asks the line filters before running any plugin on the line; asked
        # only once a plugin found something, they give the same findings for less work.
        if any(self._line_rejects(f) for f in self.filters.line):
            return True
        if any(
            _rejects(f, filename=VIRTUAL_FILENAME, secret=secret, plugin=plugin, line=self.line)
            for f in self.filters.secret
        ):
            return True
        return any(
            self._line_rejects(f)
            if not {"secret", "plugin"} & f.injectable_variables  # type: ignore[attr-defined]
            else _rejects(
                f,
                filename=VIRTUAL_FILENAME,
                secret=secret,
                plugin=plugin,
                line=self.line,
                context=self.context,
            )
            for f in self.filters.context
        )


class _DetectSecretsEngine:
    """One set of detect-secrets plugins, instantiated once, with its default filters."""

    def __init__(self, plugin_names: tuple[str, ...]) -> None:
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
        from detect_secrets.util.inject import call_function_with_arguments

        self._get_code_snippet = get_code_snippet
        self._call = call_function_with_arguments
        self._get_transformed_file = get_transformed_file
        self.plugin_names = plugin_names
        self.plugins = [builtin_plugins()[name]() for name in plugin_names]
        gates: list[Gate] = []
        self.denylists: dict[str, list[re.Pattern[str]]] = {}
        for index, plugin in enumerate(self.plugins):
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
                reach = literal_reach(regex, any_of, folded) if any_of else None
                gates.append(Gate(regex, index, any_of, folded, and_any_of, prefixes, reach))
        self.gates = tuple(gates)
        self.gate_literals = GateLiterals(self.gates)
        names = [type(plugin).__name__ for plugin in self.plugins]
        self.eager_triggers = EagerTriggers.of(self.gates, names)
        self.open_ends = tuple(_open_end(gate.regex) for gate in self.gates)
        self.reads_whole_ini = sorted(_QUOTING_PLUGINS & set(plugin_names))

    def hold(self, text: str) -> int:
        """Where a plugin's match may still be growing or starting, with the rest of its
        token (a short finding's redaction takes it)."""
        return hold_from(self.open_ends, text, HOLD_TIMEOUT_SECONDS)

    def _candidate_lines(self, lines: list[str]) -> dict[int, set[int]]:
        """For each 1-based line some plugin regex can match, the indexes of those plugins.

        A superset is fine. Cheap regexes run once over the joined text; pregated ones run
        only on the lines that hold one of their literals, line by line as detect-secrets
        itself applies them. Kept per plugin: a plugin none of whose regexes matches a line
        finds nothing there, and running all of them over one long line was the cost.
        """
        joined = "\n".join(lines)
        starts: list[int] | None = None  # where each line begins, once a match needs it
        folded_lines: list[str] | None = None
        hits: dict[int, set[int]] = {}
        for gate in (self.gates[index] for index in self.gate_literals.possible(joined)):
            if not gate.any_of:
                for m in gate.regex.finditer(joined):
                    if starts is None:
                        starts = _line_starts(lines)
                    first = bisect.bisect_right(starts, m.start())
                    last = bisect.bisect_right(starts, max(m.start(), m.end() - 1))
                    for number in range(first, last + 1):
                        hits.setdefault(number, set()).add(gate.plugin)
                continue
            if gate.folded and folded_lines is None:
                folded_lines = [line.casefold() for line in lines]
            haystacks = folded_lines if gate.folded else lines
            for number, (line, haystack) in enumerate(zip(lines, haystacks, strict=True), 1):
                if (
                    gate.plugin not in hits.get(number, ())
                    and any(lit in haystack for lit in gate.any_of)
                    and (not gate.and_any_of or any(c in line for c in gate.and_any_of))
                    and first_known(gate.search_near_literals(line, haystack), gate.regex, line)
                ):
                    hits.setdefault(number, set()).add(gate.plugin)
        return hits

    def _scan_lines(self, raw_lines: list[str]) -> list[Finding]:
        lines = [line.rstrip() for line in raw_lines]
        candidates = self._candidate_lines(lines)
        if not candidates:
            return []
        filters = _Filters.current()
        findings: list[Finding] = []
        # Gives what detect_secrets.core.scan's line-based pass gives, restricted to the
        # candidate lines and, on each, to the plugins whose regexes can match it; every
        # other (line, plugin) pair finds nothing.
        for number in sorted(candidates):
            line = lines[number - 1]
            snippet = self._get_code_snippet(lines=raw_lines, line_number=number)
            verdicts = _LineVerdicts(filters, line, snippet)
            for index, plugin in enumerate(self.plugins):
                if index not in candidates[number]:
                    continue
                secrets = self._call(
                    plugin.analyze_line,
                    filename=VIRTUAL_FILENAME,
                    line=line,
                    line_number=number,
                    context=snippet,
                )
                for secret in secrets or ():
                    if not verdicts.drops(plugin, secret.secret_value):
                        findings.append(Finding(secret.type, secret.secret_value or ""))
        return findings

    def _eager_pass_can_find(self, text: str) -> bool:
        """Whether the eager INI pass could find anything the line pass did not.

        That pass writes each setting as ``key = "value"``, keys and values cut from the
        text, so a literal a plugin regex needs is in one of its lines only if it is in the
        text, unless it is made of what the pass adds (`` = "``, and ``\\`` before quotes) or
        interpolation (``%(name)s``) joins values. Most answers hold no such literal, and the
        pass costs an INI parse of the whole answer.
        """
        return self.eager_triggers.can_find(text)

    def _line_passes(self, text: str) -> Iterator[list[str]]:
        """The line lists detect-secrets' file scan would check, in its order."""
        if _opens_with_section(text):
            # Universal newlines, as the file scan's text-mode open(): a lone "\r" ends a line.
            handle = _NamedStringIO(text, newline=None)
            yield self._get_transformed_file(handle) or handle.readlines()
        else:
            yield file_lines(text)
        if not self._eager_pass_can_find(text):
            return
        handle = _NamedStringIO(text, newline=None)
        eager = self._get_transformed_file(handle, use_eager_transformers=True)
        if eager:
            yield eager

    def find(self, text: str) -> list[Finding]:
        for lines in self._line_passes(text):
            findings = self._scan_lines(lines)
            if findings:
                return findings
        return []


def _line_starts(lines: list[str]) -> list[int]:
    """Where each of ``lines`` begins in ``"\\n".join(lines)``."""
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    return starts


def file_lines(text: str) -> list[str]:
    """The lines a text-mode read of ``text`` gives: ``readlines()`` of a universal-newline
    ``StringIO``, as the file scan reads them, without building one for the usual answer.

    Without a "\\r" only "\\n" ends a line there (not str.splitlines()'s other breaks), each
    line keeps its "\\n", and a text ending in one has no empty last line.
    """
    if "\r" in text:
        return _NamedStringIO(text, newline=None).readlines()
    lines = text.split("\n")
    last = lines.pop()
    kept = [line + "\n" for line in lines]
    if last:
        kept.append(last)
    return kept


def _opens_with_section(text: str) -> bool:
    """Whether the first setting line is an INI ``[section]`` header.

    detect-secrets' line pass first parses the text as an INI file without adding a header;
    configparser raises on a first line (not blank, not a ``#``/``;`` comment) that is no
    section header, and the pass falls back to the text's own lines. So without a header the
    parse can be skipped, with the same lines.
    """
    # Lines as the file scan reads them (universal newlines), not str.splitlines()'s.
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        stripped = line.strip()
        if stripped and not stripped.startswith(("#", ";")):
            return stripped.startswith("[")
    return False


def _open_end(pattern: re.Pattern[str]) -> regex_module.Pattern[str]:
    """A plugin regex anchored at the end, its match extended by the token's rest."""
    flags = 0
    for flag, same in _FLAGS.items():
        if pattern.flags & flag:
            flags |= same
    return hold_pattern(pattern.pattern, flags, tail=_TOKEN_TAIL.pattern)


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
    detectors: DetectorSet = field(default_factory=lambda: detector_set(()))

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

    @property
    def whole_text_reason(self) -> str | None:
        if self.engine.reads_whole_ini:
            return (
                f"plugins {', '.join(self.engine.reads_whole_ini)} read detect-secrets' INI "
                "pass, which parses the whole answer"
            )
        return None

    def hold(self, text: str) -> int:
        return min(self.engine.hold(text), self.detectors.hold(text))

    def detections(self, text: str) -> list[Detection]:
        """Every secret found, by the rule that found it (detect-secrets' findings that can
        be located are named ``detect_secrets/<type>``)."""
        found = list(self.detectors.find(text))
        for finding in self.engine.find(text):
            for start, end, _ in self._spans(text, [finding]) or ():
                found.append(Detection(f"detect_secrets/{finding.secret_type}", start, end))
        return found

    def scan(self, text: str) -> ScanResult:
        detections = self.detectors.find(text)
        findings = self.engine.find(text)
        if not findings and not detections:
            return ScanResult.clean(text)
        if not self.rewrite:
            return ScanResult(text, False, 1.0)
        # A finding we cannot locate in the text (the eager pass re-quotes values, a short
        # keyword value is not cut out alone) leaves the whole text unchanged, even when
        # other findings could be redacted, so the engine escalates the hit to a block.
        spans = self._spans(text, findings) if findings else []
        if spans is None:
            return ScanResult(text, False, 1.0)
        # Overlapping spans merge (replace_spans), so a token found by two rules is masked
        # once, over the longer of the two: no part of it stays visible between them.
        spans.extend(
            (d.start, d.end, _mask(text[d.start : d.end], self.redact_mode)) for d in detections
        )
        return ScanResult(replace_spans(text, spans), False, 1.0)


def build(params: SecretsParams, rewrite: bool) -> SecretsScanner:
    return SecretsScanner(
        engine=engine(params.plugin_names()),
        redact_mode=params.redact_mode,
        rewrite=rewrite,
        detectors=detector_set(params.family_names()),
    )


SCANNER = ScannerType(
    name="secrets",
    params=SecretsParams,
    build=build,
    summary=(
        "provider tokens, PEM keys, JWTs, URL and config credentials, key assignments, "
        "and detect-secrets plugins"
    ),
)
