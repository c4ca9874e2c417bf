"""Read an owned Deployment's status into DeploymentReady, readyReplicas and the scale
subresource's current replicas (pure)."""

from __future__ import annotations

from typing import Any

from sentinel_operator import conditions


def deployment_condition(
    deployment: dict[str, Any] | None, generation: int | None
) -> tuple[dict[str, Any], int]:
    if deployment is None:
        return (
            conditions.condition(
                conditions.DEPLOYMENT_READY,
                False,
                "DeploymentMissing",
                "not created yet",
                generation,
            ),
            0,
        )
    spec = deployment.get("spec") or {}
    status = deployment.get("status") or {}
    wanted = int(spec.get("replicas", 1))
    ready = int(status.get("readyReplicas") or 0)
    updated = int(status.get("updatedReplicas") or 0)
    observed = status.get("observedGeneration")
    current = (deployment.get("metadata") or {}).get("generation")
    for c in status.get("conditions") or []:
        if c.get("type") == "Progressing" and c.get("reason") == "ProgressDeadlineExceeded":
            return (
                conditions.condition(
                    conditions.DEPLOYMENT_READY,
                    False,
                    "ProgressDeadlineExceeded",
                    c.get("message", "rollout stalled"),
                    generation,
                ),
                ready,
            )
    if observed is not None and current is not None and observed < current:
        state = (None, "RolloutPending", "the deployment controller has not seen the latest spec")
    elif wanted == 0:
        state = (True, "ScaledToZero", "0 replicas requested")
    elif ready >= wanted and updated >= wanted:
        state = (True, "ReplicasReady", f"{ready}/{wanted} replicas ready")
    else:
        state = (False, "ReplicasNotReady", f"{ready}/{wanted} replicas ready, {updated} updated")
    status_, reason, message = state
    return (
        conditions.condition(conditions.DEPLOYMENT_READY, status_, reason, message, generation),
        ready,
    )


def replicas(deployment: dict[str, Any] | None) -> int:
    """``status.replicas``: the pods the Deployment has, ready or not, as its own scale
    subresource reports them. Not the ready count: an autoscaler reading 0 during a rollout
    would stop scaling (it treats a target at 0 replicas as switched off)."""
    return int(((deployment or {}).get("status") or {}).get("replicas") or 0)
