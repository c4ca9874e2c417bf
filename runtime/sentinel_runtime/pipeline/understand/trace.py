"""The introspection trace: ``<Reasoning_step>`` blocks, then exactly one ``<Output>``.

Both introspection backends (``introspection`` built in, ``introspection_llm``) produce a
trace in this format and go through the same strict :func:`parse_trace`, so later stages
only ever see a validated :class:`~sentinel_runtime.pipeline.types.Introspection`. The
reasoning steps stay inside ``Introspection.trace`` (audit only); nothing in the parsed
state carries their text.

The ``<Output>`` body is a JSON object, or ``key: value`` lines, with the keys ``intent``,
``risk_category``, ``severity``, ``confidence``, ``retrieval_need``, ``attack_families``
and optionally ``signals`` (reason codes).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal, cast, get_args

from sentinel_runtime.pipeline.signals import harm
from sentinel_runtime.pipeline.types import Intent, Introspection, RetrievalNeed

ATTACK_FAMILIES: tuple[str, ...] = (
    "role_play",
    "forced_prefix",
    "narrative_camouflage",
    "instruction_override",
    "refusal_suppression",
    "obfuscation",
    "harmful_procedural",
)
INTENTS: tuple[str, ...] = get_args(Intent)
RETRIEVAL_NEEDS: tuple[str, ...] = get_args(RetrievalNeed)
REQUIRED_KEYS = (
    "intent",
    "risk_category",
    "severity",
    "confidence",
    "retrieval_need",
    "attack_families",
)
OPTIONAL_KEYS = ("signals",)
MAX_TRACE_CHARS = 20_000
MAX_STEPS = 16
MAX_SIGNALS = 32

STEP_OPEN, STEP_CLOSE = "<Reasoning_step>", "</Reasoning_step>"
OUTPUT_OPEN, OUTPUT_CLOSE = "<Output>", "</Output>"
_TAG = re.compile(r"</?\s*(?:reasoning_step|output)\s*>", re.IGNORECASE)
_SIGNAL = re.compile(r"^[a-z][a-z0-9_]*(?::[a-z0-9_.\-]+)?$")
_KEY_VALUE = re.compile(r"^\s*([A-Za-z_]+)\s*[:=]\s*(.*?)\s*,?\s*$")


class TraceError(ValueError):
    """A trace that breaks the format; ``code`` is a short machine-readable reason."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def format_trace(
    steps: Iterable[str],
    *,
    intent: str,
    risk_category: str,
    severity: float,
    confidence: float,
    retrieval_need: str,
    attack_families: Iterable[str] = (),
    signals: Iterable[str] = (),
) -> str:
    """Render a trace; steps must be non-empty and free of trace tags."""
    blocks = []
    for step in steps:
        text = step.strip()
        if not text or _TAG.search(text):
            raise TraceError("bad_step", "a reasoning step is empty or contains a trace tag")
        blocks.append(f"{STEP_OPEN}{text}{STEP_CLOSE}")
    output: dict[str, Any] = {
        "intent": intent,
        "risk_category": risk_category,
        "severity": round(float(severity), 3),
        "confidence": round(float(confidence), 3),
        "retrieval_need": retrieval_need,
        "attack_families": list(attack_families),
    }
    signal_list = list(signals)
    if signal_list:
        output["signals"] = signal_list
    blocks.append(f"{OUTPUT_OPEN}{json.dumps(output)}{OUTPUT_CLOSE}")
    return "\n".join(blocks)


def parse_trace(
    text: str,
    *,
    backend: Literal["builtin", "llm"] = "builtin",
    fallback_reason: str | None = None,
) -> Introspection:
    """Validate a trace strictly and return the state its ``<Output>`` declares."""
    trace = text.strip()
    if len(trace) > MAX_TRACE_CHARS:
        raise TraceError("too_long", f"trace exceeds {MAX_TRACE_CHARS} characters")
    body = _output_body(trace)
    fields = _fields(body)
    return Introspection(
        intent=cast(Intent, _choice(fields, "intent", INTENTS)),
        risk_category=_choice(fields, "risk_category", harm.CATEGORIES),
        severity=_unit(fields, "severity"),
        confidence=_unit(fields, "confidence"),
        retrieval_need=cast(RetrievalNeed, _choice(fields, "retrieval_need", RETRIEVAL_NEEDS)),
        attack_families=_families(fields.get("attack_families")),
        signals=_signals(fields.get("signals", [])),
        trace=trace,
        backend=backend,
        fallback_reason=fallback_reason,
    )


