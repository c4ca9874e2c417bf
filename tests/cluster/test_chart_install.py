"""The Helm chart on the local control plane, with docs/kubernetes.md's plain commands:
`helm install`, the operator running under the chart's own ServiceAccount and RBAC (and nothing
more), the samples against the installed CRD, `helm upgrade` to peered replicas, `helm uninstall`,
and a RAGEngine deleted at once afterwards.

There is no kubelet, so the chart's Deployment never runs a pod: the operator runs here as a
process with the args and env read back from the installed Deployment, authenticated with a
token of the chart's ServiceAccount.

The test server is 1.20, which predates CRD validation rules (CEL, 1.25+): its server-side
apply refuses a CRD carrying `x-kubernetes-validations` ("field not declared in schema"), and
so does kubectl's client-side validation. The chart renders the RAGEngine CRD without them for
such servers (tests/chart/test_chart_crds.py checks both renderings), so helm's default
server-side apply works here as on newer servers.
"""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from kubernetes import client
from prometheus_client.parser import text_string_to_metric_families

from sentinel_operator import crd, manifests
from support.chart import CHART, ROOT, SAMPLES, documents, sample
from support.cluster import Cluster, namespace
from support.operator_fixtures import (
    as_service_account,
    condition,
    get_engine,
    start_operator,
    stop_operator,
    wait_for,
)
from support.tools import run

pytestmark = pytest.mark.cluster

RELEASE = "sentinel"
OPERATOR = f"{RELEASE}-operator"  # Deployment, ServiceAccount, ClusterRole, Service
CRDS = ("ragengines.rag.sentinel.dev", "clusterkopfpeerings.kopf.dev", "kopfpeerings.kopf.dev")
CHART_POLICY = (CHART / "files" / "guardrails.yaml").read_text(encoding="utf-8")


@dataclass
class Release:
    cluster: Cluster
    namespace: str  # the release's (the operator's) namespace
    engines: str  # the one namespace the operator watches
    directory: Path
    owns_crd: bool = False  # the release created the RAGEngine CRD (none was there before)

    def helm(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return run(
            "helm", *args, "--namespace", self.namespace,
            "--kubeconfig", str(self.cluster.kubeconfig), check=check,
        )  # fmt: skip

    def deployment(self) -> dict[str, Any]:
        found = self.cluster.get("deployment", OPERATOR, "-n", self.namespace)
        assert found is not None, "the chart's operator Deployment is missing"
        return found


@pytest.fixture(scope="module")
def release(cluster: Cluster, kube, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Release]:
    """The chart installed in a namespace of its own, watching one engines namespace (outside
    the shared test operator's sentinel-test-* glob, so no other operator serves it)."""
    suffix = uuid.uuid4().hex[:8]
    with namespace(cluster, prefix="chart-engines") as engines:
        installed = Release(
            cluster, f"chart-{suffix}", engines, tmp_path_factory.mktemp("chart-install")
        )
        crd_was_there = cluster.get("crd", CRDS[0]) is not None
        # docs/kubernetes.md's command. A CRD another test (or release) installed before stays
        # theirs,
        # as docs/kubernetes.md says for a second release: crd.create=false.
        shared_crd = ["--set", "crd.create=false"] if crd_was_there else []
        installed.helm(
            "install", RELEASE, str(CHART), "--create-namespace",
            "--set", f"watchNamespaces={{{engines}}}", "--set", "resyncSeconds=5", *shared_crd,
        )  # fmt: skip
        installed.owns_crd = not crd_was_there
        if not crd_was_there:
            # As operator_fixtures.install does: the 1.20 garbage collector notices a new
            # resource type only every 30 s.
            cluster.restart_controller_manager()
        try:
            yield installed
        finally:
            installed.helm("uninstall", RELEASE, check=False)
            cluster.kubectl("delete", "namespace", installed.namespace, "--wait=false", check=False)


def operator_invocation(deployment: dict[str, Any], pod: str) -> tuple[list[str], dict[str, str]]:
    """The container's args (after `operator`, without the ports the local process replaces)
    and its env, downward-API fields resolved as the kubelet would for a pod named ``pod``."""
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    args = list(container["args"])
    assert args[0] == "operator", args
    options, rest = [], iter(args[1:])
    for arg in rest:
        if arg in ("--metrics-port", "--health-port"):
            next(rest)
        else:
            options.append(arg)
    fields = {"metadata.namespace": deployment["metadata"]["namespace"], "metadata.name": pod}
    env = {}
    for item in container["env"]:
        if "value" in item:
            env[item["name"]] = item["value"]
        else:
            env[item["name"]] = fields[item["valueFrom"]["fieldRef"]["fieldPath"]]
    return options, env


def reconciles(metrics_port: int) -> float:
    text = httpx.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5).text
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        if family.name == "sentinel_operator_reconciles"
        for sample in family.samples
        if sample.name.endswith("_total")
    )


