"""One RAGEngine's reconcile: policy ConfigMap, Secrets it references, Deployment, Service,
status. Never waits for a rollout; readiness arrives later through the Deployment watch
(``handlers``), and so does drift: the watches of the owned Deployment and Services call the
``repair_*`` functions here, which put back what was changed or deleted by hand.

Every status write goes through ``_write``, which turns the condition changes it makes into
the Events a person should see (``conditions.changes``): a problem is announced once, when it
appears or changes, and its end once, when it is gone.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from kubernetes.client.rest import ApiException
from pydantic import ValidationError

from sentinel_operator import (
    conditions,
    crd,
    k8s,
    manifests,
    metrics,
    policy_status,
    rollout,
    secrets_status,
    storage_status,
)
from sentinel_operator.config import OperatorSettings
from sentinel_runtime.observability import tracing

LOG = logging.getLogger(__name__)

# Reasons of Events for what the operator did (condition reasons live with their conditions).
POLICY_COPIED = "PolicyCopied"
SERVICE_DELETED = "ServiceDeleted"
DRIFT_REPAIRED = "DriftRepaired"
# Condition reasons written here.
TEMPLATE_NOT_FOUND = "TemplateNotFound"
INVALID_SPEC = "InvalidSpec"
SERVICE_APPLIED = "ServiceApplied"
SERVICE_MISSING = "ServiceMissing"
SERVICE_DRIFTED = "ServiceDrifted"
DEPLOYMENT_MISSING = "DeploymentMissing"  # also rollout's, for a Deployment not there
DEPLOYMENT_DRIFTED = "DeploymentDrifted"
# An engine whose status shows one of these waits on something no watch reports: a Secret (the
# operator may get Secrets, never list or watch them), the policy template in the operator's
# namespace (maybe outside the watched ones), or a repair that failed. The periodic re-check
# (``handlers``) reconciles such engines every RESYNC_SECONDS; the others need no timer.
RECHECK_REASONS = frozenset(
    {
        secrets_status.MISSING,
        secrets_status.KEY_MISSING,
        secrets_status.UNCHECKED,
        TEMPLATE_NOT_FOUND,
        SERVICE_MISSING,
        SERVICE_DRIFTED,
        DEPLOYMENT_MISSING,
        DEPLOYMENT_DRIFTED,
    }
)


@dataclass(frozen=True)
class Notice:
    """Something a user must see as a Kubernetes Event on the engine."""

    type: str  # Normal | Warning
    reason: str
    message: str


def _write(
    namespace: str,
    name: str,
    build: Callable[[dict[str, Any]], dict[str, Any]],
    types: tuple[str, ...] = conditions.COMPONENTS,
) -> list[Notice]:
    """Write the status ``build(old_status)`` makes; the Events its condition changes call for.

    Judged on the status the write replaced (conflicts are retried on fresh data), so two
    writers never announce the same change twice."""
    said: list[Notice] = []

    def mutate(old: dict[str, Any]) -> dict[str, Any]:
        new = build(old)
        changes = conditions.changes(old.get("conditions"), new.get("conditions"), types)
        said[:] = [Notice(*change) for change in changes]
        return new

    k8s.update_status(namespace, name, mutate)
    return said


def _with_conditions(old: dict[str, Any], updates: list[dict[str, Any]]) -> dict[str, Any]:
    """``old`` status with ``updates`` merged in and Ready derived again."""
    generation = old.get("observedGeneration")
    merged = conditions.merge(old.get("conditions"), updates, conditions.now())
    merged = conditions.merge(merged, [conditions.ready(merged, generation)], conditions.now())
    return {**old, "conditions": merged}


def build_engine(body: dict[str, Any], settings: OperatorSettings) -> manifests.Engine | None:
    """The engine the builders work from, or None when its spec cannot be built (reconcile
    reports why; the watches leave such an engine alone)."""
    meta = body["metadata"]
    try:
        spec = crd.RAGEngineSpec.model_validate(body.get("spec") or {})
    except ValidationError:
        return None
    if spec.query_service_name is None and manifests.name_problem(meta["name"]):
        return None
    return manifests.Engine(
        meta["name"],
        meta["namespace"],
        meta["uid"],
        spec,
        settings.RUNTIME_IMAGE,
        settings.runtime_tracing_env(),
    )


def _policy(
    engine: manifests.Engine, settings: OperatorSettings, notices: list[Notice]
) -> policy_status.PolicyJudgement:
    """The policy's judgement, as a span (docs/tracing.md)."""
    attributes = {
        "k8s.namespace.name": engine.namespace,
        "sentinel.ragengine.name": engine.name,
        "sentinel.policy.config_map": engine.policy_config_map or "",
    }
    with tracing.span("sentinel.policy.validate", attributes) as span:
        judgement = _judge_policy(engine, settings, notices)
        status = judgement.status or {}
        span.set(
            **{
                "sentinel.policy.ready": judgement.condition.get("status", ""),
                "sentinel.policy.reason": judgement.condition.get("reason", ""),
                "sentinel.policy.hash": status.get("sha256"),
                "sentinel.policy.active_scanners": status.get("activeScanners"),
                "sentinel.policy.skipped": len(status.get("skipped") or []),
            }
        )
        return judgement


