"""The rendered chart against Kubernetes' own schemas (kubernetes-validate --strict, offline),
and the security and RBAC properties the operator's pod and role must keep."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes_validate.utils import latest_version

from support.chart import (
    ALL_FEATURES,
    CHART,
    NAMESPACED_PEERING,
    find,
    operator_container,
    render,
    values_file,
)
from support.tools import run

# The oldest Kubernetes still commonly run (and the first with Pod Security admission GA)
# and the newest the validator ships schemas for.
KUBERNETES_VERSIONS = ("1.25.0", latest_version())
# Custom resources the validator has no schema for; checked by structure below and in
# test_chart_render.py (their content).
CUSTOM_KINDS = {"ServiceMonitor", "PrometheusRule", "ClusterKopfPeering", "KopfPeering"}
VARIANTS = {
    "defaults": None,
    "all-features": ALL_FEATURES,
    "namespaced-peering": NAMESPACED_PEERING,
}
RESULT = re.compile(r"^(INFO|WARN|ERROR|FATAL) .*?(passed for resource (\S+)|$)", re.M)


def _render(variant: str, directory: Path) -> list[dict[str, Any]]:
    values = VARIANTS[variant]
    args = [] if values is None else ["--values", str(values_file(directory, values))]
    return render("--include-crds", *args)


def validate(objects: list[dict[str, Any]], version: str, directory: Path) -> tuple[int, str]:
    """kubernetes-validate --strict on the objects; (exit status, output)."""
    path = directory / f"objects-{version}.yaml"
    path.write_text(yaml.safe_dump_all(objects), encoding="utf-8")
    result = run("kubernetes-validate", "--strict", "-k", version, str(path), check=False)
    return result.returncode, result.stdout + result.stderr


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_built_in_kinds_validate_strictly(variant: str, version: str, tmp_path: Path) -> None:
    objects = _render(variant, tmp_path)
    built_in = [o for o in objects if o["kind"] not in CUSTOM_KINDS]
    status, output = validate(built_in, version, tmp_path)
    assert status == 0, output
    passed = [line for line in output.splitlines() if " passed for resource " in line]
    # Every object was checked against a schema: none skipped with "Couldn't find schema".
    assert len(passed) == len(built_in), output
    assert "CustomResourceDefinition" in {o["kind"] for o in built_in}


def test_the_validator_rejects_what_the_apiserver_would(tmp_path: Path) -> None:
    deployment = find(render(), "Deployment")
    deployment["spec"]["template"]["spec"]["containers"][0]["securityContxt"] = {}
    status, output = validate([deployment], KUBERNETES_VERSIONS[0], tmp_path)
    assert status != 0 and "securityContxt" in output, output


@pytest.mark.parametrize("variant", ["all-features", "namespaced-peering"])
def test_custom_resources_have_their_required_structure(variant: str, tmp_path: Path) -> None:
    objects = _render(variant, tmp_path)
    custom = [o for o in objects if o["kind"] in CUSTOM_KINDS]
    assert custom
    crds = {
        (o["spec"]["group"], o["spec"]["names"]["kind"]): o
        for o in objects
        if o["kind"] == "CustomResourceDefinition"
    }
    for obj in custom:
        group, version = obj["apiVersion"].split("/")
        assert re.fullmatch(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?", obj["metadata"]["name"])
        if group == "monitoring.coreos.com":
            assert version == "v1"
            assert obj["metadata"]["namespace"]
            spec = obj["spec"]
            if obj["kind"] == "ServiceMonitor":
                assert spec["selector"]["matchLabels"] and spec["endpoints"]
                for endpoint in spec["endpoints"]:
                    assert set(endpoint) <= {"port", "path", "interval"} and endpoint["port"]
            else:
                assert set(spec) == {"groups"} and isinstance(spec["groups"], list)
        else:  # kopf's peering objects: their CRDs ship in the chart, with the scope they need
            definition = crds[(group, obj["kind"])]
            scope = definition["spec"]["scope"]
            assert ("namespace" in obj["metadata"]) == (scope == "Namespaced"), obj
            assert [v["name"] for v in definition["spec"]["versions"]] == [version]


# ---- security of the operator pod -----------------------------------------------------------


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_operator_pod_is_locked_down(variant: str, tmp_path: Path) -> None:
    objects = _render(variant, tmp_path)
    pod = find(objects, "Deployment")["spec"]["template"]["spec"]
    container = operator_container(objects)
    pod_context, context = pod["securityContext"], container["securityContext"]
    assert pod_context["runAsNonRoot"] is True and pod_context["runAsUser"] == 10001
    assert pod_context["seccompProfile"] == {"type": "RuntimeDefault"}
    assert context["runAsNonRoot"] is True and context["runAsUser"] == 10001
    assert context["readOnlyRootFilesystem"] is True
    assert context["allowPrivilegeEscalation"] is False
    assert context.get("privileged", False) is False
    assert context["capabilities"] == {"drop": ["ALL"]}
    assert "add" not in context["capabilities"]
    assert not pod.get("hostNetwork") and not pod.get("hostPID") and not pod.get("hostIPC")
    resources = container["resources"]
    assert resources["requests"]["cpu"] and resources["requests"]["memory"]
    assert resources["limits"]["memory"]
    # The only writable path is a size-limited emptyDir.
    volumes = {v["name"]: v for v in pod["volumes"]}
    for mount in container["volumeMounts"]:
        assert set(volumes[mount["name"]]) == {"name", "emptyDir"}
        assert volumes[mount["name"]]["emptyDir"]["sizeLimit"]


def test_values_cannot_weaken_the_security_context() -> None:
    """The securityContext is not a value: an attempt to set one is refused by the schema."""
    result = run(
        "helm", "template", "s", str(CHART), "--set", "securityContext.privileged=true",
        check=False,
    )  # fmt: skip
    assert result.returncode != 0 and "securityContext" in result.stderr


# ---- RBAC ------------------------------------------------------------------------------------

# What the operator needs and nothing more, where it serves engines: it reads and writes
# RAGEngines and their status, owns Deployments and Services, creates (never updates or
# deletes) the namespace copy of the policy template, reads ConfigMaps to judge policies, posts
# Events, and reads a Secret by name (never list or watch) to report a missing accessSecret.
NAMESPACED_RULES = [
    {
        "apiGroups": ["rag.sentinel.dev"],
        "resources": ["ragengines"],
        "verbs": ["get", "list", "watch", "patch"],
    },
    {
        "apiGroups": ["rag.sentinel.dev"],
        "resources": ["ragengines/status"],
        "verbs": ["get", "update", "patch"],
    },
    {
        "apiGroups": ["apps"],
        "resources": ["deployments"],
        "verbs": ["get", "list", "watch", "create", "patch"],
    },
    {
        "apiGroups": [""],
        "resources": ["services"],
        # delete: a renamed queryServiceName/indexServiceName leaves a Service the engine owns
        # and no longer wants; the operator deletes only Services it owns (reconcile.py).
        "verbs": ["get", "list", "watch", "create", "patch", "delete"],
    },
    {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch", "create"]},
    {"apiGroups": ["", "events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch"]},
    {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]},
]
# kopf discovers CRDs and namespaces: the only cluster-scoped rights of a namespaced operator.
CLUSTER_READS = [
    {
        "apiGroups": ["apiextensions.k8s.io"],
        "resources": ["customresourcedefinitions"],
        "verbs": ["get", "list", "watch"],
    },
    {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "list", "watch"]},
]
READ_VERBS = {"get", "list", "watch"}
TEMPLATE_READ = {
    "apiGroups": [""],
    "resources": ["configmaps"],
    "resourceNames": ["sentinel-guardrails-policy-template"],
    "verbs": ["get"],
}


def _rules(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [rule for o in objects if o["kind"] in ("ClusterRole", "Role") for rule in o["rules"]]


def _of_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def test_cluster_wide_operator_has_one_cluster_role_with_exactly_what_it_needs() -> None:
    objects = render()
    assert find(objects, "ClusterRole")["rules"] == NAMESPACED_RULES + CLUSTER_READS
    assert not _of_kind(objects, "Role") and not _of_kind(objects, "RoleBinding")


@pytest.mark.parametrize("release_namespace", ["sentinel-system", "team-b"])
def test_with_watch_namespaces_every_write_is_a_role_in_a_watched_namespace(
    release_namespace: str,
) -> None:
    objects = render("--set", "watchNamespaces={team-a,team-b}", namespace=release_namespace)
    cluster_role = find(objects, "ClusterRole")
    assert cluster_role["rules"] == CLUSTER_READS
    binding = find(objects, "ClusterRoleBinding")
    assert binding["roleRef"]["name"] == cluster_role["metadata"]["name"]
    account = {"kind": "ServiceAccount", "name": "sentinel-operator"}
    account["namespace"] = release_namespace
    roles = {
        (o["metadata"]["namespace"], o["metadata"]["name"]): o for o in _of_kind(objects, "Role")
    }
    bindings = {
        (o["metadata"]["namespace"], o["metadata"]["name"]): o
        for o in _of_kind(objects, "RoleBinding")
    }
    expected = {("team-a", "sentinel-operator"), ("team-b", "sentinel-operator")}
    if release_namespace not in ("team-a", "team-b"):
        # Its own namespace, not served: only the policy template it copies, by name.
        expected.add((release_namespace, "sentinel-operator-template"))
        assert roles[(release_namespace, "sentinel-operator-template")]["rules"] == [TEMPLATE_READ]
    assert set(roles) == set(bindings) == expected
    for key, binding in bindings.items():
        assert binding["roleRef"] == {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "Role",
            "name": key[1],
        }
        assert binding["subjects"] == [account]
    for namespace in ("team-a", "team-b"):
        assert roles[(namespace, "sentinel-operator")]["rules"] == NAMESPACED_RULES


@pytest.mark.parametrize("variant", ["namespaced-peering", "watch-namespaces"])
def test_with_watch_namespaces_no_cluster_role_writes(variant: str, tmp_path: Path) -> None:
    values = NAMESPACED_PEERING if variant == "namespaced-peering" else {"watchNamespaces": ["a"]}
    objects = render("--values", str(values_file(tmp_path, values)))
    for role in _of_kind(objects, "ClusterRole"):
        for rule in role["rules"]:
            assert set(rule["verbs"]) <= READ_VERBS, rule


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_rbac_has_no_wildcards_no_secret_listing_and_no_destructive_verbs(
    variant: str, tmp_path: Path
) -> None:
    rules = _rules(_render(variant, tmp_path))
    assert rules
    for rule in rules:
        for field in ("apiGroups", "resources", "verbs"):
            assert "*" not in rule[field], rule
            assert not any("*" in item for item in rule[field]), rule
        if "secrets" in rule["resources"]:
            # One Secret by name (the operator reports a missing accessSecret): never list
            # or watch, which would stream every Secret's content.
            assert rule["resources"] == ["secrets"] and rule["verbs"] == ["get"], rule
        destructive = {"delete", "deletecollection", "escalate", "bind", "impersonate"}
        if rule["resources"] == ["services"]:
            destructive.discard("delete")  # the engine's own renamed Services only
        assert not destructive & set(rule["verbs"]), rule
        assert "nonResourceURLs" not in rule, rule
        assert "resourceNames" not in rule or rule == TEMPLATE_READ, rule
    # ConfigMaps: never updated or patched, so a namespace's policy copy is never overwritten.
    for rule in rules:
        if "configmaps" in rule["resources"]:
            assert not {"update", "patch"} & set(rule["verbs"])
