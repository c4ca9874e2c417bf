"""The pipeline's settings, parsed from the policy file's own sections (one parser for all).

``guardrails.policy`` keeps the raw ``introspection``, ``gate``, ``evidence``,
``citations``, ``generation``, ``audit``, ``guard`` and ``judge`` sections; this module turns
them into typed models. Parsing is permissive like the rest of the policy: an invalid section
is reported as a diagnostic and replaced by its defaults, never a reason to reject the file. Results
are cached per policy hash, so a request reads one consistent configuration per policy
version and nothing is re-parsed per request.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from sentinel_runtime.guard import config as guard_config
from sentinel_runtime.guard.config import GuardConfig
from sentinel_runtime.guardrails import policy as policy_mod
from sentinel_runtime.observability import events
from sentinel_runtime.pipeline.cite.citations import CitationConfig
from sentinel_runtime.pipeline.evidence.scoring import EvidenceConfig
from sentinel_runtime.pipeline.gate.planner import GateConfig
from sentinel_runtime.pipeline.signals import harm
from sentinel_runtime.pipeline.understand.examples import JudgeConfig
from sentinel_runtime.pipeline.understand.introspection import IntrospectionConfig

_MODEL_CONFIG = ConfigDict(
    alias_generator=to_camel, populate_by_name=True, extra="ignore", frozen=True
)


class GenerationConfig(BaseModel):
    """The ``generation`` section."""

    model_config = _MODEL_CONFIG

    best_of_n: int = Field(default=1, ge=1, le=8)  # >1 samples N upstream answers
    max_sentences: int = Field(default=3, ge=1, le=10)  # extractive generator


class AuditConfig(BaseModel):
    """The ``audit`` section."""

    model_config = _MODEL_CONFIG

    enabled: bool = True
    include_prompt: bool = False  # the scanned (redacted) prompt, only when set


SECTION_MODELS: dict[str, type[BaseModel]] = {
    "introspection": IntrospectionConfig,
    "gate": GateConfig,
    "evidence": EvidenceConfig,
    "citations": CitationConfig,
    "generation": GenerationConfig,
    "audit": AuditConfig,
    "guard": GuardConfig,
    "judge": JudgeConfig,
}


@dataclass(frozen=True)
class PipelineConfig:
    introspection: IntrospectionConfig
    gate: GateConfig
    evidence: EvidenceConfig
    citations: CitationConfig
    generation: GenerationConfig
    audit: AuditConfig
    guard: GuardConfig = field(default_factory=GuardConfig)
    judge: JudgeConfig = field(default_factory=JudgeConfig)
    diagnostics: tuple[policy_mod.Diagnostic, ...] = ()

    def describe(self) -> dict[str, Any]:
        return {
            name: getattr(self, name).model_dump(mode="json", by_alias=True)
            for name in SECTION_MODELS
        }


def parse_sections(
    sections: Mapping[str, Any], guard_defaults: Mapping[str, Any] | None = None
) -> PipelineConfig:
    """Typed settings from raw sections; invalid ones fall back to defaults, with a diagnostic.
    ``guard_defaults`` are the ``guard`` keys the environment sets (``guard.config``); the
    policy's own keys win over them."""
    parsed: dict[str, BaseModel] = {}
    diagnostics: list[policy_mod.Diagnostic] = []
    for name, model in SECTION_MODELS.items():
        raw = sections.get(name)
        defaults = dict(guard_defaults or {}) if name == "guard" else {}
        if raw is None:
            parsed[name] = _defaults(model, defaults, diagnostics)
            continue
        if not isinstance(raw, Mapping):
            error = f"section is a {type(raw).__name__}, not a mapping"
        else:
            normalised = {policy_mod.snake_case(str(k)): v for k, v in raw.items()}
            try:
                values = (
                    guard_config.merged(normalised, defaults) if name == "guard" else normalised
                )
                parsed[name] = model.model_validate(values)
                if isinstance(parsed[name], GuardConfig):
                    _check_guard(parsed[name])  # type: ignore[arg-type]
                for key in sorted(set(normalised) - set(model.model_fields)):
                    diagnostics.append(
                        policy_mod.Diagnostic(
                            events.POLICY_UNKNOWN_FIELD, {"field": key, "scope": name}
                        )
                    )
                continue
            except ValidationError as exc:
                error = _errors(exc, name)
        diagnostics.append(
            policy_mod.Diagnostic(events.POLICY_INVALID_SECTION, {"section": name, "error": error})
        )
        parsed[name] = _defaults(model, defaults, diagnostics)
    return PipelineConfig(**parsed, diagnostics=tuple(diagnostics))  # type: ignore[arg-type]


def _check_guard(guard: GuardConfig) -> None:
    """What the guard package cannot check alone: a custom family's categories are
    Sentinel's risk categories (``signals.harm.CATEGORIES``)."""
    if guard.custom is None:
        return
    unknown = sorted(set(guard.custom.categories.values()) - set(harm.CATEGORIES))
    if unknown:
        raise ValidationError.from_exception_data(
            "GuardConfig",
            [
                {
                    "type": "value_error",
                    "loc": ("custom", "categories"),
                    "input": unknown,
                    "ctx": {
                        "error": f"{', '.join(unknown)}: not one of Sentinel's risk categories "
                        f"({', '.join(harm.CATEGORIES)})"
                    },
                }
            ],
        )


def _errors(exc: ValidationError, name: str) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or name}: {e['msg']}"
        for e in exc.errors(include_url=False)
    )[:500]


def _defaults(
    model: type[BaseModel], defaults: Mapping[str, Any], diagnostics: list[policy_mod.Diagnostic]
) -> BaseModel:
    """The section's defaults: the environment's where it sets any and they are valid."""
    if defaults:
        try:
            return model.model_validate(defaults)
        except ValidationError as exc:
            diagnostics.append(
                policy_mod.Diagnostic(
                    events.POLICY_INVALID_SECTION,
                    {"section": "guard (environment)", "error": _errors(exc, "guard")},
                )
            )
    return model()


DEFAULT = parse_sections({})


_CACHE_SIZE = 8
_cache: OrderedDict[tuple[str, tuple[tuple[str, Any], ...]], PipelineConfig] = OrderedDict()
_cache_lock = threading.Lock()


def for_policy(
    policy: policy_mod.Policy | None, guard_defaults: Mapping[str, Any] | None = None
) -> PipelineConfig:
    """The pipeline configuration of a policy version (defaults when guardrails are off),
    with the environment's ``guard`` keys under the policy's."""
    defaults = tuple(sorted((guard_defaults or {}).items()))
    if policy is None and not defaults:
        return DEFAULT
    key = (policy.sha256 if policy is not None else "", defaults)
    with _cache_lock:
        cached = _cache.get(key)
        if cached is not None:
            _cache.move_to_end(key)
            return cached
    parsed = parse_sections(policy.sections if policy is not None else {}, dict(defaults))
    with _cache_lock:
        _cache[key] = parsed
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return parsed