def _judge_policy(
    engine: manifests.Engine, settings: OperatorSettings, notices: list[Notice]
) -> policy_status.PolicyJudgement:
    # Judged without a generation: the callers stamp the one they write status for.
    name = engine.policy_config_map
    if name is None:
        return policy_status.judge(None, None, found=False)
    config_map = k8s.read_config_map(engine.namespace, name)
    if config_map is None and name == manifests.POLICY_TEMPLATE and not _ref(engine):
        if not _copy_policy_template(engine, settings, notices):
            judgement = policy_status.judge(name, None, found=False)
            message = (
                f"policy template {manifests.POLICY_TEMPLATE} not found in namespace "
                f"{settings.operator_namespace()}"
            )
            return policy_status.PolicyJudgement(
                judgement.status,
                {**judgement.condition, "reason": TEMPLATE_NOT_FOUND, "message": message},
            )
        config_map = k8s.read_config_map(engine.namespace, name)
    return policy_status.judge(
        name,
        (config_map or {}).get("data"),
        found=config_map is not None,
    )


def _copy_policy_template(
    engine: manifests.Engine, settings: OperatorSettings, notices: list[Notice]
) -> bool:
    """Copy the operator's policy template into the engine's namespace when the engine uses
    it and no copy is there yet; False when the template itself is missing."""
    if engine.policy_config_map != manifests.POLICY_TEMPLATE or _ref(engine):
        return True
    if k8s.read_config_map(engine.namespace, manifests.POLICY_TEMPLATE) is not None:
        return True
    source_ns = settings.operator_namespace()
    template = k8s.read_config_map(source_ns, manifests.POLICY_TEMPLATE)
    if template is None:
        return False
    if k8s.create_config_map(
        engine.namespace,
        manifests.POLICY_TEMPLATE,
        dict(template.get("data") or {}),
        {"app.kubernetes.io/managed-by": "sentinel-operator"},
    ):
        notices.append(
            Notice(
                conditions.NORMAL,
                POLICY_COPIED,
                f"copied {manifests.POLICY_TEMPLATE} from namespace {source_ns}",
            )
        )
    return True


def _ref(engine: manifests.Engine) -> bool:
    guardrails = engine.spec.guardrails
    return bool(guardrails and guardrails.config_map_ref)


def _spec_errors(exc: ValidationError) -> str:
    return "; ".join(
        f"spec.{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
        for e in exc.errors(include_url=False)
    )[:1000]


def _mark_invalid(namespace: str, name: str, generation: Any, message: str) -> list[Notice]:
    """An engine that cannot be built is reported in status, not retried: only an edit helps."""
    metrics.RECONCILES.labels("invalid_spec").inc()
    invalid = conditions.condition(conditions.READY, False, INVALID_SPEC, message, generation)

    def mark_invalid(old: dict[str, Any]) -> dict[str, Any]:
        merged = conditions.merge(old.get("conditions"), [invalid], conditions.now())
        return {**old, "observedGeneration": generation, "conditions": merged}

    return _write(namespace, name, mark_invalid, (conditions.READY,))


def _services_applied(engine: manifests.Engine) -> str:
    """ServiceReady's message once the engine's Services are applied (by reconcile or a repair)."""
    names = ", ".join(engine.service_names)
    return f"{engine.spec.service_type} service {names} on port {manifests.RUNTIME_PORT}"


def _deleting(body: dict[str, Any]) -> bool:
    return bool(body["metadata"].get("deletionTimestamp"))


