"""Judge a policy ConfigMap with the runtime's own parser: status.policy and PolicyReady."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sentinel_operator import conditions
from sentinel_runtime.guardrails import policy as runtime_policy

POLICY_KEY = "guardrails.yaml"


@dataclass(frozen=True)
class PolicyJudgement:
    status: dict[str, Any]  # status.policy
    condition: dict[str, Any]  # PolicyReady


def judge(
    config_map_name: str | None,
    data: dict[str, str] | None,
    *,
    found: bool,
    generation: int | None = None,
) -> PolicyJudgement:
    """``found`` says whether the ConfigMap exists; ``data`` is its ``data`` field."""
    if config_map_name is None:
        return PolicyJudgement(
            {},
            conditions.condition(
                conditions.POLICY_READY,
                True,
                "GuardrailsDisabled",
                "guardrails are off",
                generation,
            ),
        )

    def failed(reason: str, message: str) -> PolicyJudgement:
        return PolicyJudgement(
            {"configMap": config_map_name},
            conditions.condition(conditions.POLICY_READY, False, reason, message, generation),
        )

    if not found:
        return failed("ConfigMapNotFound", f"ConfigMap {config_map_name} does not exist")
    text = (data or {}).get(POLICY_KEY)
    if text is None:
        return failed("PolicyKeyMissing", f"ConfigMap {config_map_name} has no key {POLICY_KEY}")
    try:
        parsed = runtime_policy.parse_policy(text)
    except runtime_policy.PolicyError as exc:
        return failed("PolicyInvalid", f"{POLICY_KEY} is unusable ({exc.status}): {exc}")
    status = {
        "configMap": config_map_name,
        "sha256": parsed.sha256,
        "activeScanners": len(parsed.scanners),
        "skipped": [s.describe() for s in parsed.skipped],
    }
    if not parsed.scanners:
        reason, message = "NoActiveScanners", "no scanner in the policy is usable"
        if parsed.skipped:
            message += ": " + "; ".join(f"[{s.index}] {s.reason}" for s in parsed.skipped)[:800]
        return PolicyJudgement(
            status,
            conditions.condition(conditions.POLICY_READY, False, reason, message, generation),
        )
    message = f"{len(parsed.scanners)} scanners active"
    if parsed.skipped:
        message += f", {len(parsed.skipped)} skipped"
    return PolicyJudgement(
        status,
        conditions.condition(conditions.POLICY_READY, True, "PolicyValid", message, generation),
    )
