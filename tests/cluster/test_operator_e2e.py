"""The operator against a real kube-apiserver: `sentinel operator` as a process."""

from __future__ import annotations

import time

import httpx
import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from sentinel_operator import crd, manifests
from support.operator_fixtures import (
    DEFAULT_POLICY,
    ROOT,
    condition,
    create_engine,
    get_engine,
    wait_for,
)
from support.runtime import sample

pytestmark = pytest.mark.cluster


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
        lambda: (
            (e := get_engine(k8s_namespace, "demo"))
            and (e.get("status") or {}).get("observedGeneration")
            and e
        ),
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
        {
            "spec": {
                "image": "sentinel:v2",
                "replicas": 2,  # more than one needs a shared vector database
                "storage": {"vectorDB": {"engine": "milvus", "url": "http://milvus:19530"}},
                "serviceType": "NodePort",
            }
        },
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


def test_kubectl_get_rag_shows_readiness_its_reason_policy_and_endpoint(
    cluster, operator, k8s_namespace: str
) -> None:
    create_engine(k8s_namespace, "shown", {"guardrails": {"enabled": True}})
    wait_for(lambda: condition(get_engine(k8s_namespace, "shown"), "PolicyReady"), what="status")
    # A fresh discovery cache: kubectl 1.20 keeps a stale one for ten minutes.
    cache = f"--cache-dir={cluster.directory}/kubectl-cache-{k8s_namespace}"
    out = cluster.kubectl("get", "rag", "-n", k8s_namespace, cache).stdout
    lines = out.splitlines()
    header, row = lines[0], next(line for line in lines if line.startswith("shown"))
    assert header.split()[:6] == ["NAME", "READY", "REASON", "POLICY", "ENDPOINT", "AGE"]
    _, ready, reason, policy, endpoint, *_ = row.split()
    # Why it is not ready: no kubelet runs its pod here.
    assert (ready, reason) in (("False", "ReplicasNotReady"), ("Unknown", "RolloutPending"))
    assert (policy, endpoint) == ("PolicyValid", f"http://shown.{k8s_namespace}.svc:5000")


