"""A policy version: everything one ``guardrails.yaml`` configures, read once per request.

The guardrails state swaps an ``Activation`` in one assignment when a policy (re)loads: the
engine and the tools rulebase in force with it; the pipeline's settings are derived from the
engine's policy (parsed once per policy hash). A request takes one :class:`PolicyVersion` at
its start and uses it to the end, so a reload in the middle of a turn or a stream never mixes
the scanners of one version with the pipeline settings or the rules of another
(tests/api/test_streaming_chat.py: the policy swapped mid-stream).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sentinel_runtime.answer.errors import PolicyUnavailableError
from sentinel_runtime.answer.services import Services
from sentinel_runtime.governance.service import RulebaseSnapshot
from sentinel_runtime.guardrails.engine import GuardrailsEngine
from sentinel_runtime.pipeline import config as pipeline_config


@dataclass(frozen=True)
class PolicyVersion:
    engine: GuardrailsEngine | None  # None: guardrails are off
    config: pipeline_config.PipelineConfig
    # The tools rulebase activated with the engine (and the last load's error): tool calls
    # are judged by this version's rules, whatever a reload does meanwhile.
    rules: RulebaseSnapshot = field(default_factory=lambda: RulebaseSnapshot(None, None))

    @classmethod
    def of(
        cls, engine: GuardrailsEngine | None, guard_defaults: Mapping[str, Any] | None = None
    ) -> PolicyVersion:
        return cls(
            engine, pipeline_config.for_policy(engine.policy if engine else None, guard_defaults)
        )


def active(services: Services) -> PolicyVersion:
    """The version in force now; :class:`PolicyUnavailableError` rather than an unscanned
    answer when guardrails are on and no policy has loaded."""
    state = services.guardrails
    activation = state.activation  # read once: the swap is one assignment
    engine = activation.engine if activation is not None else None
    if state.enabled and engine is None:
        problem = state.error.message if state.error else "no policy loaded"
        raise PolicyUnavailableError(
            f"Output guardrails are enabled but no policy is active ({problem}); "
            "refusing to return unscanned output."
        )
    companion = activation.companion if activation is not None else None
    # Guardrails off: no policy is activated, and the live (empty) governance state applies.
    rules = companion if isinstance(companion, RulebaseSnapshot) else services.governance.snapshot()
    config = pipeline_config.for_policy(engine.policy if engine else None, services.guard_defaults)
    return PolicyVersion(engine, config, rules)


def describe(services: Services) -> dict[str, Any]:
    """``GET /v1/guardrails/policy``: the active policy, its scanners and pipeline settings,
    or why there is none; and the hot reloads (``reload``: the last attempt and the last
    failure, whose file is not the one serving)."""
    state = services.guardrails
    engine = state.engine
    if engine is None:
        return {
            "enabled": state.enabled,
            "active": False,
            "path": state.path if state.enabled else "",
            "error": {"status": state.error.status, "message": state.error.message}
            if state.error
            else None,
            "reload": state.describe_reloads(),
        }
    version = PolicyVersion.of(engine, services.guard_defaults)
    policy = engine.policy
    return {
        "enabled": True,
        "active": True,
        "path": state.path,
        "sha256": policy.sha256,
        "loadedAt": engine.loaded_at,
        "reload": state.describe_reloads(),
        "action": policy.default_action,
        "blockMessage": policy.block_message,
        "scanners": [scanner.spec.describe() for scanner in engine.scanners],
        "skipped": [skipped.describe() for skipped in engine.skipped],
        "diagnostics": [
            {"event": d.event, **d.fields}
            for d in (*policy.diagnostics, *version.config.diagnostics)
        ],
        "pipeline": version.config.describe(),  # the sections in force, defaults included
        # The tools section's rulebase: the active one's policy hash, a rejected one's problems.
        "governance": services.governance.status(),
    }