def _output_body(trace: str) -> str:
    """Walk the blocks: one or more steps, one Output, nothing else (whitespace aside)."""
    position, steps = 0, 0
    while True:
        while position < len(trace) and trace[position].isspace():
            position += 1
        if position >= len(trace):
            raise TraceError("missing_output", "no <Output> block after the reasoning steps")
        if trace.startswith(STEP_OPEN, position):
            content, position = _block(trace, position, STEP_OPEN, STEP_CLOSE)
            if not content.strip():
                raise TraceError("empty_step", "a <Reasoning_step> block is empty")
            steps += 1
            if steps > MAX_STEPS:
                raise TraceError("too_many_steps", f"more than {MAX_STEPS} reasoning steps")
            continue
        if trace.startswith(OUTPUT_OPEN, position):
            if steps == 0:
                raise TraceError("no_reasoning_steps", "<Output> before any <Reasoning_step>")
            content, position = _block(trace, position, OUTPUT_OPEN, OUTPUT_CLOSE)
            rest = trace[position:]
            if rest.strip():
                code = "multiple_outputs" if OUTPUT_OPEN in rest else "text_after_output"
                raise TraceError(code, "the trace must end with its single <Output> block")
            return content
        raise TraceError("unexpected_text", "text outside <Reasoning_step>/<Output> blocks")


def _block(trace: str, position: int, opening: str, closing: str) -> tuple[str, int]:
    start = position + len(opening)
    end = trace.find(closing, start)
    if end < 0:
        raise TraceError("unclosed_block", f"{opening} without {closing}")
    content = trace[start:end]
    if _TAG.search(content):
        raise TraceError("nested_tag", f"a trace tag inside {opening}")
    return content, end + len(closing)


def _fields(body: str) -> dict[str, Any]:
    text = body.strip()
    if not text:
        raise TraceError("empty_output", "the <Output> block is empty")
    if text.startswith(("{", "[")):
        try:
            loaded = json.loads(text)
        except json.JSONDecodeError as error:
            raise TraceError("bad_json", f"<Output> is not valid JSON ({error.msg})") from None
        if not isinstance(loaded, dict):
            raise TraceError("bad_json", "<Output> JSON must be an object")
        fields: dict[str, Any] = loaded
    else:
        fields = _key_values(text)
    unknown = sorted(set(fields) - set(REQUIRED_KEYS) - set(OPTIONAL_KEYS))
    if unknown:
        raise TraceError("unknown_key", f"unexpected keys in <Output>: {', '.join(unknown)}")
    missing = [key for key in REQUIRED_KEYS if key not in fields]
    if missing:
        raise TraceError("missing_key", f"<Output> lacks: {', '.join(missing)}")
    return fields


def _key_values(text: str) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        match = _KEY_VALUE.match(line)
        if match is None:
            raise TraceError("bad_line", "an <Output> line is not 'key: value'")
        key, raw = match.group(1).lower(), match.group(2).strip().strip("\"'")
        if key in fields:
            raise TraceError("duplicate_key", f"'{key}' appears twice in <Output>")
        fields[key] = _scalar_or_list(key, raw)
    return fields


def _scalar_or_list(key: str, raw: str) -> Any:
    if key in {"attack_families", "signals"}:
        if raw.startswith("["):
            try:
                return json.loads(raw)
            except json.JSONDecodeError:
                raise TraceError("bad_list", f"'{key}' is not a valid list") from None
        if raw.lower() in {"", "none", "-"}:
            return []
        return [item.strip().strip("\"'") for item in raw.split(",")]
    if key in {"severity", "confidence"}:
        try:
            return float(raw)
        except ValueError:
            raise TraceError("bad_number", f"'{key}' is not a number") from None
    return raw


def _choice(fields: Mapping[str, Any], key: str, allowed: tuple[str, ...]) -> str:
    value = fields[key]
    if not isinstance(value, str) or value not in allowed:
        raise TraceError(f"bad_{key}", f"'{key}' must be one of {', '.join(allowed)}")
    return value


def _unit(fields: Mapping[str, Any], key: str) -> float:
    value = fields[key]
    # bool is an int subclass: "severity": true is a malformed trace, not 1.0.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TraceError(f"bad_{key}", f"'{key}' must be a number")
    number = float(value)
    if math.isnan(number) or not 0.0 <= number <= 1.0:
        raise TraceError(f"bad_{key}", f"'{key}' must be within 0..1")
    return number


def _families(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise TraceError("bad_attack_families", "'attack_families' must be a list of names")
    unknown = [item for item in value if item not in ATTACK_FAMILIES]
    if unknown:
        raise TraceError(
            "bad_attack_families", f"attack families must be among {', '.join(ATTACK_FAMILIES)}"
        )
    if len(set(value)) != len(value):
        raise TraceError("bad_attack_families", "an attack family is listed twice")
    return tuple(value)


def is_signal(code: object) -> bool:
    """A short lower-case reason code, as the trace's ``signals`` must hold."""
    return isinstance(code, str) and _SIGNAL.match(code) is not None


def _signals(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or len(value) > MAX_SIGNALS:
        raise TraceError("bad_signals", f"'signals' must be a list of at most {MAX_SIGNALS}")
    if not all(is_signal(item) for item in value):
        # Codes only: free text here would carry prompt words past the trace.
        raise TraceError("bad_signals", "'signals' must be short lower-case codes")
    return tuple(value)
