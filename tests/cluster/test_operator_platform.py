"""What a platform engineer sees on the real API server, with the operator under the chart's
own RBAC (its ClusterRole, binding and ServiceAccount rendered by helm, the operator
authenticated with that account's token; tests/cluster/test_chart_install.py installs the
whole release, this module only the RBAC, so that it can run beside it):

- a deleted Service, a hand-changed image, env, replica count or Service port are repaired
  within 5 s, by watching the owned objects (no resync timer);
- a broken policy posts one Warning Event on the engine within 10 s, its fix a Normal one,
  and a re-made policy copy says so;
- a missing accessSecret shows in status with its own reason, found by a metadata-only GET;
- no engine carries a finalizer, so one can be deleted at once while no operator runs, and
  a finalizer an older operator left is taken off.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from sentinel_operator import crd, manifests
from support.chart import render
from support.cluster import Cluster, namespace
from support.operator_fixtures import (
    DEFAULT_POLICY,
    as_service_account,
    condition,
    create_engine,
    get_engine,
    install,
    start_operator,
    stop_operator,
    wait_for,
)
from support.runtime import sample

pytestmark = pytest.mark.cluster

PREFIX = "platform"  # outside the shared operator's sentinel-test-* glob
REPAIR_BOUND = 5.0  # seconds, from the issue
EVENT_BOUND = 10.0
SETUP = 60.0  # generous: a busy two-core machine runs other suites too
KOPF_FINALIZER = "kopf.zalando.org/KopfFinalizerMarker"
IMAGE = "sentinel:test"  # support.operator_fixtures.start_operator's RUNTIME_IMAGE


@dataclass
class ChartRBAC:
    """The chart's RBAC objects applied for one ServiceAccount, and the cluster as it sees it."""

    cluster: Cluster  # admin
    view: Cluster  # authenticated as the chart's ServiceAccount
    namespace: str  # the operator's (holds the policy template)
    directory: Path

    def start(self, log_name: str, namespaces: tuple[str, ...]) -> tuple[Any, int]:
        return start_operator(
            self.view,
            self.directory / log_name,
            namespaces=namespaces,
            operator_namespace=self.namespace,
            resync_seconds="2",  # the periodic re-check of engines waiting on a Secret
        )


@pytest.fixture(scope="module")
def chart_rbac(
    cluster: Cluster, kube, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ChartRBAC]:
    install(cluster)  # the CRD (the operator's namespace here is a fresh one)
    directory = tmp_path_factory.mktemp("platform")
    fullname = f"platform-{uuid.uuid4().hex[:6]}"  # cluster-scoped names of our own
    with namespace(cluster, prefix="opns") as operator_ns:
        objects = render(
            "--set", f"fullnameOverride={fullname}",
            "--show-only", "templates/serviceaccount.yaml",
            "--show-only", "templates/rbac.yaml",
            namespace=operator_ns,
        )  # fmt: skip
        for obj in objects:
            cluster.apply(obj)
        client.CoreV1Api().create_namespaced_config_map(
            operator_ns,
            {
                "metadata": {"name": manifests.POLICY_TEMPLATE},
                "data": {"guardrails.yaml": DEFAULT_POLICY},
            },
        )
        view, _ = as_service_account(cluster, operator_ns, f"{fullname}-operator", directory)
        try:
            yield ChartRBAC(cluster, view, operator_ns, directory)
        finally:
            for obj in objects:
                if "namespace" not in obj["metadata"]:
                    cluster.kubectl(
                        "delete", obj["kind"].lower(), obj["metadata"]["name"], check=False
                    )


@pytest.fixture(scope="module")
def platform_operator(chart_rbac: ChartRBAC) -> Iterator[int]:
    """One operator under the chart's RBAC for every platform-* namespace; its metrics port."""
    process, metrics_port = chart_rbac.start("operator.log", (f"{PREFIX}-*",))
    yield metrics_port
    stop_operator(process)
    log = (chart_rbac.directory / "operator.log").read_text(encoding="utf-8", errors="replace")
    # The chart's RBAC was enough for everything. An Event refused because its namespace was
    # being deleted (a test's namespace going away under a running operator) is a 403 too,
    # but not one of permissions.
    refused = [
        line
        for line in log.splitlines()
        if "Forbidden" in line and "NamespaceTerminating" not in line
    ]
    assert not refused, "\n".join(refused[-5:])


