"""The scale subresource against the real apiserver: `kubectl scale` reaches the Deployment
through the operator, and a HorizontalPodAutoscaler can target a RAGEngine."""

from __future__ import annotations

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from sentinel_operator import crd, manifests
from support.operator_fixtures import create_engine, get_engine, wait_for

pytestmark = pytest.mark.cluster

SHARED = {"vectorDB": {"engine": "milvus", "url": "http://milvus:19530"}}


def _scale(namespace: str, name: str) -> dict:
    return client.CustomObjectsApi().get_namespaced_custom_object_scale(
        crd.GROUP, crd.VERSION, namespace, crd.PLURAL, name
    )


def _deployment_replicas(namespace: str, name: str) -> int:
    return client.AppsV1Api().read_namespaced_deployment(name, namespace).spec.replicas


def test_kubectl_scale_reaches_the_deployment_and_status(
    operator, cluster, k8s_namespace: str
) -> None:
    create_engine(k8s_namespace, "scaled", {"replicas": 1, "storage": SHARED})
    wait_for(
        lambda: (get_engine(k8s_namespace, "scaled").get("status") or {}).get("selector"),
        what="status.selector",
    )
    # kubectl caches discovery from before the CRD existed; `api-resources` refreshes it.
    wait_for(
        lambda: crd.PLURAL in cluster.kubectl("api-resources", f"--api-group={crd.GROUP}").stdout,
        what="RAGEngines in kubectl's discovery",
    )
    cluster.kubectl("scale", "-n", k8s_namespace, "rag/scaled", "--replicas=3")

    assert get_engine(k8s_namespace, "scaled")["spec"]["replicas"] == 3
    wait_for(lambda: _deployment_replicas(k8s_namespace, "scaled") == 3, what="3 replicas")
    # No kubelet: the ReplicaSet controller still creates the three pod objects, which the
    # Deployment counts in status.replicas and the operator copies to the engine.
    # Under whole-suite load this once never happened: the reconcile that applied the new
    # count wrote status.replicas from a Deployment read made before the Deployment watch
    # wrote 3, and no later event came (no kubelet). The reconcile now reads the Deployment
    # inside each status write attempt (reconcile._reconcile).
    scale = wait_for(
        lambda: (s := _scale(k8s_namespace, "scaled"))["status"].get("replicas") == 3 and s,
        timeout=40,
        what="scale status.replicas 3",
    )
    assert scale["spec"]["replicas"] == 3
    assert scale["status"]["selector"] == f"{manifests.ENGINE_LABEL}=scaled"
    pods = client.CoreV1Api().list_namespaced_pod(
        k8s_namespace, label_selector=scale["status"]["selector"]
    )
    assert len(pods.items) == 3  # the selector picks exactly the engine's pods

    cluster.kubectl("scale", "-n", k8s_namespace, "ragengine/scaled", "--replicas=0")
    wait_for(lambda: _deployment_replicas(k8s_namespace, "scaled") == 0, what="scaled to zero")


def test_scale_beyond_the_schema_maximum_is_refused(operator, k8s_namespace: str) -> None:
    create_engine(k8s_namespace, "capped", {"replicas": 1, "storage": SHARED})
    with pytest.raises(ApiException) as refused:
        client.CustomObjectsApi().patch_namespaced_custom_object_scale(
            crd.GROUP, crd.VERSION, k8s_namespace, crd.PLURAL, "capped", {"spec": {"replicas": 101}}
        )
    assert refused.value.status == 422
    assert get_engine(k8s_namespace, "capped")["spec"]["replicas"] == 1


def test_a_horizontal_pod_autoscaler_can_target_a_ragengine(operator, k8s_namespace: str) -> None:
    create_engine(k8s_namespace, "auto", {"replicas": 1, "storage": SHARED})
    autoscaling = client.AutoscalingV1Api()
    target = {"apiVersion": f"{crd.GROUP}/{crd.VERSION}", "kind": crd.KIND, "name": "auto"}
    autoscaling.create_namespaced_horizontal_pod_autoscaler(
        k8s_namespace,
        {
            "apiVersion": "autoscaling/v1",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "auto"},
            "spec": {
                "scaleTargetRef": target,
                "minReplicas": 1,
                "maxReplicas": 4,
                "targetCPUUtilizationPercentage": 70,
            },
        },
    )
    stored = autoscaling.read_namespaced_horizontal_pod_autoscaler("auto", k8s_namespace)
    assert stored.spec.scale_target_ref.kind == crd.KIND
    # What the HPA controller does with its target (it is not run here: no metrics server):
    # read the scale subresource, then write a new spec.replicas through it.
    wait_for(
        lambda: _scale(k8s_namespace, "auto")["status"].get("selector"),
        what="a selector for the autoscaler",
    )
    client.CustomObjectsApi().patch_namespaced_custom_object_scale(
        crd.GROUP, crd.VERSION, k8s_namespace, crd.PLURAL, "auto", {"spec": {"replicas": 2}}
    )
    wait_for(lambda: _deployment_replicas(k8s_namespace, "auto") == 2, what="2 replicas")