def policy_ready(namespace: str, name: str) -> bool:
    found = condition(get_engine(namespace, name), "PolicyReady")
    return found is not None and found["status"] == "True"


def assert_no_forbidden(log: Path) -> None:
    text = log.read_text(encoding="utf-8", errors="replace")
    assert "403" not in text and "Forbidden" not in text, text[-3000:]


def test_install_creates_the_operator_its_rbac_and_the_policy_template(release: Release) -> None:
    cluster = release.cluster
    status = release.helm("status", RELEASE, "-o", "json").stdout
    assert yaml.safe_load(status)["info"]["status"] == "deployed"
    for name in CRDS:
        assert cluster.get("crd", name) is not None, name
    for kind in ("deployment", "serviceaccount", "service"):
        assert cluster.get(kind, OPERATOR, "-n", release.namespace) is not None, kind
    for kind in ("clusterrole", "clusterrolebinding"):
        assert cluster.get(kind, OPERATOR) is not None, kind
    template = cluster.get("configmap", manifests.POLICY_TEMPLATE, "-n", release.namespace)
    assert template is not None and template["data"] == {manifests.POLICY_FILE: CHART_POLICY}
    # The controllers act on the Deployment even without a kubelet.
    wait_for(
        lambda: cluster.get("replicasets", "-n", release.namespace)["items"],
        what="the operator Deployment's ReplicaSet",
    )
    # No peering without replicas: neither objects nor rules.
    assert cluster.get("kopfpeering", "-n", release.engines, "sentinel") is None
    rules = cluster.get("clusterrole", OPERATOR)["rules"]
    assert not [r for r in rules if "kopf.dev" in r["apiGroups"]]
    # With watchNamespaces, the ClusterRole only reads; the writes are a Role in the watched
    # namespace (tests/cluster/test_chart_rbac.py asks the API server what that allows).
    assert all(set(r["verbs"]) <= {"get", "list", "watch"} for r in rules), rules
    assert cluster.get("role", OPERATOR, "-n", release.engines) is not None


