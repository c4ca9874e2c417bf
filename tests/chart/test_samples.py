"""manifests/samples/ validate against the RAGEngine CRD's openAPIV3Schema (jsonschema, made
strict: an unknown field is an error here, where the apiserver would silently prune it) and
parse with the operator's spec models; their policies parse with the runtime's parser."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest
import yaml

from sentinel_operator import crd, manifests
from sentinel_runtime.access import keys
from sentinel_runtime.guardrails.policy import parse_policy
from support.chart import CHART, SAMPLES, sample
from support.docs_site import page

SAMPLE_NAMES = sorted(p.name for p in SAMPLES.glob("*.yaml"))
# The CRD's one file (the chart renders it; tests/chart/test_chart_crds.py keeps the copies).
CRD = yaml.safe_load((CHART / "files" / "crds" / "ragengine.yaml").read_text(encoding="utf-8"))


def strict(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with every object closed that does not preserve unknown fields."""
    schema = copy.deepcopy(schema)

    def close(node: Any) -> None:
        if isinstance(node, dict):
            if "properties" in node and not node.get("x-kubernetes-preserve-unknown-fields"):
                node.setdefault("additionalProperties", False)
            for value in node.values():
                close(value)
        elif isinstance(node, list):
            for value in node:
                close(value)

    close(schema)
    return schema


SCHEMA = strict(CRD["spec"]["versions"][0]["schema"]["openAPIV3Schema"])
# OpenAPI v3's schema dialect is JSON Schema draft 4's (boolean exclusiveMinimum).
VALIDATOR = jsonschema.Draft4Validator(SCHEMA)


def engines(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == crd.KIND]


def errors(engine: dict[str, Any]) -> list[str]:
    found = [
        f"{'.'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"
        for e in VALIDATOR.iter_errors(engine)
    ]
    try:  # what the CEL rules check on newer servers (and the operator everywhere)
        crd.RAGEngineSpec.model_validate(engine.get("spec") or {})
    except ValueError as exc:
        found.append(str(exc))
    return found


def test_the_five_samples_exist() -> None:
    assert SAMPLE_NAMES == [
        "ragengine-custom-policy.yaml",
        "ragengine-guard.yaml",
        "ragengine-inference.yaml",
        "ragengine-keys.yaml",
        "ragengine-minimal.yaml",
    ]


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_sample_validates_against_the_crd(name: str) -> None:
    found = engines(sample(name))
    assert len(found) == 1
    engine = found[0]
    assert engine["apiVersion"] == f"{crd.GROUP}/{crd.VERSION}"
    assert "namespace" not in engine["metadata"], "samples are applied with -n NAMESPACE"
    assert errors(engine) == []


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        pytest.param({"guardrail": {"enabled": True}}, "'guardrail' was unexpected", id="typo"),
        pytest.param({"serviceType": "Ingress"}, "serviceType: 'Ingress' is not one of", id="enum"),
        pytest.param({"replicas": "two"}, "replicas: 'two' is not of type 'integer'", id="type"),
        pytest.param({"inferenceService": {"model": "m"}}, "'url' is a required", id="required"),
        pytest.param(
            {"guard": {"url": "llama-guard:8000/v1", "family": "llama-guard-3"}},
            "guard.url: 'llama-guard:8000/v1' does not match",
            id="guard-url-pattern",
        ),
        pytest.param(
            {"guard": {"url": "http://g/v1", "family": "llama-guard-2"}},
            "guard.family: 'llama-guard-2' is not one of",
            id="guard-family-enum",
        ),
        pytest.param(
            {"embedding": {"local": {"modelID": "m"}, "remote": {"url": "u"}}},
            "exactly one of local and remote",
            id="one-of",
        ),
    ],
)
def test_a_broken_sample_fails(spec: dict[str, Any], fragment: str) -> None:
    engine = copy.deepcopy(engines(sample("ragengine-minimal.yaml"))[0])
    engine["spec"] = spec
    found = errors(engine)
    assert any(fragment in error for error in found), found


def test_custom_policy_sample_references_its_own_config_map() -> None:
    objects = sample("ragengine-custom-policy.yaml")
    [config_map] = [o for o in objects if o["kind"] == "ConfigMap"]
    [engine] = engines(objects)
    assert engine["spec"]["guardrails"]["configMapRef"]["name"] == config_map["metadata"]["name"]
    policy = parse_policy(config_map["data"][manifests.POLICY_FILE])
    assert policy.scanners and not policy.skipped, policy.skipped
    assert policy.default_action == "block"