def test_a_name_no_service_can_take_is_an_invalid_spec(operator, k8s_namespace: str) -> None:
    # "shop.v2" is a valid custom resource name but not a Service name: reported, not retried.
    create_engine(k8s_namespace, "shop.v2", {})
    engine = wait_for(
        lambda: (e := get_engine(k8s_namespace, "shop.v2")) and condition(e, "Ready") and e,
        what="invalid name status",
    )
    ready = condition(engine, "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "InvalidSpec")
    assert "'shop.v2'" in ready["message"]
    assert not client.AppsV1Api().list_namespaced_deployment(k8s_namespace).items


def events_for(namespace: str, name: str) -> list[tuple[str, str]]:
    return [
        (e.type, e.reason)
        for e in client.CoreV1Api().list_namespaced_event(namespace).items
        if e.involved_object.name == name
    ]


def test_invalid_spec_posts_a_warning_event(operator, k8s_namespace: str) -> None:
    # Bounds are the apiserver's job (replicas: -3 is refused with 422); the one-of rule is
    # CEL, which 1.20 ignores, so the operator reports it.
    create_engine(
        k8s_namespace, "bad", {"embedding": {"local": {"modelID": "m"}, "remote": {"url": "u"}}}
    )
    assert wait_for(
        lambda: ("Warning", "InvalidSpec") in events_for(k8s_namespace, "bad"),
        what="InvalidSpec event",
    )
    # Events follow changes of condition: a later pass over the same problem (a restart's
    # resume, an edit that keeps it) does not announce it again.
    time.sleep(6)
    assert events_for(k8s_namespace, "bad").count(("Warning", "InvalidSpec")) == 1


def test_missing_policy_config_map_is_reported_then_converges(operator, k8s_namespace: str) -> None:
    spec = {"guardrails": {"enabled": True, "configMapRef": {"name": "later"}}}
    create_engine(k8s_namespace, "waits", spec)
    engine = wait_for(
        lambda: (
            (e := get_engine(k8s_namespace, "waits"))
            and (c := condition(e, "PolicyReady"))
            and c["reason"] == "ConfigMapNotFound"
            and e
        ),
        what="ConfigMapNotFound",
    )
    assert condition(engine, "Ready")["status"] == "False"
    assert ("Warning", "ConfigMapNotFound") in events_for(k8s_namespace, "waits")
    # The Deployment exists anyway: its pod would serve 503 until the policy appears.
    assert client.AppsV1Api().read_namespaced_deployment("waits", k8s_namespace)
    client.CoreV1Api().create_namespaced_config_map(
        k8s_namespace, {"metadata": {"name": "later"}, "data": {"guardrails.yaml": DEFAULT_POLICY}}
    )
    wait_for(
        lambda: condition(get_engine(k8s_namespace, "waits"), "PolicyReady")["status"] == "True",
        what="PolicyReady after the ConfigMap appears",
    )


def test_config_map_without_the_policy_key_is_reported(operator, k8s_namespace: str) -> None:
    client.CoreV1Api().create_namespaced_config_map(
        k8s_namespace, {"metadata": {"name": "wrong-key"}, "data": {"policy.yaml": "x: 1"}}
    )
    spec = {"guardrails": {"enabled": True, "configMapRef": {"name": "wrong-key"}}}
    create_engine(k8s_namespace, "nokey", spec)
    wait_for(
        lambda: (
            (c := condition(get_engine(k8s_namespace, "nokey"), "PolicyReady"))
            and c["reason"] == "PolicyKeyMissing"
        ),
        what="PolicyKeyMissing",
    )


def test_operator_metrics_count_reconciles_and_engines(operator, k8s_namespace: str) -> None:
    create_engine(k8s_namespace, "counted", {})
    wait_for(
        lambda: (get_engine(k8s_namespace, "counted").get("status") or {}).get(
            "observedGeneration"
        ),
        what="reconcile",
    )
    text = httpx.get(f"http://127.0.0.1:{operator}/metrics", timeout=5).text
    assert sample(text, "sentinel_operator_reconciles_total", result="success") >= 1
    assert "sentinel_operator_reconcile_duration_seconds_count" in text
    assert "sentinel_operator_engines" in text
    assert "process_resident_memory_bytes" in text
    # The operator scans nothing: none of the runtime's series (they would page on it).
    prefixes = ("guardrails_", "output_guardrails_", "rag_")
    assert [line for line in text.splitlines() if line.startswith(prefixes)] == []


def test_ready_follows_the_pods_through_the_deployment_watch(operator, k8s_namespace: str) -> None:
    """No kubelet here: the test marks the pods Ready as a kubelet would, then the
    ReplicaSet and Deployment controllers and the operator's watch carry it to Ready."""
    shared = {"vectorDB": {"engine": "milvus", "url": "http://milvus:19530"}}
    create_engine(
        k8s_namespace, "live", {"guardrails": {"enabled": True}, "replicas": 2, "storage": shared}
    )
    core = client.CoreV1Api()
    pods = wait_for(
        lambda: (
            (
                items := core.list_namespaced_pod(
                    k8s_namespace, label_selector=f"{manifests.ENGINE_LABEL}=live"
                ).items
            )
            and len(items) == 2
            and items
        ),
        what="pods from the ReplicaSet",
    )
    for pod in pods:
        core.patch_namespaced_pod_status(
            pod.metadata.name,
            k8s_namespace,
            {
                "status": {
                    "phase": "Running",
                    "conditions": [
                        {"type": "Ready", "status": "True"},
                        {"type": "ContainersReady", "status": "True"},
                    ],
                }
            },
        )
    engine = wait_for(
        lambda: (
            (e := get_engine(k8s_namespace, "live"))
            and (condition(e, "Ready") or {}).get("status") == "True"
            and e
        ),
        timeout=30,
        what="Ready from the pods",
    )
    assert engine["status"]["readyReplicas"] == 2
    assert condition(engine, "DeploymentReady")["reason"] == "ReplicasReady"


def test_kubectl_apply_of_the_minimal_sample(cluster, operator, k8s_namespace: str) -> None:
    sample_path = ROOT / "manifests" / "samples" / "ragengine-minimal.yaml"
    cluster.kubectl("apply", "-n", k8s_namespace, "-f", str(sample_path))
    engine = wait_for(
        lambda: (
            (e := get_engine(k8s_namespace, "ragengine-minimal"))
            and (e.get("status") or {}).get("observedGeneration")
            and e
        ),
        what="the sample reconciled",
    )
    assert condition(engine, "PolicyReady")["reason"] == "PolicyValid"
    deployment = client.AppsV1Api().read_namespaced_deployment("ragengine-minimal", k8s_namespace)
    assert deployment.spec.template.spec.containers[0].readiness_probe.http_get.path == "/ready"


def test_kaito_match_expressions_reach_the_deployment_as_node_affinity(
    operator, k8s_namespace: str
) -> None:
    expressions = [{"key": "apps", "operator": "In", "values": ["ragengine-example"]}]
    create_engine(
        k8s_namespace, "picky", {"compute": {"labelSelector": {"matchExpressions": expressions}}}
    )
    deployment = wait_for(
        lambda: client.AppsV1Api().read_namespaced_deployment("picky", k8s_namespace),
        what="deployment",
    )
    required = deployment.spec.template.spec.affinity.node_affinity
    term = required.required_during_scheduling_ignored_during_execution.node_selector_terms[0]
    assert [(e.key, e.operator, e.values) for e in term.match_expressions] == [
        ("apps", "In", ["ragengine-example"])
    ]
