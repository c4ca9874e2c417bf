"""Status conditions as pure functions: one condition type per meaning, True/False/Unknown.

``lastTransitionTime`` moves only when a condition's status changes, so a steady state does
not churn the object. ``Ready`` is derived from the component conditions, and ``changes``
says which condition changes a person should see as a Kubernetes Event.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sentinel_operator import crd

READY = "Ready"
POLICY_READY = "PolicyReady"
SECRETS_READY = "SecretsReady"
STORAGE_READY = "StorageReady"
DEPLOYMENT_READY = "DeploymentReady"
SERVICE_READY = "ServiceReady"
# In the order Ready looks at them: the first one not True gives Ready its reason, so a cause
# (an invalid policy, a missing Secret) comes before its symptom (replicas not ready).
COMPONENTS = (POLICY_READY, SECRETS_READY, STORAGE_READY, DEPLOYMENT_READY, SERVICE_READY)
# Components whose Unknown (or absence) does not hold Ready back: SecretsReady is Unknown when
# the operator may not look at Secrets, and then the Deployment's readiness tells the truth.
ADVISORY = frozenset({SECRETS_READY})
# Reasons that are the ordinary course of a rollout, not news: no Event for them.
QUIET_REASONS = frozenset({"ReplicasNotReady", "RolloutPending", "Pending"})
# Event types (Kubernetes knows these two).
NORMAL = "Normal"
WARNING = "Warning"


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
        if type_ in ADVISORY and (component is None or component["status"] == "Unknown"):
            continue
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
        "policy, secrets, storage, deployment and service are ready",
        generation,
    )


def changes(
    old: list[dict[str, Any]] | None,
    new: list[dict[str, Any]] | None,
    types: tuple[str, ...] = COMPONENTS,
) -> list[tuple[str, str, str]]:
    """(Event type, reason, message) for each condition change a person should see, from the
    conditions before a status write and after it. A condition that stays as it was says
    nothing, so a persisting problem is announced once, not at every pass (and not again after
    an operator restart: the old conditions are the stored ones).

    - a condition becomes False or Unknown, or its reason or message changes while it is:
      a Warning with its reason (rollout progress, ``QUIET_REASONS``, excepted);
    - a condition that was False or Unknown (with a reason worth a Warning) becomes True:
      a Normal Event with its new reason, saying what it recovered from.
    """
    before = {c["type"]: c for c in old or []}
    said: list[tuple[str, str, str]] = []
    for made in new or []:
        type_ = made["type"]
        if type_ not in types:
            continue
        was = before.get(type_)
        key = (made["status"], made["reason"], made["message"])
        if was is not None and (was.get("status"), was.get("reason"), was.get("message")) == key:
            continue
        if made["status"] != "True":
            if made["reason"] not in QUIET_REASONS:
                said.append((WARNING, made["reason"], f"{type_}: {made['message']}"))
        elif (
            was is not None
            and was.get("status") != "True"
            and was.get("reason") not in QUIET_REASONS
        ):
            message = f"{type_} is True again (was {was.get('reason')}): {made['message']}"
            said.append((NORMAL, made["reason"], message))
    return said
