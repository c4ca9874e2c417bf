"""``spec.guard`` on the real API server: the guard sample's engine and Secret (its KAITO
Workspace needs KAITO's CRD, which this control plane does not have) through the operator.

- the runtime container gets GUARD_* variables, the token by ``secretKeyRef`` only, and loses
  them when ``spec.guard`` goes;
- a ``guard.url`` that is no http(s) URL is refused by the schema's pattern (1.20 enforces it);
- a guard Secret that is missing, then one without the key GUARD_ACCESS_SECRET, shows in
  ``SecretsReady`` and ``Ready`` with a Warning Event each, found by metadata-only GETs (the key
  names from the Secret's managedFields), until a Secret with the key makes it True again.

No kubelet runs here, so pods never start; the checks stop at the Deployment and status.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from sentinel_operator import crd, manifests
from support.chart import sample
from support.operator_fixtures import condition, create_engine, get_engine, wait_for

pytestmark = pytest.mark.cluster

RECHECK = 30.0  # the shared operator re-checks engines waiting on a Secret every 5 s


def runtime_env(namespace: str, name: str) -> dict[str, Any]:
    deployment = client.AppsV1Api().read_namespaced_deployment(name, namespace)
    return {e.name: e for e in deployment.spec.template.spec.containers[0].env}


def secrets_ready(namespace: str, name: str, reason: str) -> dict[str, Any]:
    return wait_for(
        lambda: (
            (e := get_engine(namespace, name))
            and (condition(e, "SecretsReady") or {}).get("reason") == reason
            and e
        ),
        timeout=RECHECK,
        what=f"SecretsReady {reason} on {name}",
    )


def event(namespace: str, engine: dict[str, Any], reason: str) -> Any:
    def found() -> Any:
        events = client.CoreV1Api().list_namespaced_event(
            namespace, field_selector=f"involvedObject.uid={engine['metadata']['uid']}"
        )
        return next((e for e in events.items if e.reason == reason), None)

    return wait_for(found, what=f"a {reason} Event")


def test_guard_spec_reaches_the_runtime_and_a_broken_one_shows_in_status(
    operator, k8s_namespace: str
) -> None:
    ns, core = k8s_namespace, client.CoreV1Api()
    objects = sample("ragengine-guard.yaml")
    [secret] = [o for o in objects if o["kind"] == "Secret"]
    [engine] = [o for o in objects if o["kind"] == crd.KIND]
    core.create_namespaced_secret(ns, secret)
    client.CustomObjectsApi().create_namespaced_custom_object(
        crd.GROUP, crd.VERSION, ns, crd.PLURAL, engine
    )
    name, guard = engine["metadata"]["name"], engine["spec"]["guard"]

    # The guard reaches the runtime container's environment; the token only by reference.
    env = wait_for(lambda: runtime_env(ns, name), what="the Deployment")
    assert env["GUARD_URL"].value == guard["url"] == "http://workspace-llama-guard/v1"
    assert env["GUARD_FAMILY"].value == "llama-guard-3"
    assert env["GUARD_MODE"].value == "uncertain"
    assert env["GUARD_ANSWERS"].value == "true"
    token = env["GUARD_ACCESS_SECRET"]
    assert token.value is None
    assert (token.value_from.secret_key_ref.name, token.value_from.secret_key_ref.key) == (
        secret["metadata"]["name"],
        manifests.GUARD_SECRET_KEY,
    )
    stored = secrets_ready(ns, name, "SecretsFound")
    assert condition(stored, "SecretsReady")["status"] == "True"

    # Without spec.guard the variables go (server-side apply drops what the spec stops setting).
    client.CustomObjectsApi().patch_namespaced_custom_object(
        crd.GROUP, crd.VERSION, ns, crd.PLURAL, name, {"spec": {"guard": None}}
    )
    wait_for(
        lambda: not [n for n in runtime_env(ns, name) if n.startswith("GUARD_")],
        what="GUARD_* gone from the Deployment",
    )

    # A URL that is no http(s) URL never gets in.
    with pytest.raises(ApiException) as refused:
        create_engine(ns, "bad-url", {"guard": {"url": "llama-guard:8000/v1", "family": "custom"}})
    assert refused.value.status == 422
    assert "spec.guard.url" in refused.value.body

    # A guard Secret that does not exist: SecretsReady names it, Ready takes its reason.
    missing = f"guard-{uuid.uuid4().hex[:6]}"
    spec = {"guard": {**guard, "accessSecret": missing}}
    create_engine(ns, "no-secret", spec)
    stored = secrets_ready(ns, "no-secret", "AccessSecretMissing")
    secrets = condition(stored, "SecretsReady")
    assert secrets["status"] == "False"
    assert secrets["message"] == (
        f"guard.accessSecret: Secret {missing} not found in namespace {ns}: the runtime pods "
        "cannot start until it exists"
    )
    ready = condition(stored, "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "AccessSecretMissing")
    assert event(ns, stored, "AccessSecretMissing").type == "Warning"

    # It appears without the key the runtime reads: the key names come from managedFields.
    value = f"tok-{uuid.uuid4().hex}"
    core.create_namespaced_secret(
        ns, {"metadata": {"name": missing}, "stringData": {"token": value}}
    )
    stored = secrets_ready(ns, "no-secret", "AccessSecretKeyMissing")
    assert condition(stored, "SecretsReady")["message"] == (
        f"guard.accessSecret: Secret {missing} has no key GUARD_ACCESS_SECRET: the runtime pods "
        "cannot start until the key is added"
    )
    assert condition(stored, "Ready")["reason"] == "AccessSecretKeyMissing"
    warning = event(ns, stored, "AccessSecretKeyMissing")
    assert warning.type == "Warning" and value not in warning.message

    # With the key, the engine waits only on its pods.
    core.replace_namespaced_secret(
        missing, ns, {"metadata": {"name": missing}, "stringData": {"GUARD_ACCESS_SECRET": value}}
    )
    stored = secrets_ready(ns, "no-secret", "SecretsFound")
    assert condition(stored, "Ready")["reason"] == "ReplicasNotReady"  # no kubelet here
    assert event(ns, stored, "SecretsFound").type == "Normal"
