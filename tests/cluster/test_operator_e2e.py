"""The operator against a real kube-apiserver: `sentinel operator run` as a process."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from sentinel_operator import crd, manifests
from support.runtime import free_port

pytestmark = pytest.mark.cluster
ROOT = Path(__file__).resolve().parents[2]
OPERATOR_NS = "sentinel-system"
DEFAULT_POLICY = (
    ROOT / "runtime" / "sentinel_runtime" / "guardrails" / "default_policy.yaml"
).read_text(encoding="utf-8")


def wait_for(predicate: Callable[[], Any], timeout: float = 20.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = predicate()
        except ApiException as exc:
            if exc.status != 404:
                raise
            last = None
        if last:
            return last
        time.sleep(0.2)
    pytest.fail(f"timed out after {timeout} s waiting for {what} (last: {last!r})")


@pytest.fixture(scope="module")
def kube(cluster) -> Iterator[None]:
    config.load_kube_config(str(cluster.kubeconfig))
    yield


@pytest.fixture(scope="module")
def operator(cluster, kube, tmp_path_factory: pytest.TempPathFactory) -> Iterator[subprocess.Popen]:
    env = {**os.environ, "KUBECONFIG": str(cluster.kubeconfig)}
    # The 1.20 test server predates CEL: kubectl's client-side schema would reject the
    # x-kubernetes-validations key that newer servers enforce, and the server ignores it.
    cluster.kubectl("apply", "--validate=false", "-f", str(ROOT / "crds" / "ragengine.yaml"))
    core = client.CoreV1Api()
    try:
        core.create_namespace({"metadata": {"name": OPERATOR_NS}})
    except ApiException as exc:
        if exc.status != 409:
            raise
    try:
        core.create_namespaced_config_map(
            OPERATOR_NS,
            {
                "metadata": {"name": manifests.POLICY_TEMPLATE},
                "data": {"guardrails.yaml": DEFAULT_POLICY},
            },
        )
    except ApiException as exc:
        if exc.status != 409:
            raise
    log = tmp_path_factory.mktemp("operator") / "operator.log"
    health = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sentinel_runtime.cli",
            "operator",
            "run",
            "--metrics-port",
            str(free_port()),
            "--metrics-host",
            "127.0.0.1",
            "--health-port",
            str(health),
            "--health-host",
            "127.0.0.1",
        ],
        env={
            **env,
            "OPERATOR_NAMESPACE": OPERATOR_NS,
            "RESYNC_SECONDS": "5",
            "RUNTIME_IMAGE": "sentinel:test",
        },
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )

    def healthy() -> bool:
        if process.poll() is not None:
            pytest.fail(f"operator exited:\n{log.read_text()}")
        try:
            return httpx.get(f"http://127.0.0.1:{health}/healthz", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    wait_for(healthy, 30, "operator liveness")
    yield process
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
    sys.stdout.write(log.read_text()[-4000:])


def create_engine(namespace: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return client.CustomObjectsApi().create_namespaced_custom_object(
        crd.GROUP,
        crd.VERSION,
        namespace,
        crd.PLURAL,
        {
            "apiVersion": f"{crd.GROUP}/{crd.VERSION}",
            "kind": crd.KIND,
            "metadata": {"name": name},
            "spec": spec,
        },
    )


def get_engine(namespace: str, name: str) -> dict[str, Any]:
    return client.CustomObjectsApi().get_namespaced_custom_object(
        crd.GROUP, crd.VERSION, namespace, crd.PLURAL, name
    )


def condition(engine: dict[str, Any], type_: str) -> dict[str, Any] | None:
    for item in (engine.get("status") or {}).get("conditions") or []:
        if item["type"] == type_:
            return item
    return None


def test_engine_gets_policy_copy_deployment_service_and_status(
    operator, k8s_namespace: str
) -> None:
    create_engine(k8s_namespace, "demo", {"guardrails": {"enabled": True}})
    apps, core = client.AppsV1Api(), client.CoreV1Api()
    deployment = wait_for(
        lambda: apps.read_namespaced_deployment("demo", k8s_namespace), what="deployment"
    )
    wait_for(lambda: core.read_namespaced_service("demo", k8s_namespace), what="service")
    copy = core.read_namespaced_config_map(manifests.POLICY_TEMPLATE, k8s_namespace)
    assert copy.metadata.owner_references is None
    assert copy.data["guardrails.yaml"] == DEFAULT_POLICY
    assert deployment.metadata.owner_references[0].kind == "RAGEngine"
    env = {e.name: e.value for e in deployment.spec.template.spec.containers[0].env}
    assert env["OUTPUT_GUARDRAILS_ENABLED"] == "true"
    engine = wait_for(
        lambda: (e := get_engine(k8s_namespace, "demo")) and condition(e, "PolicyReady") and e,
        what="status",
    )
    assert condition(engine, "PolicyReady")["status"] == "True"
    assert engine["status"]["policy"]["activeScanners"] == 3
    assert engine["status"]["endpoint"] == f"http://demo.{k8s_namespace}.svc:5000"
    assert condition(engine, "Ready")["status"] in ("False", "Unknown")  # no pods run here


def test_policy_edit_shows_in_status_without_touching_the_deployment(
    operator, k8s_namespace: str
) -> None:
    core, apps = client.CoreV1Api(), client.AppsV1Api()
    core.create_namespaced_config_map(
        k8s_namespace,
        {"metadata": {"name": "my-policy"}, "data": {"guardrails.yaml": DEFAULT_POLICY}},
    )
    create_engine(
        k8s_namespace,
        "edit",
        {"guardrails": {"enabled": True, "configMapRef": {"name": "my-policy"}}},
    )
    wait_for(
        lambda: condition(get_engine(k8s_namespace, "edit"), "PolicyReady") or None,
        what="first policy status",
    )
    generation = apps.read_namespaced_deployment("edit", k8s_namespace).metadata.generation
    core.patch_namespaced_config_map(
        "my-policy", k8s_namespace, {"data": {"guardrails.yaml": "scanners: [{type: nope}]"}}
    )
    engine = wait_for(
        lambda: (
            (e := get_engine(k8s_namespace, "edit"))
            and condition(e, "PolicyReady")["reason"] == "NoActiveScanners"
            and e
        ),
        what="policy status to follow the edit",
    )
    assert condition(engine, "PolicyReady")["status"] == "False"
    assert apps.read_namespaced_deployment("edit", k8s_namespace).metadata.generation == generation
    assert not core.list_namespaced_config_map(
        k8s_namespace, field_selector=f"metadata.name={manifests.POLICY_TEMPLATE}"
    ).items  # a referenced policy is never copied


def test_spec_change_rolls_the_deployment(operator, k8s_namespace: str) -> None:
    create_engine(k8s_namespace, "roll", {"replicas": 1})
    apps = client.AppsV1Api()
    wait_for(lambda: apps.read_namespaced_deployment("roll", k8s_namespace), what="deployment")
    client.CustomObjectsApi().patch_namespaced_custom_object(
        crd.GROUP,
        crd.VERSION,
        k8s_namespace,
        crd.PLURAL,
        "roll",
        {"spec": {"image": "sentinel:v2", "replicas": 2, "serviceType": "NodePort"}},
    )
    deployment = wait_for(
        lambda: (
            (d := apps.read_namespaced_deployment("roll", k8s_namespace))
            and d.spec.template.spec.containers[0].image == "sentinel:v2"
            and d
        ),
        what="new image",
    )
    assert deployment.spec.replicas == 2
    service = wait_for(
        lambda: (
            (s := client.CoreV1Api().read_namespaced_service("roll", k8s_namespace))
            and s.spec.type == "NodePort"
            and s
        ),
        what="service type",
    )
    assert service.spec.ports[0].port == 5000


def test_invalid_spec_is_reported_not_applied(operator, k8s_namespace: str) -> None:
    # The 1.20 test apiserver ignores CEL rules, so the operator must catch this itself.
    create_engine(
        k8s_namespace, "both", {"embedding": {"local": {"modelID": "m"}, "remote": {"url": "u"}}}
    )
    engine = wait_for(
        lambda: (e := get_engine(k8s_namespace, "both")) and condition(e, "Ready") and e,
        what="invalid spec status",
    )
    ready = condition(engine, "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "InvalidSpec")
    assert "exactly one of local and remote" in ready["message"]
    with pytest.raises(ApiException) as caught:
        client.AppsV1Api().read_namespaced_deployment("both", k8s_namespace)
    assert caught.value.status == 404


def test_deleting_the_engine_collects_owned_objects_and_keeps_the_policy_copy(
    operator, k8s_namespace: str
) -> None:
    create_engine(k8s_namespace, "gone", {"guardrails": {"enabled": True}})
    apps, core = client.AppsV1Api(), client.CoreV1Api()
    wait_for(lambda: apps.read_namespaced_deployment("gone", k8s_namespace), what="deployment")
    client.CustomObjectsApi().delete_namespaced_custom_object(
        crd.GROUP, crd.VERSION, k8s_namespace, crd.PLURAL, "gone"
    )

    def collected() -> bool:
        try:
            apps.read_namespaced_deployment("gone", k8s_namespace)
        except ApiException as exc:
            return exc.status == 404
        return False

    wait_for(collected, 40, "garbage collection of the deployment")
    assert core.read_namespaced_config_map(manifests.POLICY_TEMPLATE, k8s_namespace).data


def test_kubectl_get_rag_shows_readiness_policy_and_endpoint(
    cluster, operator, k8s_namespace: str
) -> None:
    create_engine(k8s_namespace, "shown", {"guardrails": {"enabled": True}})
    wait_for(lambda: condition(get_engine(k8s_namespace, "shown"), "PolicyReady"), what="status")
    # A fresh discovery cache: kubectl 1.20 keeps a stale one for ten minutes.
    cache = f"--cache-dir={cluster.directory}/kubectl-cache-{k8s_namespace}"
    out = cluster.kubectl("get", "rag", "-n", k8s_namespace, cache).stdout
    lines = out.splitlines()
    header, row = lines[0], next(line for line in lines if line.startswith("shown"))
    assert header.split()[:5] == ["NAME", "READY", "POLICY", "ENDPOINT", "AGE"]
    assert "PolicyValid" in row and f"http://shown.{k8s_namespace}.svc:5000" in row
