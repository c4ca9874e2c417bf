"""Parse ``guardrails.yaml`` text into a :class:`Policy`: pure, shared by runtime and operator.

Parsing is permissive, as the output-guardrails contract requires (docs/contracts.md): an
unknown scanner type, an invalid scanner config or an invalid action never rejects the policy;
the offending entry is skipped (or the action defaulted) and a :class:`Diagnostic` names the
contract's log event for it. Only text that is not a YAML mapping at all is unusable
(:class:`PolicyError`).

Apart from :func:`read_policy_file` it performs no I/O, and it emits no logs or metrics:
callers decide what to do with the diagnostics (the runtime logs them, the operator
reports them in status).
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import yaml
from pydantic import ValidationError

from sentinel_runtime.guardrails.scanners import REGISTRY
from sentinel_runtime.guardrails.scanners.base import ScannerParams
from sentinel_runtime.observability import events

Action = Literal["redact", "block"]
FailMode = Literal["open", "closed"]
ACTIONS: tuple[Action, ...] = ("redact", "block")
FAIL_MODES: tuple[FailMode, ...] = ("open", "closed")
DEFAULT_ACTION: Action = "redact"
DEFAULT_FAIL_MODE: FailMode = "closed"
DEFAULT_BLOCK_MESSAGE = "The model output was blocked by output guardrails."
# A ConfigMap cannot hold more than 1 MiB; a larger file is a mistake, not a policy.
MAX_POLICY_BYTES = 1024 * 1024
# Our optional top-level sections (pipeline settings); parsed by their own stages.
PIPELINE_SECTIONS = (
    "introspection",
    "gate",
    "evidence",
    "citations",
    "generation",
    "audit",
    "tools",
    "guard",
    "judge",
)
_TOP_LEVEL_KEYS = {"action", "block_message", "scanners", *PIPELINE_SECTIONS}
_ENTRY_KEYS = {"type", "action", "fail_mode"}
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


class PolicyError(ValueError):
    """The text cannot be used as a policy at all; ``status`` is one of the contract's load
    statuses."""

    def __init__(self, status: Literal["missing", "invalid", "load_failed"], message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Diagnostic:
    """Something a policy author should know: the log event name, level and its fields."""

    event: str
    fields: Mapping[str, Any]
    level: int = logging.WARNING


@dataclass(frozen=True)
class ScannerSpec:
    index: int
    type: str
    action: Action
    fail_mode: FailMode
    params: ScannerParams

    @property
    def escalates_to_block(self) -> bool:
        """A redact hit this scanner cannot rewrite is blocked instead of passed through."""
        return self.action == "redact" and not self.params.can_redact()

    def describe(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "type": self.type,
            "action": self.action,
            "failMode": self.fail_mode,
            "escalatesToBlock": self.escalates_to_block,
            "params": self.params.model_dump(mode="json"),
        }


@dataclass(frozen=True)
class SkippedScanner:
    index: int
    type: str
    reason: str

    def describe(self) -> dict[str, Any]:
        return {"index": self.index, "type": self.type, "reason": self.reason}


@dataclass(frozen=True)
class Policy:
    sha256: str
    default_action: Action = DEFAULT_ACTION
    block_message: str = DEFAULT_BLOCK_MESSAGE
    scanners: tuple[ScannerSpec, ...] = ()
    skipped: tuple[SkippedScanner, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    sections: Mapping[str, Any] = field(default_factory=dict)
    # The file's text, so a section parsed later (the tools rulebase) can point at its lines.
    source: str = field(default="", repr=False, compare=False)


def snake_case(key: str) -> str:
    """``blockMessage`` -> ``block_message``; ``redact-mode`` -> ``redact_mode``."""
    return _CAMEL_BOUNDARY.sub("_", key.strip().replace("-", "_")).lower()


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def decode(data: bytes) -> str:
    if len(data) > MAX_POLICY_BYTES:
        raise PolicyError(
            "load_failed", f"policy is {len(data)} bytes; the limit is {MAX_POLICY_BYTES}"
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise PolicyError("load_failed", f"policy is not valid UTF-8: {exc}") from exc


def read_policy_file(path: str) -> Policy:
    """Read and parse the policy at ``path`` (the one I/O function of this module)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_POLICY_BYTES + 1)
    except FileNotFoundError as exc:
        raise PolicyError("missing", f"policy file {path} does not exist") from exc
    except OSError as exc:
        raise PolicyError("load_failed", f"policy file {path} cannot be read: {exc}") from exc
    return parse_policy(data)


