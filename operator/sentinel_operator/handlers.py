"""kopf handlers: thin wiring from Kubernetes events to ``reconcile`` (create, update,
resume and a resync timer share one function), plus the watches that keep status honest:
owned Deployments for readiness, and the policy ConfigMaps engines use for policy edits
(``sentinel_policy_users`` indexes them; other ConfigMaps never reach a handler). No deletion
handler: owned objects go by garbage collection and the copied policy ConfigMap stays, so no
finalizer."""

from __future__ import annotations

import logging
from typing import Any

import kopf
from pydantic import ValidationError

from sentinel_operator import crd, k8s, manifests, metrics, reconcile
from sentinel_operator.config import OperatorSettings

SETTINGS = OperatorSettings()
RESOURCE = (crd.GROUP, crd.VERSION, crd.PLURAL)
OWNED = {"app.kubernetes.io/managed-by": "sentinel-operator"}


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    # Keep kopf's bookkeeping in annotations: the status schema has no field for it.
    prefix = crd.GROUP
    settings.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix=prefix)
    settings.persistence.diffbase_storage = kopf.AnnotationsDiffBaseStorage(prefix=prefix)
    settings.posting.level = logging.WARNING
    settings.watching.server_timeout = 270
    SETTINGS.operator_namespace()  # fail at start, not at the first engine


def _post(body: dict[str, Any], notices: list[reconcile.Notice]) -> None:
    for notice in notices:
        kopf.event(body, type=notice.type, reason=notice.reason, message=notice.message)


@kopf.index(*RESOURCE)
def sentinel_engine_readiness(name: str, namespace: str, status: kopf.Status, **_: Any) -> dict:
    ready = next(
        (c.get("status") for c in status.get("conditions") or [] if c.get("type") == "Ready"),
        "Unknown",
    )
    return {ready: (namespace, name)}


@kopf.on.resume(*RESOURCE)
@kopf.on.create(*RESOURCE)
@kopf.on.update(*RESOURCE, field="spec")
@kopf.timer(*RESOURCE, interval=SETTINGS.RESYNC_SECONDS, idle=SETTINGS.RESYNC_SECONDS)
def sentinel_ragengine_reconcile(
    body: kopf.Body, sentinel_engine_readiness: kopf.Index, **_: Any
) -> None:
    notices = reconcile.reconcile(dict(body), SETTINGS)
    _post(dict(body), notices)
    for ready in ("True", "False", "Unknown"):
        metrics.ENGINES.labels(ready).set(len(sentinel_engine_readiness.get(ready, [])))


@kopf.on.event("apps", "v1", "deployments", labels=OWNED)
def sentinel_deployment_watch(event: dict[str, Any], body: kopf.Body, **_: Any) -> None:
    owner = _owner(body)
    if owner is None:
        return
    namespace = body["metadata"]["namespace"]
    if event.get("type") == "DELETED":
        engine = k8s.read_engine(namespace, owner)
        if engine is not None:  # deleted by hand: put it back
            reconcile.reconcile(engine, SETTINGS)
        return
    reconcile.refresh_rollout(namespace, owner, dict(body))


@kopf.index(*RESOURCE)
def sentinel_policy_users(
    name: str, namespace: str, spec: kopf.Spec, **_: Any
) -> dict[tuple[str, str], str]:
    """(namespace, ConfigMap) -> the engines whose policy it is: the referenced ConfigMap or
    the namespace's copy of the template. Kept by kopf from the RAGEngine watch."""
    try:
        parsed = crd.RAGEngineSpec.model_validate(dict(spec))
    except ValidationError:
        return {}  # an invalid engine uses no policy until it is fixed
    policy = manifests.Engine(name, namespace, "", parsed, "").policy_config_map
    return {} if policy is None else {(namespace, policy): name}


def _used_policy(name: str, namespace: str, sentinel_policy_users: kopf.Index, **_: Any) -> bool:
    return (namespace, name) in sentinel_policy_users


# Every ConfigMap in the watched namespaces still streams in (no label can single out a
# user's referenced ConfigMap), but only those an engine uses reach the handler.
@kopf.on.event("", "v1", "configmaps", when=_used_policy)
def sentinel_policy_watch(
    name: str, namespace: str, sentinel_policy_users: kopf.Index, **_: Any
) -> None:
    metrics.POLICY_EVENTS.inc()
    for engine_name in sentinel_policy_users.get((namespace, name), []):
        engine = k8s.read_engine(namespace, engine_name)
        if engine is None or (engine.get("status") or {}).get("observedGeneration") is None:
            continue  # gone, or not reconciled yet: its first reconcile judges the policy anyway
        reconcile.refresh_policy(namespace, engine_name, engine, SETTINGS)


def _owner(body: kopf.Body) -> str | None:
    for reference in body["metadata"].get("ownerReferences") or []:
        if reference.get("kind") == crd.KIND and reference.get("controller"):
            return str(reference["name"])
    return None
