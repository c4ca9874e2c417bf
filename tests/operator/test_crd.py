"""The CRD is generated from the spec models; the committed file must match them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from sentinel_operator import crd

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "charts" / "sentinel" / "files" / "crds" / "ragengine.yaml"


def _walk(node: Any) -> list[dict[str, Any]]:
    found = []
    if isinstance(node, dict):
        found.append(node)
        for value in node.values():
            found.extend(_walk(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(_walk(value))
    return found


def test_committed_crd_is_the_generated_one() -> None:
    committed = yaml.safe_load(COMMITTED.read_text(encoding="utf-8"))
    path = COMMITTED.relative_to(ROOT)
    assert committed == crd.crd_manifest(), f"{path} is stale: run `sentinel operator crd > {path}`"


def test_schema_is_structural() -> None:
    schema = crd.crd_manifest()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    for node in _walk(schema):
        assert "$ref" not in node and "anyOf" not in node and "title" not in node
        if "properties" in node:
            assert node.get("type") == "object"
            assert node.get("additionalProperties") is not False


def test_enums_bounds_defaults_and_one_of_rule_are_in_the_schema() -> None:
    spec = crd.crd_manifest()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"][
        "spec"
    ]["properties"]
    assert spec["serviceType"]["enum"] == ["ClusterIP", "NodePort", "LoadBalancer"]
    assert spec["replicas"] == {
        "default": 1,
        "description": "Runtime pod replicas; more than 1 needs storage.vectorDB.",
        "maximum": 100,
        "minimum": 0,
        "type": "integer",
    }
    assert spec["storage"]["properties"]["vectorDB"]["properties"]["engine"]["enum"] == ["milvus"]
    rules = spec["embedding"]["x-kubernetes-validations"]
    assert rules[0]["rule"] == "!(has(self.local) && has(self.remote))"
    assert spec["resources"]["x-kubernetes-preserve-unknown-fields"] is True


def test_printer_columns_and_names() -> None:
    version = crd.crd_manifest()["spec"]["versions"][0]
    assert [c["name"] for c in version["additionalPrinterColumns"]] == [
        "Ready",
        "Reason",
        "Policy",
        "Endpoint",
        "Age",
    ]
    names = crd.crd_manifest()["spec"]["names"]
    assert names["shortNames"] == ["rag"] and names["plural"] == "ragengines"
    assert version["subresources"] == {
        "status": {},
        "scale": {
            "specReplicasPath": ".spec.replicas",
            "statusReplicasPath": ".status.replicas",
            "labelSelectorPath": ".status.selector",
        },
    }


def test_conditions_are_as_strict_as_metav1_condition() -> None:
    status = crd.crd_manifest()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"][
        "status"
    ]["properties"]
    conditions = status["conditions"]
    assert conditions["x-kubernetes-list-type"] == "map"
    assert conditions["x-kubernetes-list-map-keys"] == ["type"]
    item = conditions["items"]
    assert set(item["required"]) == {"type", "status", "reason", "message", "lastTransitionTime"}
    fields = item["properties"]
    assert fields["status"]["enum"] == ["True", "False", "Unknown"]
    assert fields["lastTransitionTime"]["format"] == "date-time"
    assert fields["reason"] | {} == {
        "type": "string",
        "minLength": 1,
        "maxLength": 1024,
        "pattern": r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
    }
    assert fields["message"]["maxLength"] == 32768
    assert fields["observedGeneration"] == {"type": "integer", "format": "int64", "minimum": 0}
    assert fields["type"]["maxLength"] == 316


KAITO_SAMPLE = """
apiVersion: kaito.sh/v1beta1
kind: RAGEngine
metadata:
  name: ragengine-start
spec:
  compute:
    instanceType: "Standard_NC4as_T4_v3"
    labelSelector:
      matchLabels:
        apps: ragengine-example
  embedding:
    local:
      modelID: "BAAI/bge-small-en-v1.5"
  inferenceService:
    url: "http://workspace-phi-3-mini/v1/completions"
    contextWindowSize: 4096
  guardrails:
    enabled: true
