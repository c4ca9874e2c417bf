"""Spec -> Deployment and Service: pure functions, tested without a cluster."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from sentinel_operator import crd, manifests
from sentinel_runtime.settings import POLICY_MOUNT_PATH, Settings

BASE: dict[str, Any] = {"guardrails": {"enabled": True}}


def engine(spec: dict[str, Any] | None = None, *, image: str = "sentinel:1") -> manifests.Engine:
    parsed = crd.RAGEngineSpec.model_validate(BASE if spec is None else spec)
    return manifests.Engine("demo", "team-a", "uid-123", parsed, image)


def container(deployment: dict[str, Any]) -> dict[str, Any]:
    return deployment["spec"]["template"]["spec"]["containers"][0]


def env_of(deployment: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container(deployment)["env"]}


def test_every_env_var_is_one_the_runtime_reads() -> None:
    spec = {
        "guardrails": {"enabled": True, "configMapRef": {"name": "p"}},
        "inferenceService": {
            "url": "http://llm/v1",
            "accessSecret": "s",
            "model": "m",
            "contextWindowSize": 8192,
        },
    }
    names = set(env_of(manifests.deployment(engine(spec))))
    assert names <= set(Settings.model_fields)
    assert {"LLM_INFERENCE_URL", "LLM_ACCESS_SECRET", "LLM_MODEL", "LLM_CONTEXT_WINDOW"} <= names


def test_guardrails_policy_is_mounted_read_only_where_the_runtime_looks() -> None:
    deployment = manifests.deployment(engine())
    env = env_of(deployment)
    assert env["OUTPUT_GUARDRAILS_ENABLED"] == "true"
    assert env["OUTPUT_GUARDRAILS_POLICY_PATH"] == POLICY_MOUNT_PATH
    mount = next(
        m for m in container(deployment)["volumeMounts"] if m["name"] == "guardrails-policy"
    )
    assert mount["readOnly"] is True
    assert f"{mount['mountPath']}/guardrails.yaml" == POLICY_MOUNT_PATH
    volume = next(
        v
        for v in deployment["spec"]["template"]["spec"]["volumes"]
        if v["name"] == "guardrails-policy"
    )
    assert volume["configMap"]["name"] == manifests.POLICY_TEMPLATE  # the namespace's copy
    assert volume["configMap"]["optional"] is True


def test_config_map_ref_is_mounted_instead_of_the_copy() -> None:
    spec = {"guardrails": {"enabled": True, "configMapRef": {"name": "my-policy"}}}
    volumes = manifests.deployment(engine(spec))["spec"]["template"]["spec"]["volumes"]
    assert {"my-policy"} == {v["configMap"]["name"] for v in volumes if "configMap" in v}


def test_disabled_guardrails_mount_nothing_and_say_so() -> None:
    deployment = manifests.deployment(engine({}))
    assert env_of(deployment)["OUTPUT_GUARDRAILS_ENABLED"] == "false"
    assert not [v for v in deployment["spec"]["template"]["spec"]["volumes"] if "configMap" in v]


def test_probes_ports_and_security_context() -> None:
    deployment = manifests.deployment(engine())
    runtime = container(deployment)
    assert runtime["livenessProbe"]["httpGet"]["path"] == "/health"
    assert runtime["readinessProbe"]["httpGet"]["path"] == "/ready"
    assert runtime["ports"] == [{"name": "http", "containerPort": 5000, "protocol": "TCP"}]
    assert runtime["args"] == ["serve", "--host", "0.0.0.0", "--port", "5000", "--no-demo"]
    assert runtime["securityContext"]["readOnlyRootFilesystem"] is True
    assert runtime["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    pod = deployment["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["automountServiceAccountToken"] is False


def test_owned_objects_point_at_the_engine() -> None:
    for obj in (manifests.deployment(engine()), manifests.service(engine())):
        (owner,) = obj["metadata"]["ownerReferences"]
        assert owner == {
            "apiVersion": "rag.sentinel.dev/v1alpha1",
            "kind": "RAGEngine",
            "name": "demo",
            "uid": "uid-123",
            "controller": True,
            "blockOwnerDeletion": True,
        }
        assert obj["metadata"]["namespace"] == "team-a"


def test_service_selects_the_pods_of_the_deployment() -> None:
    deployment, service = manifests.deployment(engine()), manifests.service(engine())
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= pod_labels.items()
    assert deployment["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()


CHANGES = [
    pytest.param({"image": "sentinel:2"}, id="image"),
    pytest.param({"replicas": 0}, id="replicas"),
    pytest.param(
        {"replicas": 3, "storage": {"vectorDB": {"engine": "milvus", "url": "http://m:19530"}}},
        id="replicas-on-a-shared-store",
    ),
    pytest.param(
        {"storage": {"vectorDB": {"engine": "milvus", "url": "http://m:19530"}}}, id="vector-db"
    ),
    pytest.param({"resources": {"limits": {"memory": "1Gi"}}}, id="resources"),
    pytest.param({"inferenceService": {"url": "http://llm/v1"}}, id="inference-url"),
    pytest.param({"guard": {"url": "http://guard/v1", "family": "custom"}}, id="guard"),
    pytest.param({"guardrails": {"enabled": False}}, id="guardrails-off"),
    pytest.param({"guardrails": {"enabled": True, "configMapRef": {"name": "x"}}}, id="policy-ref"),
    pytest.param({"storage": {"persistentVolume": {"persistentVolumeClaim": "pvc"}}}, id="storage"),
    pytest.param(
        {"compute": {"labelSelector": {"matchLabels": {"pool": "rag"}}}}, id="node-selector"
    ),
    pytest.param(
        {
            "compute": {
                "labelSelector": {"matchExpressions": [{"key": "pool", "operator": "Exists"}]}
            }
        },
        id="node-affinity",
    ),
]


@pytest.mark.parametrize("change", CHANGES)
def test_every_spec_change_reaches_the_deployment(change: dict[str, Any]) -> None:
    changed = copy.deepcopy(BASE) | change
    assert manifests.deployment(engine(changed)) != manifests.deployment(engine())


def test_service_type_change_reaches_the_service() -> None:
    changed = manifests.service(engine(BASE | {"serviceType": "NodePort"}))
    assert changed["spec"]["type"] == "NodePort"


def test_persistent_volume_mount_path_defaults_to_mnt_data() -> None:
    spec = BASE | {"storage": {"persistentVolume": {"persistentVolumeClaim": "pvc"}}}
    runtime = container(manifests.deployment(engine(spec)))
    assert {"name": "data", "mountPath": "/mnt/data"} in runtime["volumeMounts"]


def test_unknown_env_name_fails_at_import_time_not_in_a_cluster() -> None:
    with pytest.raises(KeyError, match="LLM_INFERENCE_URI"):
        manifests.env_name("LLM_INFERENCE_URI")


@pytest.mark.parametrize(
    ("embedding", "expected"),
    [
        pytest.param(None, {"EMBEDDING_TYPE": "builtin"}, id="absent-is-builtin"),
        pytest.param(
            {"local": {"modelID": "BAAI/bge-small-en-v1.5"}},
            {"EMBEDDING_TYPE": "local", "EMBEDDING_MODEL_ID": "BAAI/bge-small-en-v1.5"},
            id="local",
        ),
        pytest.param(
            {"remote": {"url": "http://tei/v1", "accessSecret": "emb"}},
            {
                "EMBEDDING_TYPE": "remote",
                "EMBEDDING_URL": "http://tei/v1",
                "EMBEDDING_ACCESS_SECRET": {
                    "secretKeyRef": {"name": "emb", "key": "EMBEDDING_ACCESS_SECRET"}
                },
            },
            id="remote-with-secret",
        ),
    ],
)
def test_embedding_spec_reaches_the_runtime(
    embedding: dict[str, Any] | None, expected: dict[str, Any]
) -> None:
    spec = {**BASE, **({"embedding": embedding} if embedding else {})}
    env = env_of(manifests.deployment(engine(spec)))
    assert {k: v for k, v in env.items() if k.startswith("EMBEDDING_")} == expected


def test_persistent_volume_holds_the_indexes_and_the_audit_log() -> None:
    spec = {**BASE, "storage": {"persistentVolume": {"persistentVolumeClaim": "data"}}}
    assert env_of(manifests.deployment(engine(spec)))["VECTOR_DB_PERSIST_DIR"] == "/mnt/data"
    assert "VECTOR_DB_PERSIST_DIR" not in env_of(manifests.deployment(engine()))


def test_pods_never_index_the_demo_corpus() -> None:
    assert "--no-demo" in container(manifests.deployment(engine()))["args"]


@pytest.mark.parametrize("name", ["shop", "rag-1", "a" * 63])
def test_names_that_can_name_a_service(name: str) -> None:
    assert manifests.name_problem(name) is None


@pytest.mark.parametrize("name", ["shop.v2", "1rag", "rag-", "a" * 64])
def test_resource_names_that_cannot_name_a_service_are_explained(name: str) -> None:
    problem = manifests.name_problem(name)
    assert problem is not None and repr(name) in problem and "Service" in problem


MILVUS = {"engine": "milvus", "url": "http://milvus.db.svc:19530", "accessSecret": "milvus-token"}


def test_vector_db_reaches_the_runtime_with_its_secret_and_the_engine_prefix() -> None:
    spec = {**BASE, "storage": {"vectorDB": MILVUS}}
    env = env_of(manifests.deployment(engine(spec)))
    vector_db = {k: v for k, v in env.items() if k.startswith("VECTOR_DB_")}
    prefix = engine(spec).collection_prefix
    assert vector_db == {
        "VECTOR_DB_TYPE": "milvus",
        "VECTOR_DB_URL": "http://milvus.db.svc:19530",
        "VECTOR_DB_COLLECTION_PREFIX": prefix,
        "VECTOR_DB_ACCESS_SECRET": {
            "secretKeyRef": {"name": "milvus-token", "key": "VECTOR_DB_ACCESS_SECRET"}
        },
    }
    # What the pod gets is what the runtime accepts.
    given = {k: v for k, v in vector_db.items() if isinstance(v, str)}
    assert Settings(**given).model_dump().items() >= given.items()
    without_secret = {**BASE, "storage": {"vectorDB": {**MILVUS, "accessSecret": None}}}
    assert "VECTOR_DB_ACCESS_SECRET" not in env_of(manifests.deployment(engine(without_secret)))


def test_without_vector_db_the_pod_keeps_the_embedded_default() -> None:
    env = env_of(manifests.deployment(engine()))
    assert not [k for k in env if k.startswith("VECTOR_DB_") and k != "VECTOR_DB_PERSIST_DIR"]


def test_each_engine_has_its_own_collections() -> None:
    spec = crd.RAGEngineSpec.model_validate({"storage": {"vectorDB": MILVUS}})
    prefixes = {
        manifests.Engine(name, namespace, "uid", spec, "i").collection_prefix
        for name, namespace in [("a", "team-a"), ("b", "team-a"), ("a", "team-b"), ("a-b", "c")]
    }
    assert len(prefixes) == 4
    # Derived from namespace and name only: a re-created engine finds its indexes again.
    again = manifests.Engine("a", "team-a", "other-uid", spec, "other-image")
    assert again.collection_prefix in prefixes


@pytest.mark.parametrize(
    ("spec", "replicas", "problem"),
    [
        pytest.param({"replicas": 3}, 1, True, id="embedded-three-runs-one"),
        pytest.param({"replicas": 1}, 1, False, id="embedded-one"),
        pytest.param({"replicas": 0}, 0, False, id="embedded-zero"),
        pytest.param({"replicas": 3, "storage": {"vectorDB": MILVUS}}, 3, False, id="shared"),
        pytest.param(
            {"replicas": 2, "storage": {"persistentVolume": {"persistentVolumeClaim": "pvc"}}},
            1,
            True,
            id="a-volume-is-not-shared-storage",
        ),
    ],
)
def test_replicas_beyond_one_need_a_shared_store(
    spec: dict[str, Any], replicas: int, problem: bool
) -> None:
    made = engine(spec)
    assert manifests.deployment(made)["spec"]["replicas"] == replicas
    assert (made.storage_problem is not None) is problem


def test_kaito_match_expressions_become_required_node_affinity() -> None:
    expressions = [
        {"key": "apps", "operator": "In", "values": ["ragengine-example"]},
        {"key": "gpu", "operator": "DoesNotExist"},
    ]
    selector = {"matchLabels": {"pool": "rag"}, "matchExpressions": expressions}
    pod = manifests.deployment(engine(BASE | {"compute": {"labelSelector": selector}}))["spec"][
        "template"
    ]["spec"]
    assert pod["nodeSelector"] == {"pool": "rag"}
    required = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    # One term: a node must meet every expression (separate terms would be ORed).
    assert required == {"nodeSelectorTerms": [{"matchExpressions": expressions}]}


@pytest.mark.parametrize(
    ("spec", "names", "endpoint", "index_endpoint"),
    [
        pytest.param({}, ["demo"], "http://demo.team-a.svc:5000", None, id="default"),
        pytest.param(
            {"queryServiceName": "q"}, ["q"], "http://q.team-a.svc:5000", None, id="query-only"
        ),
        pytest.param(
            {"indexServiceName": "i"},
            ["demo", "i"],
            "http://demo.team-a.svc:5000",
            "http://i.team-a.svc:5000",
            id="index-beside-default",
        ),
        pytest.param(
            {"queryServiceName": "q", "indexServiceName": "i"},
            ["q", "i"],
            "http://q.team-a.svc:5000",
            "http://i.team-a.svc:5000",
            id="both",
        ),
        pytest.param(
            {"queryServiceName": "q", "indexServiceName": "q"},
            ["q"],
            "http://q.team-a.svc:5000",
            None,
            id="same-name-one-service",
        ),
    ],
)
def test_kaito_service_names_name_the_services(
    spec: dict[str, Any], names: list[str], endpoint: str, index_endpoint: str | None
) -> None:
    built = engine(BASE | spec)
    services = manifests.services(built)
    assert [s["metadata"]["name"] for s in services] == names
    deployment = manifests.deployment(built)
    for service in services:
        assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
        assert service["metadata"]["ownerReferences"][0]["uid"] == "uid-123"
    assert deployment["metadata"]["name"] == "demo"  # the Deployment keeps the engine's name
    assert (built.endpoint, built.index_endpoint) == (endpoint, index_endpoint)


def test_stale_services_are_the_owned_ones_no_longer_asked_for() -> None:
    def svc(name: str, uid: str = "uid-123", controller: bool = True) -> dict[str, Any]:
        ref = {"uid": uid, "controller": controller}
        return {"metadata": {"name": name, "ownerReferences": [ref]}}

    built = engine(BASE | {"queryServiceName": "q"})
    existing = [
        svc("q"),
        svc("demo"),
        svc("old-index"),
        svc("other", uid="x"),
        svc("c", controller=False),
    ]
    assert manifests.stale_services(built, existing) == ["demo", "old-index"]


GUARD = {
    "url": "http://llama-guard.guard.svc/v1",
    "model": "meta-llama/Llama-Guard-3-1B",
    "family": "llama-guard-3",
    "accessSecret": "guard-token",
}


def _guard_env(spec: dict[str, Any]) -> dict[str, Any]:
    env = env_of(manifests.deployment(engine(spec)))
    return {k: v for k, v in env.items() if k.startswith("GUARD_")}


def test_guard_spec_reaches_the_runtime_with_its_defaults_and_secret() -> None:
    assert _guard_env({**BASE, "guard": GUARD}) == {
        "GUARD_URL": "http://llama-guard.guard.svc/v1",
        "GUARD_FAMILY": "llama-guard-3",
        "GUARD_MODEL": "meta-llama/Llama-Guard-3-1B",
        "GUARD_MODE": "uncertain",
        "GUARD_ANSWERS": "false",
        "GUARD_ON_ERROR": "builtin",
        "GUARD_TIMEOUT_SECONDS": "5",
        # The token by reference, as LLM_ACCESS_SECRET: never a value in the pod template.
        "GUARD_ACCESS_SECRET": {
            "secretKeyRef": {"name": "guard-token", "key": manifests.GUARD_SECRET_KEY}
        },
    }
    assert manifests.GUARD_SECRET_KEY == "GUARD_ACCESS_SECRET"


def test_every_guard_field_reaches_the_runtime_as_written() -> None:
    spec = {
        **BASE,
        "guard": {
            "url": "https://guard.example/v1",
            "family": "custom",
            "mode": "always",
            "answers": True,
            "onError": "refuse",
            "timeoutSeconds": 0.75,
        },
    }
    assert _guard_env(spec) == {
        "GUARD_URL": "https://guard.example/v1",
        "GUARD_FAMILY": "custom",
        "GUARD_MODE": "always",
        "GUARD_ANSWERS": "true",
        "GUARD_ON_ERROR": "refuse",
        "GUARD_TIMEOUT_SECONDS": "0.75",
    }
    # Every variable is one the runtime reads, with a value its settings accept.
    given = {k: v for k, v in _guard_env(spec).items() if isinstance(v, str)}
    assert Settings(**given).model_dump().items() >= given.items()


def test_without_guard_the_pod_has_no_guard_variables() -> None:
    assert _guard_env(BASE) == {}


def test_removing_the_guard_removes_its_variables_from_the_desired_deployment() -> None:
    # Server-side apply under one field manager drops what the builders stop setting, so the
    # desired object without the guard is what the Deployment becomes (tests/cluster checks
    # that on the API server).
    with_guard = manifests.deployment(engine({**BASE, "guard": GUARD}))
    without = manifests.deployment(engine(BASE))
    assert with_guard != without
    assert not [e for e in container(without)["env"] if e["name"].startswith("GUARD_")]
    assert manifests.drift(without, with_guard)  # the live one still carrying it is drift


@pytest.mark.parametrize(
    ("keys_secret", "secret_key"),
    [
        pytest.param({"name": "tenants"}, "keys.yaml", id="default-key"),
        pytest.param({"name": "tenants", "key": "runtime-keys"}, "runtime-keys", id="named-key"),
    ],
)
def test_a_keys_secret_is_mounted_as_a_file_named_by_runtime_keys_file(
    keys_secret: dict[str, str], secret_key: str
) -> None:
    deployment = manifests.deployment(engine({**BASE, "auth": {"keysSecret": keys_secret}}))
    env = env_of(deployment)
    assert env["RUNTIME_KEYS_FILE"] == "/etc/sentinel/keys/keys.yaml"
    mount = next(
        m for m in container(deployment)["volumeMounts"] if m["name"] == manifests.KEYS_VOLUME
    )
    assert mount == {"name": "runtime-keys", "mountPath": "/etc/sentinel/keys", "readOnly": True}
    assert "subPath" not in mount  # a subPath mount would never see the Secret's updates
    volume = next(
        v
        for v in deployment["spec"]["template"]["spec"]["volumes"]
        if v["name"] == manifests.KEYS_VOLUME
    )
    assert volume["secret"] == {
        "secretName": "tenants",
        "items": [{"key": secret_key, "path": "keys.yaml"}],
        "defaultMode": 0o440,
    }
    assert "optional" not in volume["secret"]  # no pod starts open without its keys
    assert (
        f"{mount['mountPath']}/{volume['secret']['items'][0]['path']}" == env["RUNTIME_KEYS_FILE"]
    )


def test_without_auth_no_keys_file_is_mounted() -> None:
    for spec in (BASE, {**BASE, "auth": {}}):
        deployment = manifests.deployment(engine(spec))
        assert "RUNTIME_KEYS_FILE" not in env_of(deployment)
        volumes = deployment["spec"]["template"]["spec"]["volumes"]
        assert all(v["name"] != manifests.KEYS_VOLUME for v in volumes)


@pytest.mark.parametrize(
    "auth",
    [
        pytest.param({"keysSecret": {}}, id="no-name"),
        pytest.param({"keysSecret": {"name": ""}}, id="empty-name"),
        pytest.param({"keysSecret": {"name": "s", "key": "a/b"}}, id="bad-key"),
    ],
)
def test_a_keys_secret_needs_a_name_and_a_valid_key(auth: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        crd.RAGEngineSpec.model_validate({**BASE, "auth": auth})


def _admission_env(spec: dict[str, Any]) -> dict[str, Any]:
    names = {"LLM_MAX_CONNECTIONS", "MAX_INFLIGHT_TURNS", "MAX_QUEUE_SECONDS"}
    env = env_of(manifests.deployment(engine(spec)))
    return {k: v for k, v in env.items() if k in names}


def test_admission_spec_reaches_the_runtime_as_written() -> None:
    spec = {
        **BASE,
        "inferenceService": {"url": "http://vllm:8000/v1", "maxConnections": 900},
        "admission": {"maxInFlightTurns": 300, "maxQueueSeconds": 0.25},
    }
    env = _admission_env(spec)
    assert env == {
        "LLM_MAX_CONNECTIONS": "900",
        "MAX_INFLIGHT_TURNS": "300",
        "MAX_QUEUE_SECONDS": "0.25",
    }
    # Values the runtime's settings accept as they are.
    assert (
        Settings(**env).model_dump().items()
        >= {
            "LLM_MAX_CONNECTIONS": 900,
            "MAX_INFLIGHT_TURNS": 300,
            "MAX_QUEUE_SECONDS": 0.25,
        }.items()
    )


def test_without_admission_the_runtime_keeps_its_defaults() -> None:
    assert _admission_env(BASE) == {}
    assert _admission_env({**BASE, "admission": {"maxQueueSeconds": 0}}) == {
        "MAX_QUEUE_SECONDS": "0"
    }


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param(
            {
                "inferenceService": {"url": "http://vllm/v1", "maxConnections": 100},
                "admission": {"maxInFlightTurns": 200},
            },
            id="fewer-connections-than-turns",
        ),
        pytest.param(
            {"inferenceService": {"url": "http://vllm/v1", "maxConnections": 100}},
            id="fewer-connections-than-the-default-turns",
        ),
    ],
)
def test_connections_below_turns_are_refused_as_the_runtime_would(spec: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=r"inferenceService.maxConnections \(100\) is below"):
        crd.RAGEngineSpec.model_validate({**BASE, **spec})


@pytest.mark.parametrize(
    "admission",
    [
        pytest.param({"maxInFlightTurns": 0}, id="no-turns"),
        pytest.param({"maxQueueSeconds": -1}, id="negative-wait"),
        pytest.param({"maxQueueSeconds": 600}, id="milliseconds-for-seconds"),
    ],
)
def test_admission_out_of_range_is_refused(admission: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        crd.RAGEngineSpec.model_validate({**BASE, "admission": admission})