@pytest.fixture
def engines(cluster: Cluster, platform_operator: int) -> Iterator[str]:
    with namespace(cluster, prefix=PREFIX) as name:
        yield name


def reconciled(namespace: str, name: str) -> dict[str, Any]:
    return wait_for(
        lambda: (
            (e := get_engine(namespace, name))
            and (e.get("status") or {}).get("observedGeneration")
            and e
        ),
        timeout=SETUP,
        what=f"{name} reconciled",
    )


def timed(predicate: Callable[[], Any], what: str) -> float:
    """Seconds until ``predicate`` holds (polled every 0.2 s; generous timeout, so that a
    slow repair fails on the bound, with its measured time, not on the wait)."""
    started = time.monotonic()
    wait_for(predicate, timeout=SETUP, what=what)
    elapsed = time.monotonic() - started
    print(f"{what}: {elapsed:.2f} s")
    return elapsed


def events(namespace: str, engine: dict[str, Any], reason: str) -> list[Any]:
    """The engine's Events with this reason, oldest first."""
    found = client.CoreV1Api().list_namespaced_event(
        namespace, field_selector=f"involvedObject.uid={engine['metadata']['uid']}"
    )
    return sorted(
        (e for e in found.items if e.reason == reason),
        key=lambda e: (e.metadata.creation_timestamp, e.metadata.name),
    )


def _missing(read: Callable[[], Any]) -> bool:
    try:
        read()
    except ApiException as exc:
        if exc.status == 404:
            return True
        raise
    return False


def test_deleted_service_and_hand_edits_of_deployment_and_service_are_repaired_within_5_s(
    engines: str,
) -> None:
    apps, core = client.AppsV1Api(), client.CoreV1Api()
    create_engine(engines, "drift", {"guardrails": {"enabled": True}})
    reconciled(engines, "drift")
    deployment = lambda: apps.read_namespaced_deployment("drift", engines)  # noqa: E731
    service = lambda: core.read_namespaced_service("drift", engines)  # noqa: E731
    wait_for(deployment, timeout=SETUP, what="the Deployment")
    old_uid = wait_for(service, timeout=SETUP, what="the Service").metadata.uid

    core.delete_namespaced_service("drift", engines, _preload_content=False)  # a Status body
    took = timed(lambda: (s := service()) and s.metadata.uid != old_uid, "deleted Service back")
    assert took <= REPAIR_BOUND

    def container() -> Any:
        return deployment().spec.template.spec.containers[0]

    apps.patch_namespaced_deployment(
        "drift",
        engines,
        {
            "spec": {
                "template": {"spec": {"containers": [{"name": "runtime", "image": "evil/img"}]}}
            }
        },
    )
    assert container().image == "evil/img"
    took = timed(lambda: container().image == IMAGE, "hand-changed image put back")
    assert took <= REPAIR_BOUND

    guardrails = "OUTPUT_GUARDRAILS_ENABLED"
    apps.patch_namespaced_deployment(
        "drift",
        engines,
        {
            "spec": {
                "template": {
                    "spec": {
                        "containers": [
                            {"name": "runtime", "env": [{"name": guardrails, "value": "false"}]}
                        ]
                    }
                }
            }
        },
    )
    env = lambda: {e.name: e.value for e in container().env}  # noqa: E731
    took = timed(lambda: env()[guardrails] == "true", "hand-changed env put back")
    assert took <= REPAIR_BOUND

    # Scaling the Deployment itself is drift: an engine scales through its own scale
    # subresource (tests/cluster/test_operator_scale.py), which changes its spec.
    apps.patch_namespaced_deployment_scale("drift", engines, {"spec": {"replicas": 3}})
    took = timed(lambda: deployment().spec.replicas == 1, "hand-scaled Deployment put back")
    assert took <= REPAIR_BOUND

    core.patch_namespaced_service(
        "drift",
        engines,
        {"spec": {"ports": [{"port": manifests.RUNTIME_PORT, "targetPort": 9999}]}},
    )
    took = timed(
        lambda: service().spec.ports[0].target_port == "http", "hand-changed Service port back"
    )
    assert took <= REPAIR_BOUND

    engine = get_engine(engines, "drift")
    repaired = wait_for(
        lambda: len(found := events(engines, engine, "DriftRepaired")) >= 5 and found,
        timeout=EVENT_BOUND,
        what="a DriftRepaired Event per repair",
    )
    said = " | ".join(e.message for e in repaired)
    assert "Service drift was deleted" in said
    assert "'evil/img' (want 'sentinel:test')" in said and "replicas: 3 (want 1)" in said
    assert all(e.type == "Normal" for e in repaired)
    # Status tells the truth once repaired: the Service is there and says so.
    assert condition(get_engine(engines, "drift"), "ServiceReady")["status"] == "True"