def test_the_ragengine_crd_fits_the_server(release: Release) -> None:
    """1.20: no CEL rules (the operator checks them); the Reason column; kept by uninstall."""
    definition = release.cluster.get("crd", CRDS[0])
    assert "x-kubernetes-validations" not in json.dumps(definition)
    version = definition["spec"]["versions"][0]
    columns = [c["name"] for c in version["additionalPrinterColumns"]]
    assert columns == ["Ready", "Reason", "Policy", "Endpoint", "Age"]
    assert definition["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
    if release.owns_crd:
        annotations = definition["metadata"]["annotations"]
        assert annotations["meta.helm.sh/release-name"] == RELEASE
        assert annotations["meta.helm.sh/release-namespace"] == release.namespace


def test_the_portable_crds_apply_on_the_server(release: Release) -> None:
    """`kubectl apply -f crds/` (installing without Helm) passes kubectl's and the server's
    validation on 1.20; a dry run, so the release keeps the CRD it manages."""
    result = release.cluster.kubectl("apply", "--dry-run=server", "-f", str(ROOT / "crds"))
    for name in CRDS:
        assert f"customresourcedefinition.apiextensions.k8s.io/{name}" in result.stdout


def test_operator_reconciles_the_minimal_sample_with_only_the_charts_rbac(
    release: Release, tmp_path: Path
) -> None:
    cluster = release.cluster
    operator_view, token = as_service_account(cluster, release.namespace, OPERATOR, tmp_path)
    options, env = operator_invocation(release.deployment(), f"{OPERATOR}-0")
    assert options == ["--namespace", release.engines]
    assert env["OPERATOR_NAMESPACE"] == release.namespace and env["RESYNC_SECONDS"] == "5"
    log = tmp_path / "operator.log"
    process, metrics_port = start_operator(operator_view, log, args=options, env=env)
    try:
        cluster.kubectl(
            "apply", "-n", release.engines, "-f", str(SAMPLES / "ragengine-minimal.yaml")
        )
        name = sample("ragengine-minimal.yaml")[0]["metadata"]["name"]
        wait_for(lambda: policy_ready(release.engines, name), what="PolicyReady under chart RBAC")
        apps, core = client.AppsV1Api(), client.CoreV1Api()
        wait_for(
            lambda: apps.read_namespaced_deployment(name, release.engines),
            what="the engine's Deployment",
        )
        wait_for(
            lambda: core.read_namespaced_service(name, release.engines),
            what="the engine's Service",
        )
        copied = core.read_namespaced_config_map(manifests.POLICY_TEMPLATE, release.engines)
        assert copied.data == {manifests.POLICY_FILE: CHART_POLICY}
        assert not copied.metadata.owner_references
        engine = get_engine(release.engines, name)
        assert engine["status"]["policy"]["configMap"] == manifests.POLICY_TEMPLATE
        assert reconciles(metrics_port) >= 1
        assert process.poll() is None
    finally:
        stop_operator(process)
    assert_no_forbidden(log)

    # The Reason column says why an engine is (not) ready.
    table = cluster.kubectl("get", "rag", "-n", release.engines).stdout
    assert table.split()[:6] == ["NAME", "READY", "REASON", "POLICY", "ENDPOINT", "AGE"], table

    # No more than it needs: it may not delete ConfigMaps nor list Secrets (one by name only).
    for verb, resource in (
        ("delete", f"configmap/{manifests.POLICY_TEMPLATE}"),
        ("get", "secrets"),
        ("delete", f"deployment/{name}"),
    ):
        result = cluster.kubectl(verb, resource, "-n", release.engines, token=token, check=False)
        assert result.returncode != 0 and "forbidden" in result.stderr.lower(), result.stderr
    for verb, resource in (("update", "configmaps"), ("list", "secrets"), ("create", "pods")):
        answer = cluster.kubectl(
            "auth", "can-i", verb, resource, "-n", release.engines, token=token, check=False
        )
        assert answer.stdout.strip() == "no", (verb, resource)
    allowed = cluster.kubectl(
        "auth", "can-i", "patch", "ragengines.rag.sentinel.dev/status", "-n", release.engines,
        token=token, check=False,
    )  # fmt: skip
    assert allowed.stdout.strip() == "yes"


# KAITO's CRDs are not installed on the test control plane, so a sample's KAITO objects (the
# guard sample's Workspace) stay out of the server's dry run; tests/chart/test_samples.py
# checks the fields they need.
KAITO_API = "kaito.sh/"


@pytest.mark.parametrize("name", sorted(p.name for p in SAMPLES.glob("*.yaml")))
def test_samples_pass_server_side_validation(release: Release, name: str) -> None:
    objects = sample(name)
    known = [o for o in objects if not o["apiVersion"].startswith(KAITO_API)]
    whole = len(known) == len(objects)  # then the file as written
    result = release.cluster.kubectl(
        "apply", "--dry-run=server", "-n", release.engines,
        "-f", str(SAMPLES / name) if whole else "-",
        input=None if whole else yaml.safe_dump_all(known),
    )  # fmt: skip
    assert "(server dry run)" in result.stdout
    for engine in (o for o in sample(name) if o["kind"] == crd.KIND):
        assert f"ragengine.rag.sentinel.dev/{engine['metadata']['name']}" in result.stdout


def test_server_rejects_a_broken_sample(release: Release) -> None:
    [engine] = sample("ragengine-minimal.yaml")
    engine["spec"]["serviceType"] = "Ingress"
    result = release.cluster.kubectl(
        "apply", "--dry-run=server", "--validate=false", "-n", release.engines, "-f", "-",
        input=yaml.safe_dump(engine), check=False,
    )  # fmt: skip
    assert result.returncode != 0 and "serviceType" in result.stderr, result.stderr


def test_upgrade_to_two_peered_replicas_one_serves_the_other_stands_by(
    release: Release, tmp_path: Path
) -> None:
    cluster = release.cluster
    # docs/kubernetes.md's upgrade: the new chart's defaults, the release's own values, one change.
    release.helm(
        "upgrade", RELEASE, str(CHART), "--reset-then-reuse-values", "--set", "replicaCount=2"
    )
    deployment = release.deployment()
    assert deployment["spec"]["replicas"] == 2
    assert deployment["spec"]["strategy"]["type"] == "RollingUpdate"
    peering_name = yaml.safe_load((CHART / "values.yaml").read_text())["peering"]["name"]
    assert cluster.get("kopfpeering", peering_name, "-n", release.engines) is not None

    operator_view, _ = as_service_account(cluster, release.namespace, OPERATOR, tmp_path)
    started: dict[str, tuple[subprocess.Popen, int, Path]] = {}
    try:
        for pod in ("replica-a", "replica-b"):
            options, env = operator_invocation(deployment, pod)
            assert options[-2:] == ["--peering-name", peering_name]
            log = tmp_path / f"{pod}.log"
            process, metrics_port = start_operator(operator_view, log, args=options, env=env)
            started[pod] = (process, metrics_port, log)

        def peers() -> dict[str, Any]:
            found = cluster.get("kopfpeering", peering_name, "-n", release.engines) or {}
            status = found.get("status") or {}
            return status if set(status) >= set(started) else {}

        status = wait_for(peers, what="both replicas in the KopfPeering")
        # Each replica has seen the other's record by now, or sees it within the watch's
        # latency; the lower one pauses then.
        time.sleep(1.0)
        priorities = {pod: status[pod]["priority"] for pod in started}
        assert len(set(priorities.values())) == 2, priorities  # a tie would pause both
        active, standby = sorted(started, key=priorities.__getitem__, reverse=True)
        before = {pod: reconciles(started[pod][1]) for pod in started}

        def create(name: str) -> None:
            engine = {**sample("ragengine-minimal.yaml")[0], "metadata": {"name": name}}
            cluster.kubectl("apply", "-n", release.engines, "-f", "-", input=yaml.safe_dump(engine))
            wait_for(lambda: policy_ready(release.engines, name), what=f"{name} reconciled")

        create("served-by-the-active-replica")
        assert reconciles(started[active][1]) > before[active]
        assert reconciles(started[standby][1]) == before[standby], "the standby reconciled"

        # The active replica leaves (its peering record goes with it): the standby takes over.
        stop_operator(started[active][0])
        taken_over = reconciles(started[standby][1])
        create("served-after-the-handover")
        assert reconciles(started[standby][1]) > taken_over
    finally:
        for process, _, _ in started.values():
            stop_operator(process)
    for _, _, log in started.values():
        assert_no_forbidden(log)


def test_uninstall_removes_the_release_and_keeps_crds_engines_and_policy_copies(
    release: Release,
) -> None:
    cluster = release.cluster
    rendered = documents(release.helm("get", "manifest", RELEASE).stdout)
    assert rendered
    release.helm("uninstall", RELEASE)
    for obj in rendered:
        if obj["kind"] == "CustomResourceDefinition":
            continue  # kept (helm.sh/resource-policy), checked below
        scope = ["-n", obj["metadata"]["namespace"]] if "namespace" in obj["metadata"] else []
        kind = _qualified(obj)
        name = obj["metadata"]["name"]
        wait_for(
            lambda kind=kind, name=name, scope=scope: cluster.get(kind, name, *scope) is None,
            what=f"{kind}/{name} removed by helm uninstall",
        )
    # CRDs stay (Helm never deletes them), and with them the users' engines; the namespace
    # copies of the policy belong to their namespaces.
    for name in CRDS:
        assert cluster.get("crd", name) is not None, name
    assert cluster.get("ragengines", "-n", release.engines)["items"]
    assert cluster.get("configmap", manifests.POLICY_TEMPLATE, "-n", release.engines)
    assert release.helm("status", RELEASE, check=False).returncode != 0

    # With the operator gone, an engine is deleted at once: nothing (no kopf finalizer) waits
    # for an operator that will not come back.
    engines = cluster.get("ragengines", "-n", release.engines)["items"]
    held = {e["metadata"]["name"]: e["metadata"].get("finalizers") for e in engines}
    assert not any(held.values()), f"finalizers would block deletion: {held}"
    name = engines[0]["metadata"]["name"]
    started = time.monotonic()
    cluster.kubectl("delete", "rag", name, "-n", release.engines, "--timeout=20s")
    assert cluster.get("rag", name, "-n", release.engines) is None
    assert time.monotonic() - started < 20


def _qualified(obj: dict[str, Any]) -> str:
    """`kind.group` for kubectl, so that same-named kinds of different groups never mix."""
    group, _, _ = obj["apiVersion"].rpartition("/")
    return f"{obj['kind'].lower()}.{group}" if group else obj["kind"].lower()
