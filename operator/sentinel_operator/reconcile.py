"""One RAGEngine's reconcile: policy ConfigMap, Deployment, Service, status. Never waits for a
rollout; readiness arrives later through the Deployment watch (``handlers``)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from sentinel_operator import (
    conditions,
    crd,
    k8s,
    manifests,
    metrics,
    policy_status,
    rollout,
    storage_status,
)
from sentinel_operator.config import OperatorSettings


@dataclass(frozen=True)
class Notice:
    """Something a user must see as a Kubernetes Event on the engine."""

    type: str  # Normal | Warning
    reason: str
    message: str


def _policy(
    engine: manifests.Engine, settings: OperatorSettings, notices: list[Notice]
) -> policy_status.PolicyJudgement:
    # Judged without a generation: the callers stamp the one they write status for.
    name = engine.policy_config_map
    if name is None:
        return policy_status.judge(None, None, found=False)
    config_map = k8s.read_config_map(engine.namespace, name)
    if config_map is None and name == manifests.POLICY_TEMPLATE and not _ref(engine):
        source_ns = settings.operator_namespace()
        template = k8s.read_config_map(source_ns, manifests.POLICY_TEMPLATE)
        if template is None:
            judgement = policy_status.judge(name, None, found=False)
            message = (
                f"policy template {manifests.POLICY_TEMPLATE} not found in namespace {source_ns}"
            )
            notices.append(Notice("Warning", "TemplateNotFound", message))
            return policy_status.PolicyJudgement(
                judgement.status,
                {**judgement.condition, "reason": "TemplateNotFound", "message": message},
            )
        if k8s.create_config_map(
            engine.namespace,
            name,
            dict(template.get("data") or {}),
            {"app.kubernetes.io/managed-by": "sentinel-operator"},
        ):
            notices.append(
                Notice("Normal", "PolicyCopied", f"copied {name} from namespace {source_ns}")
            )
        config_map = k8s.read_config_map(engine.namespace, name)
    judgement = policy_status.judge(
        name,
        (config_map or {}).get("data"),
        found=config_map is not None,
    )
    if judgement.condition["status"] != "True":
        notices.append(
            Notice("Warning", judgement.condition["reason"], judgement.condition["message"])
        )
    return judgement


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
    invalid = conditions.condition(conditions.READY, False, "InvalidSpec", message, generation)
    seen: set[tuple[str, str]] = set()

    def mark_invalid(old: dict[str, Any]) -> dict[str, Any]:
        seen.update(_said(old))
        merged = conditions.merge(old.get("conditions"), [invalid], conditions.now())
        return {**old, "observedGeneration": generation, "conditions": merged}

    k8s.update_status(namespace, name, mark_invalid)
    return _unsaid([Notice("Warning", "InvalidSpec", message)], seen)


def reconcile(body: dict[str, Any], settings: OperatorSettings) -> list[Notice]:
    """Apply everything a RAGEngine asks for and record what happened in its status."""
    started = time.perf_counter()
    meta = body["metadata"]
    name, namespace, generation = meta["name"], meta["namespace"], meta.get("generation")
    notices: list[Notice] = []
    try:
        spec = crd.RAGEngineSpec.model_validate(body.get("spec") or {})
    except ValidationError as exc:
        return _mark_invalid(namespace, name, generation, _spec_errors(exc))
    # Without spec.queryServiceName the Service takes the engine's name, which must fit it.
    if spec.query_service_name is None and (problem := manifests.name_problem(name)):
        return _mark_invalid(namespace, name, generation, problem)
    engine = manifests.Engine(name, namespace, meta["uid"], spec, settings.RUNTIME_IMAGE)
    try:
        judgement = _policy(engine, settings, notices)
        k8s.apply(manifests.deployment(engine))
        for service in manifests.services(engine):
            k8s.apply(service)
        # A renamed query or index Service: the old one goes (its owner still lives).
        owned = k8s.list_services(namespace, manifests.selector_text(engine))
        for stale in manifests.stale_services(engine, owned):
            k8s.delete_service(namespace, stale)
            notices.append(Notice("Normal", "ServiceDeleted", f"deleted stale Service {stale}"))
        deployment = k8s.read_deployment(namespace, name)
    except Exception:
        metrics.RECONCILES.labels("error").inc()
        raise
    policy_condition = {**judgement.condition, "observedGeneration": generation}
    storage_condition = storage_status.storage_condition(engine, generation)
    if storage_condition["status"] != "True":
        notices.append(Notice("Warning", storage_condition["reason"], storage_condition["message"]))
    deployment_condition, ready_replicas = rollout.deployment_condition(deployment, generation)
    service_condition = conditions.condition(
        conditions.SERVICE_READY,
        True,
        "ServiceApplied",
        f"{spec.service_type} service {', '.join(engine.service_names)} on port "
        f"{manifests.RUNTIME_PORT}",
        generation,
    )

    seen: set[tuple[str, str]] = set()

    def mutate(old: dict[str, Any]) -> dict[str, Any]:
        seen.update(_said(old))
        merged = conditions.merge(
            old.get("conditions"),
            [policy_condition, storage_condition, deployment_condition, service_condition],
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

    k8s.update_status(namespace, name, mutate)
    metrics.RECONCILES.labels("success").inc()
    metrics.RECONCILE_DURATION.observe(time.perf_counter() - started)
    return _unsaid(notices, seen)


def _said(status: dict[str, Any]) -> set[tuple[str, str]]:
    """(reason, message) pairs the status already shows: their Events were posted before."""
    return {(c.get("reason", ""), c.get("message", "")) for c in status.get("conditions") or []}


def _unsaid(notices: list[Notice], said: set[tuple[str, str]]) -> list[Notice]:
    # The resync timer reconciles every engine each minute; a problem that persists is
    # announced once, not once a minute.
    return [n for n in notices if n.type == "Normal" or (n.reason, n.message) not in said]


def refresh_rollout(namespace: str, name: str, deployment: dict[str, Any] | None) -> None:
    """Deployment watch: recompute DeploymentReady and Ready from the Deployment's status."""

    def mutate(old: dict[str, Any]) -> dict[str, Any]:
        generation = old.get("observedGeneration")
        if generation is None:
            return old  # not reconciled yet: its first reconcile reads the Deployment itself
        deployment_condition, ready_replicas = rollout.deployment_condition(deployment, generation)
        merged = conditions.merge(old.get("conditions"), [deployment_condition], conditions.now())
        merged = conditions.merge(merged, [conditions.ready(merged, generation)], conditions.now())
        return {
            **old,
            "conditions": merged,
            "replicas": rollout.replicas(deployment),
            "readyReplicas": ready_replicas,
        }

    k8s.update_status(namespace, name, mutate)


def refresh_policy(
    namespace: str, name: str, engine_body: dict[str, Any], settings: OperatorSettings
) -> None:
    """ConfigMap watch: re-judge the engine's policy and update PolicyReady and Ready."""
    spec = crd.RAGEngineSpec.model_validate(engine_body.get("spec") or {})
    engine = manifests.Engine(
        name, namespace, engine_body["metadata"]["uid"], spec, settings.RUNTIME_IMAGE
    )
    judgement = _policy(engine, settings, [])

    def mutate(old: dict[str, Any]) -> dict[str, Any]:
        generation = old.get("observedGeneration")
        policy_condition = {**judgement.condition, "observedGeneration": generation}
        merged = conditions.merge(old.get("conditions"), [policy_condition], conditions.now())
        merged = conditions.merge(merged, [conditions.ready(merged, generation)], conditions.now())
        status = {k: v for k, v in old.items() if k != "policy"}
        return (
            status
            | {"conditions": merged}
            | ({"policy": judgement.status} if judgement.status else {})
        )

    k8s.update_status(namespace, name, mutate)