def _span_attributes(body: dict[str, Any]) -> dict[str, Any]:
    meta = body["metadata"]
    return {
        "k8s.namespace.name": meta["namespace"],
        "sentinel.ragengine.name": meta["name"],
        "sentinel.ragengine.generation": meta.get("generation") or 0,
    }


def reconcile(
    body: dict[str, Any], settings: OperatorSettings, *, trigger: str = "repair"
) -> list[Notice]:
    """Apply everything a RAGEngine asks for and record what happened in its status, as one
    span (``trigger``: kopf's reason, create, update or resume; recheck; repair)."""
    attributes = {**_span_attributes(body), "sentinel.reconcile.trigger": trigger}
    with tracing.span("sentinel.reconcile RAGEngine", attributes) as span:
        try:
            notices = _reconcile(body, settings)
        except Exception as exc:
            span.error(type(exc).__name__)
            raise
        span.set(**{"sentinel.notices": [n.reason for n in notices]})
        return notices


def _reconcile(body: dict[str, Any], settings: OperatorSettings) -> list[Notice]:
    started = time.perf_counter()
    meta = body["metadata"]
    name, namespace, generation = meta["name"], meta["namespace"], meta.get("generation")
    if _deleting(body):
        return []  # its Deployment and Services go with it: nothing to put back
    notices: list[Notice] = []
    try:
        spec = crd.RAGEngineSpec.model_validate(body.get("spec") or {})
    except ValidationError as exc:
        return _mark_invalid(namespace, name, generation, _spec_errors(exc))
    # Without spec.queryServiceName the Service takes the engine's name, which must fit it.
    if spec.query_service_name is None and (problem := manifests.name_problem(name)):
        return _mark_invalid(namespace, name, generation, problem)
    engine = manifests.Engine(
        name, namespace, meta["uid"], spec, settings.RUNTIME_IMAGE, settings.runtime_tracing_env()
    )
    try:
        secrets_condition = secrets_status.secrets_condition(
            spec, namespace, k8s.secret_seen, generation
        )
        # The policy copy before the Deployment that mounts it, so no pod is ever scheduled
        # without its ConfigMap; the policy is judged later, at the status write.
        _copy_policy_template(engine, settings, notices)
        k8s.apply(manifests.deployment(engine))
        for service in manifests.services(engine):
            k8s.apply(service)
        # A renamed query or index Service: the old one goes (its owner still lives).
        owned = k8s.list_services(namespace, manifests.selector_text(engine))
        for stale in manifests.stale_services(engine, owned):
            k8s.delete_service(namespace, stale)
            notices.append(
                Notice(conditions.NORMAL, SERVICE_DELETED, f"deleted stale Service {stale}")
            )
    except Exception:
        metrics.RECONCILES.labels("error").inc()
        raise
    storage_condition = storage_status.storage_condition(engine, generation)
    service_condition = conditions.condition(
        conditions.SERVICE_READY, True, SERVICE_APPLIED, _services_applied(engine), generation
    )

    def build(old: dict[str, Any]) -> dict[str, Any]:
        # Judged here, after the read this write is conditional on (``_write``): see
        # ``refresh_policy`` for why a judgement made before it could undo a newer one.
        judgement = _policy(engine, settings, notices)
        policy_condition = {**judgement.condition, "observedGeneration": generation}
        # The Deployment too, for the same reason: read before the engine, a scale-up's
        # status.replicas that the Deployment watch wrote meanwhile (refresh_rollout) was
        # overwritten with the older count, and no later event corrected it
        # (tests/cluster/test_operator_scale.py waited 90 s in vain under load).
        deployment = k8s.read_deployment(namespace, name)
        deployment_condition, ready_replicas = rollout.deployment_condition(deployment, generation)
        merged = conditions.merge(
            old.get("conditions"),
            [
                policy_condition,
                secrets_condition,
                storage_condition,
                deployment_condition,
                service_condition,
            ],
            conditions.now(),
        )
        merged = conditions.merge(merged, [conditions.ready(merged, generation)], conditions.now())
        status = {
            "observedGeneration": generation,
            "conditions": merged,
            "endpoint": engine.endpoint,
            **({"indexEndpoint": engine.index_endpoint} if engine.index_endpoint else {}),
            "replicas": rollout.replicas(deployment),
            "selector": manifests.selector_text(engine),
            "readyReplicas": ready_replicas,
        }
        # Absent, not null: the status schema has no nullable fields.
        return status | ({"policy": judgement.status} if judgement.status else {})

    try:
        notices += _write(namespace, name, build)
    except Exception:
        metrics.RECONCILES.labels("error").inc()
        raise
    metrics.RECONCILES.labels("success").inc()
    metrics.RECONCILE_DURATION.observe(time.perf_counter() - started)
    return notices


