"""KAITO's sample RAGEngines, apiVersion changed only, through the operator on a real API server.

The samples are recreated from KAITO's documentation and its example
``examples/RAG/kaito_ragengine_phi_3.yaml`` (KAITO's repository; the file is not in this one):
``ragengine-start`` as documented, the same with KAITO's ``queryServiceName`` and
``indexServiceName``, and one whose ``compute.labelSelector`` uses matchExpressions. Only
``apiVersion`` changes, from ``kaito.sh/v1beta1`` to Sentinel's, and KAITO's
``<inference-url>`` placeholder becomes a vLLM Service URL.

The test control plane has no kubelet, so pods never run: as in ``test_operator_e2e``, the
checks are the Deployment, the Services, and status up to (not including) a True Ready.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException

from sentinel_operator import crd
from support.operator_fixtures import condition, get_engine, wait_for

pytestmark = pytest.mark.cluster

API_VERSION = f"{crd.GROUP}/{crd.VERSION}"  # KAITO: kaito.sh/v1beta1
INFERENCE_URL = "http://vllm.default.svc:8000/v1/completions"

START = f"""
apiVersion: {API_VERSION}
kind: RAGEngine
metadata:
  name: ragengine-start
spec:
  compute:
    instanceType: "Standard_NC6s_v3"
    labelSelector:
      matchLabels:
        apps: ragengine-example
  embedding:
    local:
      modelID: "BAAI/bge-small-en-v1.5"
  inferenceService:
    url: "{INFERENCE_URL}"
    contextWindowSize: 4000
"""

SERVICE_NAMES = f"""
apiVersion: {API_VERSION}
kind: RAGEngine
metadata:
  name: ragengine-services
spec:
  compute:
    instanceType: "Standard_NC6s_v3"
    labelSelector:
      matchLabels:
        apps: ragengine-example
  embedding:
    local:
      modelID: "BAAI/bge-small-en-v1.5"
  inferenceService:
    url: "{INFERENCE_URL}"
    contextWindowSize: 4000
  queryServiceName: my-query
  indexServiceName: my-index
"""

MATCH_EXPRESSIONS = f"""
apiVersion: {API_VERSION}
kind: RAGEngine
metadata:
  name: ragengine-expressions
spec:
  compute:
    instanceType: "Standard_NC6s_v3"
    labelSelector:
      matchExpressions:
        - key: apps
          operator: In
          values: [x]
  embedding:
    local:
      modelID: "BAAI/bge-small-en-v1.5"
  inferenceService:
    url: "{INFERENCE_URL}"
    contextWindowSize: 4000