def parse_policy(data: bytes | str) -> Policy:
    """Parse policy file content; raises :class:`PolicyError` only when it is unusable."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    text = decode(raw)
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise PolicyError("load_failed", f"policy is not valid YAML: {_first_line(exc)}") from exc
    if document is None:
        document = {}
    if not isinstance(document, dict):
        raise PolicyError(
            "invalid", f"policy must be a YAML mapping, got {type(document).__name__}"
        )
    return _build_policy(digest(raw), document, text)


def _build_policy(sha256: str, document: dict[Any, Any], source: str = "") -> Policy:
    diagnostics: list[Diagnostic] = []
    top = {snake_case(str(k)): v for k, v in document.items()}
    for key in sorted(set(top) - _TOP_LEVEL_KEYS):
        diagnostics.append(
            Diagnostic(events.POLICY_UNKNOWN_FIELD, {"field": key, "scope": "policy"})
        )

    default_action = _action(top.get("action"), DEFAULT_ACTION, diagnostics)
    block_message = top.get("block_message", DEFAULT_BLOCK_MESSAGE)
    if not isinstance(block_message, str) or not block_message.strip():
        diagnostics.append(
            Diagnostic(
                events.POLICY_INVALID_BLOCK_MESSAGE, {"value_type": type(block_message).__name__}
            )
        )
        block_message = DEFAULT_BLOCK_MESSAGE

    scanners: list[ScannerSpec] = []
    skipped: list[SkippedScanner] = []
    entries = top.get("scanners")
    if entries is not None and not isinstance(entries, list):
        diagnostics.append(
            Diagnostic(events.POLICY_INVALID_SCANNERS, {"value_type": type(entries).__name__})
        )
        entries = None
    for index, entry in enumerate(entries or []):
        outcome = _scanner(index, entry, default_action, diagnostics)
        (scanners if isinstance(outcome, ScannerSpec) else skipped).append(outcome)

    sections = {name: top[name] for name in PIPELINE_SECTIONS if name in top}
    return Policy(
        sha256=sha256,
        default_action=default_action,
        block_message=block_message,
        scanners=tuple(scanners),
        skipped=tuple(skipped),
        diagnostics=tuple(diagnostics),
        sections=sections,
        source=source,
    )


def _action(value: Any, fallback: Action, diagnostics: list[Diagnostic]) -> Action:
    if value is None:
        return fallback
    if isinstance(value, str) and value.strip().lower() in ACTIONS:
        return value.strip().lower()  # type: ignore[return-value]
    diagnostics.append(Diagnostic(events.POLICY_INVALID_ACTION, {"action": str(value)[:64]}))
    return fallback


def _scanner(
    index: int, entry: Any, default_action: Action, diagnostics: list[Diagnostic]
) -> ScannerSpec | SkippedScanner:
    if not isinstance(entry, dict):
        reason = f"entry is a {type(entry).__name__}, not a mapping"
        diagnostics.append(
            Diagnostic(
                events.POLICY_INVALID_SCANNER_CONFIG, {"type": "", "error": reason, "index": index}
            )
        )
        return SkippedScanner(index, "", reason)
    fields = {snake_case(str(k)): v for k, v in entry.items()}
    raw_type = fields.get("type")
    if not isinstance(raw_type, str) or not raw_type.strip():
        reason = "missing 'type'"
        diagnostics.append(
            Diagnostic(
                events.POLICY_INVALID_SCANNER_CONFIG, {"type": "", "error": reason, "index": index}
            )
        )
        return SkippedScanner(index, "", reason)
    scanner_type = snake_case(raw_type)
    if scanner_type not in REGISTRY and raw_type.strip().lower() in REGISTRY:
        scanner_type = raw_type.strip().lower()  # "RegEx" names the regex type too
    definition = REGISTRY.get(scanner_type)
    if definition is None:
        shown = raw_type.strip()[:64]
        diagnostics.append(
            Diagnostic(events.POLICY_UNKNOWN_SCANNER, {"type": shown, "index": index})
        )
        return SkippedScanner(index, shown, f"unknown scanner type {shown!r}")

    action = _action(fields.get("action"), default_action, diagnostics)
    fail_mode = fields.get("fail_mode", DEFAULT_FAIL_MODE)
    if not isinstance(fail_mode, str) or fail_mode.strip().lower() not in FAIL_MODES:
        diagnostics.append(
            Diagnostic(
                events.POLICY_INVALID_FAIL_MODE,
                {"type": scanner_type, "fail_mode": str(fail_mode)[:64]},
            )
        )
        fail_mode = DEFAULT_FAIL_MODE
    fail_mode = fail_mode.strip().lower()

    config = {k: v for k, v in fields.items() if k not in _ENTRY_KEYS}
    for name in definition.params.item_lists:
        if name in config:
            config[name] = _usable_items(config[name], scanner_type, index, name, diagnostics)
    known = set(definition.params.model_fields)
    # A type that forbids unknown fields reports them as its invalid config instead.
    forbids = definition.params.model_config.get("extra") == "forbid"
    for key in sorted(set(config) - known) if not forbids else ():
        diagnostics.append(
            Diagnostic(
                events.POLICY_UNKNOWN_FIELD, {"field": key, "scope": scanner_type, "index": index}
            )
        )
    try:
        params = definition.params.model_validate(config)
    except ValidationError as exc:
        reason = _validation_summary(exc)
        diagnostics.append(
            Diagnostic(
                events.POLICY_INVALID_SCANNER_CONFIG,
                {"type": scanner_type, "error": reason, "index": index},
            )
        )
        return SkippedScanner(index, scanner_type, f"invalid config: {reason}")

    spec = ScannerSpec(index, scanner_type, action, fail_mode, params)  # type: ignore[arg-type]
    if spec.escalates_to_block:
        diagnostics.append(
            Diagnostic(
                events.POLICY_INCOMPATIBLE_SCANNER_ACTION,
                {"type": scanner_type, "action": action, "index": index, "effect": "hits block"},
            )
        )
    return spec


_YAML_KINDS = {bool: "a boolean", int: "a number", float: "a number", dict: "a mapping"}


def _usable_items(
    value: Any, scanner_type: str, index: int, name: str, diagnostics: list[Diagnostic]
) -> Any:
    """The non-empty strings of a list field, each other item dropped with a diagnostic.

    The contract's parser keeps a list's non-empty strings and drops the rest (an empty
    string, a number, null: numbers are not turned into strings), so one bad item costs
    that item, not the scanner. A value that is not a list is left to the params model;
    a list left empty skips the scanner as before.
    """
    if not isinstance(value, list):
        return value
    kept: list[str] = []
    for position, item in enumerate(value):
        if isinstance(item, str) and item:
            kept.append(item)
            continue
        if isinstance(item, str):
            problem = "an empty string"
        elif item is None:
            problem = "null"
        else:
            problem = _YAML_KINDS.get(type(item), f"a {type(item).__name__}")
        diagnostics.append(
            Diagnostic(
                events.POLICY_INVALID_SCANNER_CONFIG,
                {
                    "type": scanner_type,
                    "index": index,
                    "field": name,
                    "item": position,
                    "error": f"{name}[{position}] is {problem}; only non-empty strings are kept",
                    "effect": "item dropped",
                },
            )
        )
    return kept


def _validation_summary(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors(include_url=False):
        location = ".".join(str(p) for p in error["loc"]) or "config"
        parts.append(f"{location}: {error['msg']}")
    return "; ".join(parts)[:500]


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