def refresh_rollout(namespace: str, name: str, deployment: dict[str, Any] | None) -> list[Notice]:
    """Deployment watch: recompute DeploymentReady and Ready from the Deployment's status."""

    def build(old: dict[str, Any]) -> dict[str, Any]:
        generation = old.get("observedGeneration")
        if generation is None:
            return old  # not reconciled yet: its first reconcile reads the Deployment itself
        deployment_condition, ready_replicas = rollout.deployment_condition(deployment, generation)
        return {
            **_with_conditions(old, [deployment_condition]),
            "replicas": rollout.replicas(deployment),
            "readyReplicas": ready_replicas,
        }

    return _write(namespace, name, build)


def refresh_policy(
    namespace: str, name: str, engine_body: dict[str, Any], settings: OperatorSettings
) -> list[Notice]:
    """ConfigMap watch: re-judge the engine's policy (copying the template again if the
    namespace's copy was deleted) and update PolicyReady and Ready."""
    engine = build_engine(engine_body, settings)
    if engine is None:
        return []
    notices: list[Notice] = []

    def build(old: dict[str, Any]) -> dict[str, Any]:
        # The ConfigMap is read after the engine this write is conditional on: a status
        # written from an older read of the ConfigMap would then have been read before
        # this writer's, so its write conflicts and is judged again (``k8s.update_status``
        # retries with both read afresh). Judged before that read, a reconcile that started
        # before an edit could write the old policy's PolicyReady over the edit's, and
        # nothing would ever look again.
        judgement = _policy(engine, settings, notices)
        generation = old.get("observedGeneration")
        policy_condition = {**judgement.condition, "observedGeneration": generation}
        status = _with_conditions(old, [policy_condition])
        status.pop("policy", None)
        return status | ({"policy": judgement.status} if judgement.status else {})

    return notices + _write(namespace, name, build)


def _repair_span(
    engine_body: dict[str, Any],
    kind: str,
    name: str,
    drift: str,
    differences: list[str] | None = None,
) -> AbstractContextManager[tracing.Handle]:
    """The span of one drift repair: which object, deleted or drifted, and which fields."""
    attributes = {
        **_span_attributes(engine_body),
        "k8s.object.kind": kind,
        "k8s.object.name": name,
        "sentinel.drift": drift,
        "sentinel.drift.fields": [d.split(":", 1)[0] for d in differences or []],
    }
    return tracing.span(f"sentinel.repair {kind}", attributes)


def _repaired(kind: str, name: str, what: str) -> Notice:
    return Notice(conditions.NORMAL, DRIFT_REPAIRED, f"{kind} {name} {what}"[:1000])


def repair_deployment(
    engine_body: dict[str, Any], live: dict[str, Any] | None, settings: OperatorSettings
) -> list[Notice]:
    """Deployment watch: put back a deleted Deployment (a full reconcile) or the fields of the
    engine's spec that were changed by hand (image, env, replicas, ports, ...), then refresh
    DeploymentReady. ``live`` is the Deployment as the watch saw it, None once deleted.

    Replicas follow ``spec.replicas`` of the engine, which ``kubectl scale rag`` and an
    autoscaler change through the engine's scale subresource; scaling the Deployment itself
    is drift like any other."""
    engine = build_engine(engine_body, settings)
    if engine is None or _deleting(engine_body):
        return []
    if live is None:
        with _repair_span(engine_body, "Deployment", engine.name, "deleted") as span:
            try:
                notices = reconcile(engine_body, settings)
            except ApiException as exc:
                span.error(str(exc.status))
                return _repair_failed(engine, DEPLOYMENT_MISSING, "was deleted", exc)
        return [_repaired("Deployment", engine.name, "was deleted; created it again"), *notices]
    desired = manifests.deployment(engine)
    if not manifests.drift(desired, live):
        return refresh_rollout(engine.namespace, engine.name, live)
    # The watch's copy may be older than what is stored (a spec change applied since): judge
    # the stored object, so that only a difference that is really there is repaired.
    fresh = k8s.read_deployment(engine.namespace, engine.name)
    if fresh is None:
        return []  # deleted meanwhile: its DELETED event brings it back
    differences = manifests.drift(desired, fresh)
    if not differences:
        return refresh_rollout(engine.namespace, engine.name, fresh)
    with _repair_span(engine_body, "Deployment", engine.name, "drifted", differences) as span:
        try:
            applied = k8s.apply(desired)
        except ApiException as exc:
            span.error(str(exc.status))
            what = f"has drifted ({'; '.join(differences)})"
            return _repair_failed(engine, DEPLOYMENT_DRIFTED, what, exc)
    notices: list[Notice] = []
    if _version(applied) != _version(fresh):  # else the server had only normalised a value
        notices.append(
            _repaired(
                "Deployment",
                engine.name,
                f"had drifted: {'; '.join(differences)}; applied the engine's spec again",
            )
        )
    return notices + refresh_rollout(engine.namespace, engine.name, applied)


