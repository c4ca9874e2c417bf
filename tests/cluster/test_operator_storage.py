"""Replicas and storage against a real kube-apiserver: the embedded index holds an engine to
one replica (StorageReady=False and one Event, never two diverging indexes); a shared vector
database lets its replicas through, with the pod's VECTOR_DB_* environment."""

from __future__ import annotations

import time

import pytest
from kubernetes import client

from sentinel_operator import crd
from support.operator_fixtures import condition, create_engine, get_engine, wait_for

pytestmark = pytest.mark.cluster

MILVUS = {"engine": "milvus", "url": "http://milvus.db.svc:19530", "accessSecret": "milvus-token"}
REASON = "EmbeddedStoreSingleReplica"


def warnings(namespace: str, name: str, reason: str) -> int:
    return sum(
        (e.count or 1)
        for e in client.CoreV1Api().list_namespaced_event(namespace).items
        if e.involved_object.name == name and e.type == "Warning" and e.reason == reason
    )


def deployment_replicas(namespace: str, name: str, wanted: int) -> client.V1Deployment:
    apps = client.AppsV1Api()
    return wait_for(
        lambda: (
            (d := apps.read_namespaced_deployment(name, namespace))
            and d.spec.replicas == wanted
            and d
        ),
        what=f"a deployment of {wanted} replicas",
    )


def test_embedded_store_keeps_one_replica_until_a_vector_db_is_shared(
    operator, k8s_namespace: str
) -> None:
    create_engine(k8s_namespace, "scaled", {"replicas": 3})
    engine = wait_for(
        lambda: (e := get_engine(k8s_namespace, "scaled")) and condition(e, "StorageReady") and e,
        what="StorageReady",
    )
    storage = condition(engine, "StorageReady")
    assert (storage["status"], storage["reason"]) == ("False", REASON)
    assert "spec.storage.vectorDB" in storage["message"]
    ready = condition(engine, "Ready")
    assert (ready["status"], ready["reason"]) == ("False", REASON)
    deployment = deployment_replicas(k8s_namespace, "scaled", 1)
    env = {e.name for e in deployment.spec.template.spec.containers[0].env}
    assert "VECTOR_DB_TYPE" not in env
    wait_for(lambda: warnings(k8s_namespace, "scaled", REASON), what="the Warning event")
    time.sleep(6)  # the Deployment's status events refresh status again: no second Event
    assert warnings(k8s_namespace, "scaled", REASON) == 1

    client.CustomObjectsApi().patch_namespaced_custom_object(
        crd.GROUP,
        crd.VERSION,
        k8s_namespace,
        crd.PLURAL,
        "scaled",
        {"spec": {"storage": {"vectorDB": MILVUS}}},
    )
    deployment = deployment_replicas(k8s_namespace, "scaled", 3)
    env = {e.name: e for e in deployment.spec.template.spec.containers[0].env}
    assert env["VECTOR_DB_TYPE"].value == "milvus"
    assert env["VECTOR_DB_URL"].value == MILVUS["url"]
    assert env["VECTOR_DB_COLLECTION_PREFIX"].value.startswith("sentinel_")
    secret = env["VECTOR_DB_ACCESS_SECRET"].value_from.secret_key_ref
    assert (secret.name, secret.key) == ("milvus-token", "VECTOR_DB_ACCESS_SECRET")
    storage = wait_for(
        lambda: (
            (c := condition(get_engine(k8s_namespace, "scaled"), "StorageReady"))
            and c["status"] == "True"
            and c
        ),
        what="StorageReady True",
    )
    assert storage["reason"] == "SharedVectorDB" and "3 replicas" in storage["message"]

    # Taking the shared store away takes the replicas with it.
    client.CustomObjectsApi().patch_namespaced_custom_object(
        crd.GROUP,
        crd.VERSION,
        k8s_namespace,
        crd.PLURAL,
        "scaled",
        {"spec": {"storage": None}},
    )
    deployment_replicas(k8s_namespace, "scaled", 1)
    wait_for(
        lambda: condition(get_engine(k8s_namespace, "scaled"), "StorageReady")["reason"] == REASON,
        what="StorageReady False again",
    )
