"""The operator's reconcile spans on the real API server, exported over OTLP/HTTP to a real
receiver (support.otlp_receiver), docs/tracing.md: an operator of its own, configured by the
standard OTEL_* variables as the chart sets them, sees an engine created, then its Deployment
deleted and its image changed by hand, and its runtime Deployment inherits the variables."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kubernetes import client

from support.cluster import namespace
from support.operator_fixtures import (
    create_engine,
    get_engine,
    install,
    start_operator,
    stop_operator,
    wait_for,
)
from support.otlp_receiver import OtlpReceiver, ReceivedSpan

pytestmark = pytest.mark.cluster

ENGINE = "traced"
SPAN_WAIT = 20.0


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    started = OtlpReceiver().start()
    try:
        yield started
    finally:
        started.stop()


def spans_of(receiver: OtlpReceiver, name: str, **attributes: object) -> list[ReceivedSpan]:
    return [
        s
        for s in receiver.named(name)
        if all(s.attributes.get(k) == v for k, v in attributes.items())
    ]


def test_reconcile_and_drift_repair_are_traced(cluster, kube, tmp_path, receiver) -> None:
    install(cluster)
    apps = client.AppsV1Api()
    environment = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
        "OTEL_BSP_SCHEDULE_DELAY": "100",  # milliseconds: export as soon as a span ends
        "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=test",
        "OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=never-copied",
    }
    with namespace(cluster, prefix="traced") as ns:
        process, _ = start_operator(
            cluster, tmp_path / "operator.log", namespaces=(ns,), env=environment
        )
        try:
            create_engine(ns, ENGINE, {"guardrails": {"enabled": False}})
            ours = {"k8s.namespace.name": ns, "sentinel.ragengine.name": ENGINE}
            (created,) = wait_for(
                lambda: spans_of(
                    receiver,
                    "sentinel.reconcile RAGEngine",
                    **ours,
                    **{"sentinel.reconcile.trigger": "create"},
                ),
                timeout=SPAN_WAIT,
                what="the create reconcile's span",
            )
            assert created.kind == "internal" and created.parent_id == ""
            assert created.resource["service.name"] == "sentinel-operator"
            assert created.resource["deployment.environment"] == "test"
            (validated,) = [
                s for s in receiver.trace(created.trace_id) if s.name == "sentinel.policy.validate"
            ]
            assert validated.parent_id == created.span_id
            assert validated.attributes["sentinel.ragengine.name"] == ENGINE

            # The runtime inherits the variables, less the service name and the headers.
            deployment = wait_for(
                lambda: apps.read_namespaced_deployment(ENGINE, ns), what="the Deployment"
            )
            env = {e.name: e.value for e in deployment.spec.template.spec.containers[0].env}
            assert env["OTEL_EXPORTER_OTLP_ENDPOINT"] == receiver.endpoint
            assert env["OTEL_RESOURCE_ATTRIBUTES"] == (
                f"deployment.environment=test,k8s.namespace.name={ns},sentinel.ragengine={ENGINE}"
            )
            assert "OTEL_EXPORTER_OTLP_HEADERS" not in env
            assert "OTEL_SERVICE_NAME" not in env

            # Drift: the Deployment deleted, then its image changed by hand.
            wait_for(lambda: get_engine(ns, ENGINE).get("status"), what="the first status")
            apps.delete_namespaced_deployment(ENGINE, ns)
            (deleted,) = wait_for(
                lambda: spans_of(
                    receiver, "sentinel.repair Deployment", **ours, **{"sentinel.drift": "deleted"}
                ),
                timeout=SPAN_WAIT,
                what="the repair span of a deleted Deployment",
            )
            # Its reconcile (which creates the Deployment again) is a child span.
            assert any(
                s.parent_id == deleted.span_id and s.name == "sentinel.reconcile RAGEngine"
                for s in receiver.trace(deleted.trace_id)
            )
            wait_for(
                lambda: apps.read_namespaced_deployment(ENGINE, ns), what="the Deployment back"
            )
            patch = {
                "spec": {
                    "template": {"spec": {"containers": [{"name": "runtime", "image": "evil/img"}]}}
                }
            }
            apps.patch_namespaced_deployment(ENGINE, ns, patch)
            (drifted,) = wait_for(
                lambda: spans_of(
                    receiver, "sentinel.repair Deployment", **ours, **{"sentinel.drift": "drifted"}
                ),
                timeout=SPAN_WAIT,
                what="the repair span of a hand-changed Deployment",
            )
            assert (
                "spec.template.spec.containers[0].image"
                in drifted.attributes["sentinel.drift.fields"]
            )
        finally:
            stop_operator(process)
