"""manifests/admission-policy/sentinel-operator.yaml: the ValidatingAdmissionPolicy example that
narrows what a cluster-wide operator may write. Kubernetes' own schemas check its structure
(1.30, where the v1 API is GA, and the newest the validator knows; the 1.20 test server has no
such API), and it must describe this chart: the operator's default ServiceAccount, the default
runtime image, every kind the operator's RBAC lets it create."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from kubernetes_validate.utils import latest_version

from sentinel_operator import manifests
from sentinel_operator.config import OperatorSettings
from support.chart import CHART, NAMESPACE, ROOT, documents, find, render
from support.tools import run

POLICY_FILE = ROOT / "manifests" / "admission-policy" / "sentinel-operator.yaml"
GROUP = "admissionregistration.k8s.io/v1"


@pytest.fixture(scope="module")
def objects() -> list[dict[str, Any]]:
    return documents(POLICY_FILE.read_text(encoding="utf-8"))


def policies(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == "ValidatingAdmissionPolicy"}


@pytest.mark.parametrize("version", ["1.30.0", latest_version()])
def test_validates_strictly_against_kubernetes_schemas(
    objects: list[dict[str, Any]], version: str
) -> None:
    result = run("kubernetes-validate", "--strict", "-k", version, str(POLICY_FILE), check=False)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    passed = [line for line in output.splitlines() if " passed for resource " in line]
    assert len(passed) == len(objects) == 6, output


def test_every_policy_is_bound_and_denies(objects: list[dict[str, Any]]) -> None:
    assert {o["apiVersion"] for o in objects} == {GROUP}
    bindings = {
        o["spec"]["policyName"]: o
        for o in objects
        if o["kind"] == "ValidatingAdmissionPolicyBinding"
    }
    assert set(bindings) == set(policies(objects))
    for binding in bindings.values():
        assert binding["spec"]["validationActions"] == ["Deny"]
        assert "paramRef" not in binding["spec"]
    for policy in policies(objects).values():
        spec = policy["spec"]
        assert spec["failurePolicy"] == "Fail"
        assert spec["validations"]
        for validation in spec["validations"]:
            assert validation["expression"].strip() and validation["message"].strip()


def test_it_checks_only_the_charts_operator(objects: list[dict[str, Any]]) -> None:
    account = find(render(), "ServiceAccount")["metadata"]["name"]
    user = f"system:serviceaccount:{NAMESPACE}:{account}"
    for policy in policies(objects).values():
        [condition] = policy["spec"]["matchConditions"]
        assert condition["expression"].strip() == f'request.userInfo.username == "{user}"'


def test_runtime_repository_is_the_charts_default_image(objects: list[dict[str, Any]]) -> None:
    values = yaml.safe_load((CHART / "values.yaml").read_text(encoding="utf-8"))
    repository = values["image"]["repository"]
    assert OperatorSettings.model_fields["RUNTIME_IMAGE"].default.startswith(f"{repository}:")
    variables = {
        v["name"]: v["expression"]
        for v in policies(objects)["sentinel-operator-deployments"]["spec"]["variables"]
    }
    assert variables["runtimeRepository"] == f'"{repository}"'


def test_the_config_map_policy_allows_only_the_template_copy(objects) -> None:
    [validation] = policies(objects)["sentinel-operator-configmaps"]["spec"]["validations"]
    assert validation["expression"] == f'object.metadata.name == "{manifests.POLICY_TEMPLATE}"'


def test_every_kind_the_operator_may_create_is_covered(objects: list[dict[str, Any]]) -> None:
    """What the chart's (cluster-wide) ClusterRole lets it create or patch, events aside."""
    granted = {
        (group, resource)
        for rule in find(render(), "ClusterRole")["rules"]
        if {"create", "patch", "update"} & set(rule["verbs"])
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        if resource != "events" and not resource.startswith("ragengines")
    }
    covered = {
        (group, resource)
        for policy in policies(objects).values()
        for rule in policy["spec"]["matchConstraints"]["resourceRules"]
        if {"CREATE", "UPDATE"} <= set(rule["operations"])
        for group in rule["apiGroups"]
        for resource in rule["resources"]
    }
    assert granted == covered == {("apps", "deployments"), ("", "services"), ("", "configmaps")}


def test_the_file_says_where_it_applies() -> None:
    head = POLICY_FILE.read_text(encoding="utf-8").split("apiVersion:", 1)[0]
    for needed in ("1.30", "EDIT", "kubectl apply -f manifests/admission-policy/"):
        assert needed in head, needed
