"""Every edit of a used policy ConfigMap shows in status, whatever the engine went through just
before (issue 35): the five-step lifecycle repeated, and an edit in the middle of a rollout.

One operator and one namespace serve every round (each round its own engine, the namespace's
copy of the template deleted between rounds), so that twenty rounds take seconds. The vector
database carries no accessSecret: nothing puts the engine on the periodic re-check, so a stale
status would stay stale and the round would time out.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from kubernetes import client

from sentinel_operator import crd, manifests
from support.operator_fixtures import (
    DEFAULT_POLICY,
    condition,
    create_engine,
    get_engine,
    wait_for,
)

pytestmark = pytest.mark.cluster

ROUNDS = 20
BROKEN = "scanners: [{type: nosuch}]"
VECTOR_DB = {"engine": "milvus", "url": "http://milvus.db.svc:19530"}


def _patch(namespace: str, name: str, spec: dict[str, Any]) -> None:
    client.CustomObjectsApi().patch_namespaced_custom_object(
        crd.GROUP, crd.VERSION, namespace, crd.PLURAL, name, {"spec": spec}
    )


def _policy_ready(namespace: str, name: str) -> dict[str, Any] | None:
    return condition(get_engine(namespace, name), "PolicyReady")


def _edit_copy(namespace: str, text: str) -> None:
    client.CoreV1Api().patch_namespaced_config_map(
        manifests.POLICY_TEMPLATE, namespace, {"data": {"guardrails.yaml": text}}
    )


def _replicas(namespace: str, name: str) -> int:
    return client.AppsV1Api().read_namespaced_deployment(name, namespace).spec.replicas


def _wait_broken(namespace: str, name: str, what: str) -> dict[str, Any]:
    return wait_for(
        lambda: (c := _policy_ready(namespace, name)) and c["status"] == "False" and c,
        timeout=15,
        what=what,
    )


def _gone(namespace: str, name: str) -> None:
    api = client.CustomObjectsApi()
    api.delete_namespaced_custom_object(crd.GROUP, crd.VERSION, namespace, crd.PLURAL, name)
    wait_for(
        lambda: (
            not api.list_namespaced_custom_object(
                crd.GROUP,
                crd.VERSION,
                namespace,
                crd.PLURAL,
                field_selector=f"metadata.name={name}",
            )["items"]
        ),
        what=f"engine {name} deleted",
    )
    client.CoreV1Api().delete_namespaced_config_map(manifests.POLICY_TEMPLATE, namespace)


def _lifecycle(namespace: str, name: str) -> float:
    """The issue's five steps; the seconds from the edit to PolicyReady=False."""
    apps, core = client.AppsV1Api(), client.CoreV1Api()
    create_engine(namespace, name, {"guardrails": {"enabled": True}})
    wait_for(
        lambda: (
            apps.read_namespaced_deployment(name, namespace)
            and core.read_namespaced_service(name, namespace)
            and core.read_namespaced_config_map(manifests.POLICY_TEMPLATE, namespace)
        ),
        what="the Deployment, Service and policy copy",
    )
    _patch(namespace, name, {"replicas": 2})
    wait_for(
        lambda: (
            (c := condition(get_engine(namespace, name), "StorageReady")) and c["status"] == "False"
        ),
        what="replicas 2 refused on the embedded store",
    )
    _patch(namespace, name, {"storage": {"vectorDB": VECTOR_DB}})
    wait_for(lambda: _replicas(namespace, name) == 2, what="replicas 2 in the Deployment")
    edited = time.monotonic()
    _edit_copy(namespace, BROKEN)
    policy = _wait_broken(namespace, name, f"PolicyReady=False after the edit ({name})")
    assert policy["reason"] == "NoActiveScanners", policy
    return time.monotonic() - edited


def test_every_policy_edit_after_engine_updates_shows_in_status(
    operator, k8s_namespace: str
) -> None:
    delays = []
    for round_ in range(ROUNDS):
        name = f"life-{round_}"
        delays.append(_lifecycle(k8s_namespace, name))
        engine = get_engine(k8s_namespace, name)
        # The status's policy is the edited one, not the template's it was copied from.
        assert engine["status"]["policy"]["activeScanners"] == 0
        _gone(k8s_namespace, name)
    print(f"edit -> PolicyReady=False over {ROUNDS} rounds: max {max(delays):.2f} s")


def test_a_policy_edit_during_a_rollout_shows_in_status(operator, k8s_namespace: str) -> None:
    core = client.CoreV1Api()
    core.create_namespaced_config_map(
        k8s_namespace,
        {
            "metadata": {"name": manifests.POLICY_TEMPLATE},
            "data": {"guardrails.yaml": DEFAULT_POLICY},
        },
    )
    create_engine(
        k8s_namespace,
        "rolling",
        {"guardrails": {"enabled": True}, "storage": {"vectorDB": VECTOR_DB}},
    )
    wait_for(
        lambda: (c := _policy_ready(k8s_namespace, "rolling")) and c["reason"] == "PolicyValid",
        what="the first policy status",
    )
    # A rollout: spec changes that each make a new ReplicaSet, the edit between them, while
    # the reconciles of the earlier changes and the Deployment's status events still run.
    for replicas, image in ((3, "sentinel:v2"), (4, "sentinel:v3")):
        _patch(k8s_namespace, "rolling", {"replicas": replicas, "image": image})
        if replicas == 3:
            _edit_copy(k8s_namespace, BROKEN)
    wait_for(lambda: _replicas(k8s_namespace, "rolling") == 4, what="the last rollout")
    _wait_broken(k8s_namespace, "rolling", "PolicyReady=False after an edit during a rollout")
    # And back: the repaired policy shows too, while the Deployment keeps changing.
    _patch(k8s_namespace, "rolling", {"replicas": 2})
    _edit_copy(k8s_namespace, DEFAULT_POLICY)
    policy = wait_for(
        lambda: (c := _policy_ready(k8s_namespace, "rolling")) and c["status"] == "True" and c,
        timeout=15,
        what="PolicyReady=True after the policy was repaired",
    )
    assert policy["reason"] == "PolicyValid"
    assert _replicas(k8s_namespace, "rolling") == 2
