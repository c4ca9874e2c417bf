"""Status conditions as pure functions: one condition type per meaning, True/False/Unknown.

``lastTransitionTime`` moves only when a condition's status changes, so a steady state does
not churn the object. ``Ready`` is derived from the four component conditions.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sentinel_operator import crd

READY = "Ready"
POLICY_READY = "PolicyReady"
STORAGE_READY = "StorageReady"
DEPLOYMENT_READY = "DeploymentReady"
SERVICE_READY = "ServiceReady"
COMPONENTS = (POLICY_READY, STORAGE_READY, DEPLOYMENT_READY, SERVICE_READY)


def now() -> str:
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def condition(
    type_: str, status: bool | None, reason: str, message: str, generation: int | None
) -> dict[str, Any]:
    """One condition in ``metav1.Condition``'s shape (the CRD enforces it: ``crd.Condition``);
    ``reason`` is a CamelCase word, and an over-long message is cut to the schema's limit."""
    made = {
        "type": type_,
        "status": "Unknown" if status is None else ("True" if status else "False"),
        "reason": reason,
        # Never empty: the 1.20 apiserver reads "" in a custom resource's status as null and
        # rejects the write (seen in tests/cluster/test_operator_resilience.py).
        "message": (message or reason)[: crd.CONDITION_MESSAGE_MAX],
    }
    # Absent, not null: the schema has no nullable fields.
    return made if generation is None else made | {"observedGeneration": generation}


def merge(
    existing: list[dict[str, Any]] | None, updates: list[dict[str, Any]], timestamp: str
) -> list[dict[str, Any]]:
    """``existing`` with ``updates`` applied, keeping transition times of unchanged statuses."""
    by_type = {c["type"]: dict(c) for c in existing or []}
    for update in updates:
        previous = by_type.get(update["type"])
        changed = previous is None or previous.get("status") != update["status"]
        by_type[update["type"]] = {
            **update,
            "lastTransitionTime": timestamp if changed else previous.get("lastTransitionTime"),
        }
    order = [READY, *COMPONENTS]
    return sorted(
        by_type.values(),
        key=lambda c: (order.index(c["type"]) if c["type"] in order else 99, c["type"]),
    )


def ready(conditions: list[dict[str, Any]], generation: int | None) -> dict[str, Any]:
    """The Ready condition: True when every component is True; else the first that is not."""
    by_type = {c["type"]: c for c in conditions}
    for type_ in COMPONENTS:
        component = by_type.get(type_)
        if component is None or component["status"] == "Unknown":
            reason = component["reason"] if component else "Pending"
            return condition(READY, None, reason, f"{type_}: waiting", generation)
        if component["status"] != "True":
            return condition(
                READY, False, component["reason"], f"{type_}: {component['message']}", generation
            )
    return condition(
        READY,
        True,
        "AllComponentsReady",
        "policy, storage, deployment and service are ready",
        generation,
    )