def test_a_broken_policy_posts_one_warning_within_10_s_and_its_fix_a_normal_event(
    engines: str, platform_operator: int
) -> None:
    core = client.CoreV1Api()
    core.create_namespaced_config_map(
        engines, {"metadata": {"name": "team-policy"}, "data": {"guardrails.yaml": DEFAULT_POLICY}}
    )
    create_engine(
        engines,
        "guarded",
        {"guardrails": {"enabled": True, "configMapRef": {"name": "team-policy"}}},
    )
    engine = wait_for(
        lambda: (
            (e := get_engine(engines, "guarded"))
            and (condition(e, "PolicyReady") or {}).get("reason") == "PolicyValid"
            and e
        ),
        timeout=SETUP,
        what="a valid policy first",
    )

    core.patch_namespaced_config_map(
        "team-policy", engines, {"data": {"guardrails.yaml": "scanners: [\n"}}
    )
    took = timed(
        lambda: events(engines, engine, "PolicyInvalid"), "a Warning Event for the broken policy"
    )
    assert took <= EVENT_BOUND
    [warning] = events(engines, engine, "PolicyInvalid")
    assert warning.type == "Warning" and "guardrails.yaml" in warning.message
    ready = condition(get_engine(engines, "guarded"), "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "PolicyInvalid")

    # Another pass over the same broken policy (an unrelated edit of the ConfigMap) says
    # nothing new: one Event per change of condition, not one per pass.
    handled = _policy_events(platform_operator)
    core.patch_namespaced_config_map(
        "team-policy", engines, {"metadata": {"labels": {"touched": "yes"}}}
    )
    wait_for(
        lambda: _policy_events(platform_operator) > handled,
        timeout=SETUP,
        what="the operator to see the unrelated edit",
    )
    time.sleep(1.0)  # Events are posted from a queue: leave a duplicate time to show up
    assert len(events(engines, engine, "PolicyInvalid")) == 1

    core.patch_namespaced_config_map(
        "team-policy", engines, {"data": {"guardrails.yaml": DEFAULT_POLICY}}
    )
    took = timed(
        lambda: [e for e in events(engines, engine, "PolicyValid") if e.type == "Normal"],
        "a Normal Event for the fixed policy",
    )
    assert took <= EVENT_BOUND
    [fixed] = events(engines, engine, "PolicyValid")
    assert "was PolicyInvalid" in fixed.message


def _policy_events(metrics_port: int) -> float:
    text = httpx.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5).text
    return sample(text, "sentinel_operator_policy_events_total")


def test_a_deleted_policy_copy_is_made_again_and_says_so(engines: str) -> None:
    core = client.CoreV1Api()
    create_engine(engines, "copied", {"guardrails": {"enabled": True}})
    engine = reconciled(engines, "copied")
    wait_for(
        lambda: events(engines, engine, "PolicyCopied"), timeout=EVENT_BOUND, what="first copy"
    )
    core.delete_namespaced_config_map(manifests.POLICY_TEMPLATE, engines)
    took = timed(
        lambda: core.read_namespaced_config_map(manifests.POLICY_TEMPLATE, engines),
        "the policy copy made again",
    )
    assert took <= REPAIR_BOUND
    wait_for(
        lambda: len(events(engines, engine, "PolicyCopied")) == 2,
        timeout=EVENT_BOUND,
        what="a PolicyCopied Event for the second copy",
    )
    assert condition(get_engine(engines, "copied"), "PolicyReady")["status"] == "True"