def test_inference_sample_becomes_the_llm_settings_of_the_pod() -> None:
    [engine] = engines(sample("ragengine-inference.yaml"))
    spec = crd.RAGEngineSpec.model_validate(engine["spec"])
    pod = manifests.deployment(manifests.Engine("e", "ns", "uid", spec, "img"))
    env = {e["name"]: e for e in pod["spec"]["template"]["spec"]["containers"][0]["env"]}
    inference = engine["spec"]["inferenceService"]
    assert env["LLM_INFERENCE_URL"]["value"] == inference["url"]
    assert env["LLM_MODEL"]["value"] == inference["model"]
    assert env["LLM_ACCESS_SECRET"]["valueFrom"]["secretKeyRef"] == {
        "name": inference["accessSecret"],
        "key": manifests.LLM_SECRET_KEY,
    }


def test_guard_sample_points_the_engine_at_its_workspace_and_secret() -> None:
    objects = sample("ragengine-guard.yaml")
    [workspace] = [o for o in objects if o["kind"] == "Workspace"]
    [secret] = [o for o in objects if o["kind"] == "Secret"]
    [engine] = engines(objects)
    # What KAITO's Workspace CRD requires (its CRD is not installed on the test control plane,
    # so tests/cluster dry-runs the rest of the file): resource.labelSelector and a preset name;
    # a gated Hugging Face model also needs the Secret with its token.
    assert workspace["apiVersion"] == "kaito.sh/v1beta1"
    assert "spec" not in workspace  # KAITO's Workspace has top-level resource and inference
    assert workspace["resource"]["labelSelector"]["matchLabels"]
    preset = workspace["inference"]["preset"]
    assert preset["name"] == "meta-llama/Llama-Guard-3-1B"
    assert preset["presetOptions"]["modelAccessSecret"]
    # KAITO's Service for a workspace takes its name and listens on port 80.
    guard = engine["spec"]["guard"]
    assert guard["url"] == f"http://{workspace['metadata']['name']}/v1"
    assert guard["accessSecret"] == secret["metadata"]["name"]
    assert manifests.GUARD_SECRET_KEY in secret["stringData"]
    assert all("namespace" not in o["metadata"] for o in objects)
    spec = crd.RAGEngineSpec.model_validate(engine["spec"])
    pod = manifests.deployment(manifests.Engine("e", "ns", "uid", spec, "img"))
    env = {e["name"]: e for e in pod["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["GUARD_URL"]["value"] == guard["url"]
    assert env["GUARD_FAMILY"]["value"] == "llama-guard-3"
    assert env["GUARD_ACCESS_SECRET"]["valueFrom"]["secretKeyRef"] == {
        "name": secret["metadata"]["name"],
        "key": manifests.GUARD_SECRET_KEY,
    }


def test_samples_directory_is_what_the_kubernetes_page_points_at() -> None:
    kubernetes = page("kubernetes.md")
    for name in SAMPLE_NAMES:
        assert f"manifests/samples/{name}" in kubernetes, name


def test_keys_sample_mounts_a_keys_file_the_runtime_accepts() -> None:
    objects = sample("ragengine-keys.yaml")
    [secret] = [o for o in objects if o["kind"] == "Secret"]
    [engine] = engines(objects)
    spec = crd.RAGEngineSpec.model_validate(engine["spec"])
    assert spec.auth is not None and spec.auth.keys_secret is not None
    reference = spec.auth.keys_secret
    assert reference.name == secret["metadata"]["name"]
    keyring = keys.parse(secret["stringData"][reference.key], "ragengine-keys.yaml")
    assert keyring.names() == ["team-support", "team-billing", "platform", "auditor"]
    support = next(p for _, p in keyring.entries if p.name == "team-support")
    assert support.may_read("support-tickets") and not support.may_read("billing-invoices")
    pod = manifests.deployment(manifests.Engine("e", "ns", "uid", spec, "img"))
    env = {e["name"]: e for e in pod["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["RUNTIME_KEYS_FILE"]["value"] == f"{manifests.KEYS_DIR}/{manifests.KEYS_FILE}"