"""


def apply_sample(namespace: str, text: str) -> dict[str, Any]:
    body = yaml.safe_load(text)
    return client.CustomObjectsApi().create_namespaced_custom_object(
        crd.GROUP, crd.VERSION, namespace, crd.PLURAL, body
    )


def reconciled(namespace: str, name: str) -> dict[str, Any]:
    return wait_for(
        lambda: (
            (e := get_engine(namespace, name))
            and (e.get("status") or {}).get("observedGeneration") == e["metadata"]["generation"]
            and condition(e, "ServiceReady")
            and e
        ),
        what=f"status of {name}",
    )


def service_names(namespace: str) -> set[str]:
    return {s.metadata.name for s in client.CoreV1Api().list_namespaced_service(namespace).items}


def gone(read) -> bool:
    try:
        read()
    except ApiException as exc:
        return exc.status == 404
    return False


def runtime(namespace: str, name: str) -> tuple[Any, dict[str, str]]:
    deployment = wait_for(
        lambda: client.AppsV1Api().read_namespaced_deployment(name, namespace), what="deployment"
    )
    pod = deployment.spec.template.spec
    env = {e.name: e.value for e in pod.containers[0].env}
    return pod, env


def assert_kaito_runtime(env: dict[str, str], engine: dict[str, Any]) -> None:
    assert env["LLM_INFERENCE_URL"] == INFERENCE_URL  # passed as given; the runtime maps it
    assert env["LLM_CONTEXT_WINDOW"] == "4000"
    assert env["EMBEDDING_TYPE"] == "local"
    assert env["EMBEDDING_MODEL_ID"] == "BAAI/bge-small-en-v1.5"
    # Every field of the sample survived the CRD's schema (pruning would drop unknown ones).
    assert engine["spec"]["compute"]["instanceType"] == "Standard_NC6s_v3"
    assert condition(engine, "ServiceReady")["status"] == "True"
    assert condition(engine, "Ready")["status"] in ("False", "Unknown")  # no pods run here


def test_ragengine_start_as_documented(operator, k8s_namespace: str) -> None:
    apply_sample(k8s_namespace, START)
    pod, env = runtime(k8s_namespace, "ragengine-start")
    assert pod.node_selector == {"apps": "ragengine-example"}
    engine = reconciled(k8s_namespace, "ragengine-start")
    assert_kaito_runtime(env, engine)
    service = client.CoreV1Api().read_namespaced_service("ragengine-start", k8s_namespace)
    assert service.metadata.owner_references[0].uid == engine["metadata"]["uid"]
    assert engine["status"]["endpoint"] == f"http://ragengine-start.{k8s_namespace}.svc:5000"
    assert "indexEndpoint" not in engine["status"]


def test_query_and_index_service_names_are_honoured_and_renames_replace(
    operator, k8s_namespace: str
) -> None:
    apply_sample(k8s_namespace, SERVICE_NAMES)
    _, env = runtime(k8s_namespace, "ragengine-services")
    engine = reconciled(k8s_namespace, "ragengine-services")
    assert_kaito_runtime(env, engine)
    core = client.CoreV1Api()
    wait_for(lambda: {"my-query", "my-index"} <= service_names(k8s_namespace), what="services")
    assert "ragengine-services" not in service_names(k8s_namespace)  # no default Service too
    deployment = client.AppsV1Api().read_namespaced_deployment("ragengine-services", k8s_namespace)
    pods = deployment.spec.selector.match_labels
    for name in ("my-query", "my-index"):
        service = core.read_namespaced_service(name, k8s_namespace)
        assert service.spec.selector == pods  # both reach the same runtime pods
        assert service.spec.ports[0].port == 5000
        owner = service.metadata.owner_references[0]
        assert (owner.kind, owner.uid) == ("RAGEngine", engine["metadata"]["uid"])
    assert engine["status"]["endpoint"] == f"http://my-query.{k8s_namespace}.svc:5000"
    assert engine["status"]["indexEndpoint"] == f"http://my-index.{k8s_namespace}.svc:5000"

    # Renaming the query Service and dropping the index one: the old Services are deleted.
    client.CustomObjectsApi().patch_namespaced_custom_object(
        crd.GROUP,
        crd.VERSION,
        k8s_namespace,
        crd.PLURAL,
        "ragengine-services",
        {"spec": {"queryServiceName": "my-query-2", "indexServiceName": None}},
    )
    wait_for(
        lambda: service_names(k8s_namespace) == {"my-query-2"},
        what="renamed query service, stale ones deleted",
    )
    engine = reconciled(k8s_namespace, "ragengine-services")
    assert engine["status"]["endpoint"] == f"http://my-query-2.{k8s_namespace}.svc:5000"
    assert "indexEndpoint" not in engine["status"]

    # Deleting the engine collects its Service (owned, garbage-collected).
    client.CustomObjectsApi().delete_namespaced_custom_object(
        crd.GROUP, crd.VERSION, k8s_namespace, crd.PLURAL, "ragengine-services"
    )
    wait_for(
        lambda: gone(lambda: core.read_namespaced_service("my-query-2", k8s_namespace)),
        40,
        "garbage collection of the service",
    )


def test_match_expressions_become_required_node_affinity(operator, k8s_namespace: str) -> None:
    apply_sample(k8s_namespace, MATCH_EXPRESSIONS)
    pod, env = runtime(k8s_namespace, "ragengine-expressions")
    engine = reconciled(k8s_namespace, "ragengine-expressions")
    assert_kaito_runtime(env, engine)
    assert not pod.node_selector
    terms = pod.affinity.node_affinity.required_during_scheduling_ignored_during_execution
    expression = terms.node_selector_terms[0].match_expressions[0]
    assert (expression.key, expression.operator, expression.values) == ("apps", "In", ["x"])


def test_a_service_name_that_is_no_dns_label_is_refused_by_the_api_server(
    operator, k8s_namespace: str
) -> None:
    text = (
        START.replace("name: ragengine-start", "name: bad-name") + "  queryServiceName: My.Query\n"
    )
    with pytest.raises(ApiException) as caught:
        apply_sample(k8s_namespace, text)
    assert caught.value.status == 422
