"""The ``guard:`` section of guardrails.yaml, and the defaults the environment gives it.

The operator passes ``RAGEngine.spec.guard`` as ``GUARD_*`` environment variables; a policy
file may also carry its own ``guard:`` section. Keys the policy sets win over the
environment, so a platform team can point every engine at its guard server and one policy
can still turn the guard off or tune its band. The access token only ever comes from the
environment (``GUARD_ACCESS_SECRET``): a ``guard.accessSecret`` key in a ConfigMap is ignored
and reported as an unknown field.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

# The families with an adapter (``guard.families``), and "custom": one the policy defines.
# The operator's CRD takes its enum from here.
Family = Literal[
    "llama-guard-3",
    "llama-guard-4",
    "shieldgemma",
    "granite-guardian",
    "qwen3guard",
    "wildguard",
    "custom",
]
FAMILY_NAMES: tuple[str, ...] = get_args(Family)
Mode = Literal["always", "uncertain", "off"]
OnError = Literal["builtin", "refuse", "allow"]

_MODEL_CONFIG = ConfigDict(
    alias_generator=to_camel, populate_by_name=True, extra="ignore", frozen=True
)


class Band(BaseModel):
    """The built-in judge's uncertain band: severities in ``[low, high)`` go to the guard
    in ``uncertain`` mode; below ``low`` the built-in judge's "safe" stands, from ``high``
    its "unsafe" does."""

    model_config = _MODEL_CONFIG

    low: float = Field(default=0.15, ge=0.0, le=1.0)
    high: float = Field(default=0.85, ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _ordered(self) -> Band:
        if self.low > self.high:
            raise ValueError(f"band.low ({self.low}) is above band.high ({self.high})")
        return self

    def contains(self, severity: float) -> bool:
        return self.low <= severity < self.high


class CustomFamily(BaseModel):
    """A guard model no release knows yet: how to ask it and how to read its reply."""

    model_config = _MODEL_CONFIG

    # Sent as one user message; {prompt} is the user's turn, {answer} the assistant's (a
    # template without {answer} judges an answer in {prompt}'s place).
    template: str = Field(min_length=1)
    # A match in the reply means unsafe; a match of safePattern means safe; neither is an
    # unreadable reply (guard.onError decides).
    unsafe_pattern: str = Field(min_length=1)
    safe_pattern: str | None = None
    # One group capturing the category list ("S1, S10"), when the model names categories.
    categories_pattern: str | None = None
    # The family's category names mapped onto Sentinel's risk categories.
    categories: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _patterns_compile(self) -> CustomFamily:
        for name in ("unsafe_pattern", "safe_pattern", "categories_pattern"):
            pattern = getattr(self, name)
            if pattern is None:
                continue
            try:
                re.compile(pattern)
            except re.error as exc:
                message = f"custom.{to_camel(name)} is not a regular expression: {exc}"
                raise ValueError(message) from exc
        if "{prompt}" not in self.template:
            raise ValueError("custom.template must contain {prompt}")
        return self


class GuardConfig(BaseModel):
    """The ``guard`` section: which guard model judges, when, and what a failure means."""

    model_config = _MODEL_CONFIG

    # OpenAI-compatible base URL of the server that serves the guard model.
    url: str = ""
    model: str = ""  # sent as the request's model; "" lets the server choose
    family: Family = "llama-guard-3"
    # always: every request, beside the built-in judge; uncertain: only requests in the
    # built-in judge's uncertain band; off: never.
    mode: Mode = "off"
    band: Band = Field(default_factory=Band)
    # Judge each final answer too (a streamed answer is held whole until judged).
    answers: bool = False
    on_error: OnError = "builtin"
    timeout_seconds: float = Field(default=5.0, gt=0.0, le=120.0)
    # A refusal by the built-in judge stands even when the guard calls the request safe.
    builtin_floor: bool = True
    # Consecutive failures that open the circuit, and how long it stays open.
    failure_threshold: int = Field(default=3, ge=1, le=100)
    open_seconds: float = Field(default=30.0, gt=0.0, le=3600.0)
    custom: CustomFamily | None = None
    # Body fields added to every guard request, over the family's own: a server's decoding
    # controls (vLLM's guided_choice, llama.cpp's grammar) or a chat template's switches.
    extra_body: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _custom_needs_its_section(self) -> GuardConfig:
        if self.family == "custom" and self.custom is None:
            raise ValueError("family custom needs a custom section (template, unsafePattern)")
        if self.url and not re.match(r"^https?://[^/\s]+", self.url):
            raise ValueError(f"url must be an http(s) URL, not {self.url!r}")
        return self

    @property
    def judges_answers(self) -> bool:
        return bool(self.url) and self.answers

    @property
    def key(self) -> tuple[str, str, str]:
        """Calls to the same server, model and family share one circuit breaker."""
        return (self.url, self.model, self.family)


# Environment variable -> key of the section (the operator writes these from spec.guard).
ENVIRONMENT = {
    "GUARD_URL": "url",
    "GUARD_MODEL": "model",
    "GUARD_FAMILY": "family",
    "GUARD_MODE": "mode",
    "GUARD_ANSWERS": "answers",
    "GUARD_ON_ERROR": "on_error",
    "GUARD_TIMEOUT_SECONDS": "timeout_seconds",
}


def environment_defaults(environ: Mapping[str, str]) -> dict[str, Any]:
    """The section's keys the environment sets (empty values are unset)."""
    found: dict[str, Any] = {}
    for variable, key in ENVIRONMENT.items():
        value = environ.get(variable, "").strip()
        if value:
            found[key] = value
    # A URL given without a mode means the guard is wanted: on the uncertain band.
    if "url" in found and "mode" not in found:
        found["mode"] = "uncertain"
    return found


def merged(section: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """The policy's raw ``guard`` section over the environment's defaults (snake_case keys).
    A policy that names a ``url`` without a ``mode`` wants the guard on its uncertain band."""
    combined = {**defaults, **section}
    if "url" in section and "mode" not in section and "mode" not in defaults:
        combined["mode"] = "uncertain"
    return combined
