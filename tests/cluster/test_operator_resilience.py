"""The operator keeps going: a conflicting status write, an apiserver restart."""

from __future__ import annotations

import pytest
from kubernetes import client

from sentinel_operator import conditions, crd, k8s
from support.cluster import namespace
from support.operator_fixtures import condition, create_engine, get_engine, wait_for

pytestmark = pytest.mark.cluster


def test_status_write_retries_a_conflict_and_keeps_both_writers(cluster, operator) -> None:
    # A namespace outside the shared operator's glob: the only writers are the two below.
    with namespace(cluster, prefix="conflict") as k8s_namespace:
        _conflict(k8s_namespace)


def _conflict(k8s_namespace: str) -> None:
    create_engine(k8s_namespace, "racy", {})
    api = client.CustomObjectsApi()
    calls = []

    def mutate(old: dict) -> dict:
        calls.append(1)
        if len(calls) == 1:  # another writer slips in between our read and our write
            engine = get_engine(k8s_namespace, "racy")
            status = engine.get("status") or {}
            status["conditions"] = conditions.merge(
                status.get("conditions"),
                [conditions.condition("OtherWriter", True, "Wrote", "other", 1)],
                "2024-01-01T00:00:01Z",
            )
            engine["status"] = status
            api.replace_namespaced_custom_object_status(
                crd.GROUP, crd.VERSION, k8s_namespace, crd.PLURAL, "racy", engine
            )
        return {
            **old,
            "conditions": conditions.merge(
                old.get("conditions"),
                [conditions.condition("ThisWriter", True, "Wrote", "this", 1)],
                "2024-01-01T00:00:02Z",
            ),
        }

    k8s.update_status(k8s_namespace, "racy", mutate)
    assert len(calls) >= 2  # the first write met a 409 and was redone on fresh data
    engine = get_engine(k8s_namespace, "racy")
    assert condition(engine, "OtherWriter") and condition(engine, "ThisWriter")


def test_operator_survives_an_apiserver_restart(cluster, operator, k8s_namespace) -> None:
    cluster.restart_apiserver()
    create_engine(k8s_namespace, "after", {"guardrails": {"enabled": True}})
    engine = wait_for(
        lambda: (
            (e := get_engine(k8s_namespace, "after"))
            and (e.get("status") or {}).get("observedGeneration")
            and e
        ),
        timeout=60,
        what="a reconcile after the apiserver came back",
    )
    assert condition(engine, "PolicyReady")["status"] == "True"
