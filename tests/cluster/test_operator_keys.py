"""``spec.auth.keysSecret`` on the real API server: the keys sample's Secret and engine through
the operator.

- the runtime Deployment mounts the Secret read-only as a directory (no subPath: the kubelet's
  updates must reach the file the runtime reloads) and points RUNTIME_KEYS_FILE at the file;
- a keys Secret that is missing, then one without the named key, shows in ``SecretsReady``
  and ``Ready`` (metadata-only GETs: the operator never reads the keys), until it has the key;
- without ``spec.auth`` the mount and the variable go.

No kubelet runs here, so pods never start; the checks stop at the Deployment and status.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from kubernetes import client

from sentinel_operator import crd, manifests
from support.chart import sample
from support.operator_fixtures import condition, create_engine, get_engine, wait_for

pytestmark = pytest.mark.cluster

RECHECK = 30.0  # the shared operator re-checks engines waiting on a Secret every 5 s


def pod_spec(namespace: str, name: str) -> Any:
    deployment = client.AppsV1Api().read_namespaced_deployment(name, namespace)
    return deployment.spec.template.spec


def secrets_reason(namespace: str, name: str, reason: str) -> dict[str, Any]:
    return wait_for(
        lambda: (
            (e := get_engine(namespace, name))
            and (condition(e, "SecretsReady") or {}).get("reason") == reason
            and e
        ),
        timeout=RECHECK,
        what=f"SecretsReady {reason} on {name}",
    )


def test_a_keys_secret_is_mounted_into_the_runtime_and_a_missing_one_shows_in_status(
    operator, k8s_namespace: str
) -> None:
    ns, core = k8s_namespace, client.CoreV1Api()
    objects = sample("ragengine-keys.yaml")
    [secret] = [o for o in objects if o["kind"] == "Secret"]
    [engine] = [o for o in objects if o["kind"] == crd.KIND]
    core.create_namespaced_secret(ns, secret)
    client.CustomObjectsApi().create_namespaced_custom_object(
        crd.GROUP, crd.VERSION, ns, crd.PLURAL, engine
    )
    name = engine["metadata"]["name"]

    pod = wait_for(lambda: pod_spec(ns, name), what="the Deployment")
    [volume] = [v for v in pod.volumes if v.name == manifests.KEYS_VOLUME]
    assert volume.secret.secret_name == secret["metadata"]["name"]
    assert [(i.key, i.path) for i in volume.secret.items] == [("keys.yaml", "keys.yaml")]
    assert volume.secret.default_mode == 0o440
    assert not volume.secret.optional
    runtime = pod.containers[0]
    [mount] = [m for m in runtime.volume_mounts if m.name == manifests.KEYS_VOLUME]
    assert (mount.mount_path, mount.read_only, mount.sub_path) == ("/etc/sentinel/keys", True, None)
    env = {e.name: e.value for e in runtime.env}
    assert env["RUNTIME_KEYS_FILE"] == "/etc/sentinel/keys/keys.yaml"
    stored = secrets_reason(ns, name, "SecretsFound")
    assert condition(stored, "SecretsReady")["status"] == "True"

    # Without spec.auth the mount and the variable go.
    client.CustomObjectsApi().patch_namespaced_custom_object(
        crd.GROUP, crd.VERSION, ns, crd.PLURAL, name, {"spec": {"auth": None}}
    )
    wait_for(
        lambda: (
            all(v.name != manifests.KEYS_VOLUME for v in pod_spec(ns, name).volumes)
            and all(e.name != "RUNTIME_KEYS_FILE" for e in pod_spec(ns, name).containers[0].env)
        ),
        what="the keys mount gone from the Deployment",
    )

    # A keys Secret that does not exist, then one without the key the spec names.
    missing = f"keys-{uuid.uuid4().hex[:6]}"
    create_engine(ns, "no-keys", {"auth": {"keysSecret": {"name": missing, "key": "tenants"}}})
    stored = secrets_reason(ns, "no-keys", "AccessSecretMissing")
    assert condition(stored, "SecretsReady")["message"] == (
        f"auth.keysSecret: Secret {missing} not found in namespace {ns}: the runtime pods "
        "cannot start until it exists"
    )
    assert condition(stored, "Ready")["reason"] == "AccessSecretMissing"
    text = "keys:\n  - name: a\n    key: " + uuid.uuid4().hex + "\n"
    core.create_namespaced_secret(
        ns, {"metadata": {"name": missing}, "stringData": {"keys.yaml": text}}
    )
    stored = secrets_reason(ns, "no-keys", "AccessSecretKeyMissing")
    assert condition(stored, "SecretsReady")["message"] == (
        f"auth.keysSecret: Secret {missing} has no key tenants: the runtime pods cannot start "
        "until the key is added"
    )
    core.replace_namespaced_secret(
        missing, ns, {"metadata": {"name": missing}, "stringData": {"tenants": text}}
    )
    stored = secrets_reason(ns, "no-keys", "SecretsFound")
    assert condition(stored, "Ready")["reason"] == "ReplicasNotReady"  # no kubelet here
