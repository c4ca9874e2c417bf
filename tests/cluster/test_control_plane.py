"""Smoke tests of the local control plane itself: what the operator tests rely on."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from support.cluster import K8S_VERSION, Cluster

pytestmark = pytest.mark.cluster


def eventually(check: Callable[[], Any], timeout: float, what: str) -> Any:
    """Poll ``check`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            pytest.fail(f"not within {timeout:.0f} s: {what}")
        time.sleep(0.5)


def test_apiserver_is_ready_and_is_the_built_version(cluster: Cluster) -> None:
    ready = cluster.request("GET", "/readyz?verbose")
    assert ready.status_code == 200, ready.text
    assert "readyz check passed" in ready.text
    assert cluster.request("GET", "/version").json()["gitVersion"] == K8S_VERSION
    # Anonymous requests reach the health endpoints only.
    assert cluster.request("GET", "/readyz", token="").status_code == 200
    assert cluster.request("GET", "/api/v1/namespaces", token="").status_code == 403


def install_widget_crd(cluster: Cluster) -> str:
    """A namespaced Widget CRD with a status subresource in a fresh group; returns the group.
    CRDs stay: deleting one makes the garbage collector's next resync wait 30 s for an
    informer that can never sync, stalling GC in later tests (the cluster is thrown away
    after the session anyway)."""
    group = f"smoke{uuid.uuid4().hex[:6]}.sentinel.test"
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": {"size": {"type": "integer"}},
                                },
                                "status": {
                                    "type": "object",
                                    "properties": {"phase": {"type": "string"}},
                                },
                            },
                        }
                    },
                }
            ],
        },
    }
    cluster.apply(crd)
    cluster.kubectl("wait", "--for=condition=established", f"crd/widgets.{group}", "--timeout=30s")
    return group


def test_custom_resource_round_trip_with_status_subresource(
    cluster: Cluster, k8s_namespace: str
) -> None:
    group = install_widget_crd(cluster)
    # The first custom resource stored is what crashed an apiserver built with Go
    # >= 1.18 and the vendored reflect2 v1.0.1.
    created = cluster.apply(
        {
            "apiVersion": f"{group}/v1",
            "kind": "Widget",
            "metadata": {"name": "w1", "namespace": k8s_namespace},
            "spec": {"size": 3},
            "status": {"phase": "ignored"},
        }
    )
    assert created["spec"] == {"size": 3}
    assert "status" not in created  # with the subresource, the main endpoint drops it

    path = f"/apis/{group}/v1/namespaces/{k8s_namespace}/widgets/w1"
    patched = cluster.request(
        "PATCH",
        f"{path}/status",
        json={"status": {"phase": "Ready"}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert patched.status_code == 200, patched.text

    stored = cluster.get(f"widgets.{group}", "w1", "-n", k8s_namespace)
    assert stored is not None
    assert stored["spec"] == {"size": 3}
    assert stored["status"] == {"phase": "Ready"}
    assert cluster.request("GET", "/readyz").status_code == 200


def test_garbage_collector_deletes_dependents_of_a_deleted_owner(
    cluster: Cluster, k8s_namespace: str
) -> None:
    ns = ["-n", k8s_namespace]
    owner = cluster.apply(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "owner", "namespace": k8s_namespace},
        }
    )
    labels = {"app": "gc-smoke"}
    cluster.apply(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {
                "name": "dependent",
                "namespace": k8s_namespace,
                "ownerReferences": [
                    {
                        "apiVersion": "v1",
                        "kind": "ConfigMap",
                        "name": "owner",
                        "uid": owner["metadata"]["uid"],
                    }
                ],
            },
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    # Never pulled: there is no kubelet.
                    "spec": {"containers": [{"name": "c", "image": "registry.invalid/none:0"}]},
                },
            },
        }
    )
    # The deployment controller makes a ReplicaSet, the replicaset controller a Pod.
    eventually(
        lambda: (cluster.get("replicasets", *ns) or {}).get("items"),
        30,
        "the deployment controller creates a ReplicaSet",
    )
    eventually(
        lambda: (cluster.get("pods", *ns) or {}).get("items"),
        30,
        "the replicaset controller creates a Pod",
    )

    cluster.kubectl("delete", "configmap", "owner", *ns)
    eventually(
        lambda: cluster.get("deployment", "dependent", *ns) is None,
        60,
        "the garbage collector deletes the Deployment owned by the deleted ConfigMap",
    )
    eventually(
        lambda: not (cluster.get("replicasets", *ns) or {}).get("items"),
        60,
        "the garbage collector deletes the Deployment's ReplicaSet",
    )


def test_dependents_of_a_custom_resource_are_collected_after_a_controller_manager_restart(
    cluster: Cluster, k8s_namespace: str
) -> None:
    # What the operator relies on: objects owned by a custom resource go with it. The
    # restart makes the garbage collector watch the new type now, not within 30 s.
    group = install_widget_crd(cluster)
    cluster.restart_controller_manager()
    owner = cluster.apply(
        {
            "apiVersion": f"{group}/v1",
            "kind": "Widget",
            "metadata": {"name": "owner", "namespace": k8s_namespace},
        }
    )
    reference = {
        "apiVersion": f"{group}/v1",
        "kind": "Widget",
        "name": "owner",
        "uid": owner["metadata"]["uid"],
    }
    cluster.apply(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": "dependent",
                "namespace": k8s_namespace,
                "ownerReferences": [reference],
            },
        }
    )
    cluster.kubectl("delete", f"widgets.{group}", "owner", "-n", k8s_namespace)
    eventually(
        lambda: cluster.get("configmap", "dependent", "-n", k8s_namespace) is None,
        15,
        "the garbage collector deletes the ConfigMap owned by the deleted Widget",
    )


def test_service_account_token_authenticates_and_rbac_limits_it(
    cluster: Cluster, k8s_namespace: str
) -> None:
    ns = k8s_namespace
    cluster.kubectl("create", "serviceaccount", "reader", "-n", ns)
    cluster.kubectl(
        "create", "role", "configmap-reader", "--verb=get,list", "--resource=configmaps", "-n", ns
    )
    cluster.kubectl(
        "create", "rolebinding", "reader", "--role=configmap-reader",
        f"--serviceaccount={ns}:reader", "-n", ns,
    )  # fmt: skip
    token = cluster.service_account_token(ns, "reader")

    # Allowed by the Role (the RBAC authorizer's informer may need a moment).
    eventually(
        lambda: cluster.request("GET", f"/api/v1/namespaces/{ns}/configmaps", token=token)
        .status_code == 200,
        10,
        "the service account may list configmaps",
    )  # fmt: skip
    denied = cluster.request("GET", f"/api/v1/namespaces/{ns}/secrets", token=token)
    assert denied.status_code == 403
    assert f"system:serviceaccount:{ns}:reader" in denied.json()["message"]

    forged = cluster.request("GET", f"/api/v1/namespaces/{ns}/configmaps", token=token + "x")
    assert forged.status_code == 401

    # kubectl sees the same identity and the same denial.
    result = cluster.kubectl("get", "secrets", "-n", ns, token=token, check=False)
    assert result.returncode != 0 and "Forbidden" in result.stderr


def test_python_client_talks_to_the_cluster(cluster: Cluster, k8s_namespace: str) -> None:
    pytest.importorskip("kubernetes")
    from kubernetes import client

    with cluster.api_client() as api:
        names = [ns.metadata.name for ns in client.CoreV1Api(api).list_namespace().items]
    assert k8s_namespace in names