def test_a_missing_access_secret_shows_in_status_until_it_exists(
    engines: str, chart_rbac: ChartRBAC
) -> None:
    spec = {"inferenceService": {"url": "http://vllm:8000/v1", "accessSecret": "llm-key"}}
    create_engine(engines, "llm", spec)
    engine = wait_for(
        lambda: (
            (e := get_engine(engines, "llm"))
            and (condition(e, "SecretsReady") or {}).get("reason") == "AccessSecretMissing"
            and e
        ),
        timeout=SETUP,
        what="SecretsReady naming the missing Secret",
    )
    secrets = condition(engine, "SecretsReady")
    assert secrets["status"] == "False"
    assert "inferenceService.accessSecret: Secret llm-key" in secrets["message"]
    ready = condition(engine, "Ready")
    # Not ReplicasNotReady: the cause, not its symptom (the printer column shows this reason).
    assert (ready["status"], ready["reason"]) == ("False", "AccessSecretMissing")
    [warning] = wait_for(
        lambda: events(engines, engine, "AccessSecretMissing"),
        timeout=EVENT_BOUND,
        what="a Warning Event",
    )
    assert warning.type == "Warning" and "llm-key" in warning.message

    value = f"sk-{uuid.uuid4().hex}"
    client.CoreV1Api().create_namespaced_secret(
        engines, {"metadata": {"name": "llm-key"}, "stringData": {"LLM_ACCESS_SECRET": value}}
    )
    # No watch on Secrets (the operator may only get one by name): the periodic re-check of
    # engines waiting on one (RESYNC_SECONDS=2 here) finds it.
    engine = wait_for(
        lambda: (
            (e := get_engine(engines, "llm"))
            and condition(e, "SecretsReady")["status"] == "True"
            and e
        ),
        timeout=SETUP,
        what="SecretsReady True once the Secret exists",
    )
    assert condition(engine, "Ready")["reason"] == "ReplicasNotReady"  # no kubelet here
    wait_for(
        lambda: events(engines, engine, "SecretsFound"), timeout=EVENT_BOUND, what="Normal Event"
    )
    # Existence only, by a metadata-only GET: the value never reached the operator.
    log = (chart_rbac.directory / "operator.log").read_text(encoding="utf-8", errors="replace")
    assert value not in log


def test_engines_carry_no_finalizer_and_delete_at_once_while_no_operator_runs(
    cluster: Cluster, chart_rbac: ChartRBAC
) -> None:
    api = client.CustomObjectsApi()
    with namespace(cluster, prefix="orphan") as engines:
        # One as an older operator (with its resync timer) left it: kopf's finalizer on it.
        api.create_namespaced_custom_object(
            crd.GROUP, crd.VERSION, engines, crd.PLURAL,
            {
                "apiVersion": f"{crd.GROUP}/{crd.VERSION}",
                "kind": crd.KIND,
                "metadata": {"name": "legacy", "finalizers": [KOPF_FINALIZER]},
                "spec": {"guardrails": {"enabled": True}},
            },
        )  # fmt: skip
        process, _ = chart_rbac.start("orphan-operator.log", (engines,))
        try:
            create_engine(engines, "fresh", {"guardrails": {"enabled": True}})
            for name in ("legacy", "fresh"):
                reconciled(engines, name)
                wait_for(
                    lambda name=name: not get_engine(engines, name)["metadata"].get("finalizers"),
                    timeout=SETUP,
                    what=f"{name} without finalizers",
                )
            # A few passes later (owned objects' events, status writes) still none.
            time.sleep(3)
            for name in ("legacy", "fresh"):
                assert not get_engine(engines, name)["metadata"].get("finalizers")
        finally:
            stop_operator(process)

        # As after `helm uninstall`: no operator. kubectl waits for the deletion itself (its
        # discovery cache may predate the CRD: `api-resources` refreshes it).
        wait_for(
            lambda: (
                crd.PLURAL in cluster.kubectl("api-resources", f"--api-group={crd.GROUP}").stdout
            ),
            what="RAGEngines in kubectl's discovery",
        )
        started = time.monotonic()
        cluster.kubectl("delete", "ragengines", "legacy", "fresh", "-n", engines, "--timeout=30s")
        took = time.monotonic() - started
        print(f"kubectl delete of two engines without an operator: {took:.2f} s")
        assert took <= REPAIR_BOUND
        for name in ("legacy", "fresh"):
            assert _missing(lambda name=name: get_engine(engines, name))