"""


def test_a_kaito_manifest_parses_unchanged() -> None:
    spec = crd.RAGEngineSpec.model_validate(yaml.safe_load(KAITO_SAMPLE)["spec"])
    assert spec.embedding is not None and spec.embedding.local is not None
    assert spec.embedding.local.model_id == "BAAI/bge-small-en-v1.5"
    assert spec.inference_service is not None and spec.inference_service.context_window_size == 4096
    assert spec.compute is not None and spec.compute.label_selector is not None
    assert spec.replicas == 1 and spec.service_type == "ClusterIP"


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        pytest.param(
            {"embedding": {"local": {"modelID": "m"}, "remote": {"url": "u"}}},
            "exactly one of local and remote",
            id="both-embeddings",
        ),
        pytest.param({"replicas": -1}, "replicas", id="negative-replicas"),
        pytest.param({"serviceType": "Ingress"}, "serviceType", id="bad-service-type"),
        pytest.param(
            {"storage": {"vectorDB": {"engine": "qdrant", "url": "x"}}}, "engine", id="engine"
        ),
        pytest.param({"guardrails": {"configMapRef": {"name": ""}}}, "name", id="empty-ref"),
        pytest.param({"queryServiceName": "My.Query"}, "queryServiceName", id="query-svc"),
        pytest.param({"indexServiceName": "9index"}, "indexServiceName", id="index-svc"),
        pytest.param({"indexServiceName": "x" * 64}, "indexServiceName", id="index-svc-long"),
        pytest.param({"guard": {"url": "http://g/v1"}}, "guard.family", id="guard-no-family"),
        pytest.param({"guard": {"family": "custom"}}, "guard.url", id="guard-no-url"),
        pytest.param(
            {"guard": {"url": "http://g/v1", "family": "llamaguard"}}, "guard.family", id="family"
        ),
        pytest.param(
            {"guard": {"url": "llama-guard:8000", "family": "custom"}},
            "is not an http:// or https:// URL",
            id="guard-url-no-scheme",
        ),
        pytest.param(
            {"guard": {"url": "http://g/v1", "family": "custom", "mode": "sometimes"}},
            "guard.mode",
            id="guard-mode",
        ),
        pytest.param(
            {"guard": {"url": "http://g/v1", "family": "custom", "timeoutSeconds": 0}},
            "guard.timeoutSeconds",
            id="guard-timeout-zero",
        ),
        pytest.param(
            {"guard": {"url": "http://g/v1", "family": "custom", "timeoutSeconds": 121}},
            "guard.timeoutSeconds",
            id="guard-timeout-long",
        ),
    ],
)
def test_invalid_specs_are_rejected_with_the_field_named(spec: dict, fragment: str) -> None:
    with pytest.raises(ValidationError) as caught:
        crd.RAGEngineSpec.model_validate(spec)
    assert fragment in str(caught.value)


def _guard_schema() -> dict[str, Any]:
    return crd.crd_manifest()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"][
        "spec"
    ]["properties"]["guard"]


def test_guard_schema_has_its_fields_enums_bounds_and_defaults() -> None:
    guard = _guard_schema()
    fields = guard["properties"]
    assert set(fields) == {
        "url",
        "model",
        "family",
        "accessSecret",
        "mode",
        "answers",
        "onError",
        "timeoutSeconds",
    }
    assert sorted(guard["required"]) == ["family", "url"]
    assert fields["family"]["enum"] == [
        "llama-guard-3",
        "llama-guard-4",
        "shieldgemma",
        "granite-guardian",
        "qwen3guard",
        "wildguard",
        "custom",
    ]
    assert list(crd.GUARD_FAMILIES) == fields["family"]["enum"]
    assert (fields["mode"]["enum"], fields["mode"]["default"]) == (
        ["always", "uncertain", "off"],
        "uncertain",
    )
    assert (fields["onError"]["enum"], fields["onError"]["default"]) == (
        ["builtin", "refuse", "allow"],
        "builtin",
    )
    assert fields["answers"].items() >= {"type": "boolean", "default": False}.items()
    assert (
        fields["timeoutSeconds"].items()
        >= {
            "type": "number",
            "minimum": 0,
            "exclusiveMinimum": True,
            "maximum": 120,
            "default": 5,
        }.items()
    )
    assert fields["url"]["minLength"] == 1
    assert fields["url"]["pattern"] == crd.GUARD_URL_PATTERN
    for name, field in {"guard": guard, **fields}.items():
        assert len(field.get("description", "")) >= 20, name


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        pytest.param("http://llama-guard:8000/v1", True, id="vllm"),
        pytest.param("http://workspace-llama-guard.guard.svc/v1", True, id="kaito"),
        pytest.param("https://guard.example", True, id="https-no-path"),
        pytest.param("llama-guard:8000/v1", False, id="no-scheme"),
        pytest.param("ftp://guard/v1", False, id="ftp"),
        pytest.param("http:///v1", False, id="no-host"),
        pytest.param("http://guard/v 1", False, id="space"),
    ],
)
def test_guard_url_pattern_is_the_models_check(url: str, ok: bool) -> None:
    # The same rule on both sides: the apiserver's pattern, the operator's validator.
    assert bool(re.fullmatch(crd.GUARD_URL_PATTERN, url)) is ok
    spec = {"guard": {"url": url, "family": "llama-guard-3"}}
    if ok:
        crd.RAGEngineSpec.model_validate(spec)
    else:
        with pytest.raises(ValidationError, match="not an http:// or https:// URL"):
            crd.RAGEngineSpec.model_validate(spec)