def repair_service(
    engine_body: dict[str, Any],
    service_name: str,
    live: dict[str, Any] | None,
    settings: OperatorSettings,
) -> list[Notice]:
    """Service watch: put back a Service of the engine that was deleted or changed by hand
    (type, selector, ports). ServiceReady says False (ServiceMissing) while a repair fails;
    the periodic re-check tries again then."""
    engine = build_engine(engine_body, settings)
    if engine is None or _deleting(engine_body) or service_name not in engine.service_names:
        return []  # a stale Service the operator deleted itself, or nothing to compare with
    desired = manifests.service(engine, service_name)
    fresh: dict[str, Any] | None = None
    differences: list[str] = []
    if live is None:
        what, failure = "was deleted; created it again", SERVICE_MISSING
    else:
        if not manifests.drift(desired, live):
            return []
        fresh = k8s.read_service(engine.namespace, service_name)
        if fresh is None:
            return []  # deleted meanwhile: its DELETED event brings it back
        differences = manifests.drift(desired, fresh)
        if not differences:
            return []
        what = f"had drifted: {'; '.join(differences)}; applied the engine's spec again"
        failure = SERVICE_DRIFTED
    drift = "deleted" if live is None else "drifted"
    with _repair_span(engine_body, "Service", service_name, drift, differences) as span:
        try:
            applied = k8s.apply(desired)
        except ApiException as exc:
            span.error(str(exc.status))
            return _repair_failed(engine, failure, what.split(";")[0], exc, service_name)
    notices: list[Notice] = []
    if fresh is None or _version(applied) != _version(fresh):
        notices.append(_repaired("Service", service_name, what))
    return notices + _set(engine, True, SERVICE_APPLIED, _services_applied(engine))


def _set(
    engine: manifests.Engine,
    status: bool,
    reason: str,
    message: str,
    type_: str = conditions.SERVICE_READY,
) -> list[Notice]:
    """One component condition as a repair left it (a no-op write when it says the same)."""

    def build(old: dict[str, Any]) -> dict[str, Any]:
        generation = old.get("observedGeneration")
        if generation is None:
            return old  # not reconciled yet: its first reconcile writes every condition
        made = conditions.condition(type_, status, reason, message, generation)
        return _with_conditions(old, [made])

    return _write(engine.namespace, engine.name, build)


def _repair_failed(
    engine: manifests.Engine,
    reason: str,
    what: str,
    exc: ApiException,
    service: str | None = None,
) -> list[Notice]:
    """Status says what a failed repair left (a Warning Event with it); the periodic re-check
    tries again (``RECHECK_REASONS``). Nothing when the namespace itself is going."""
    if k8s.namespace_terminating(exc):
        return []
    kind, name = ("Service", service) if service else ("Deployment", engine.name)
    LOG.warning("repairing %s %s/%s failed: %s", kind, engine.namespace, name, exc)
    message = f"{kind} {name} {what} and could not be put back: {exc.status} {exc.reason}"
    type_ = conditions.SERVICE_READY if service else conditions.DEPLOYMENT_READY
    return _set(engine, False, reason, message, type_)


def _version(obj: dict[str, Any] | None) -> str | None:
    return ((obj or {}).get("metadata") or {}).get("resourceVersion")


def needs_recheck(status: dict[str, Any]) -> bool:
    """Whether the engine waits on something no watch reports (``RECHECK_REASONS``)."""
    return any(c.get("reason") in RECHECK_REASONS for c in status.get("conditions") or [])
