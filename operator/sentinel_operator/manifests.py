"""Pure functions from a RAGEngine to the objects the operator owns (no API calls here).

The pod runs the runtime of ``sentinel_runtime`` with environment variables named exactly
as its :class:`~sentinel_runtime.settings.Settings` fields (checked when this module loads),
the policy ConfigMap mounted read-only where the runtime looks for it, and the probes it
serves. Policy *content* never appears in the pod template, so a policy edit does not roll
the Deployment: the runtime hot-reloads it.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from kubernetes.utils import quantity

from sentinel_operator import crd
from sentinel_runtime.settings import POLICY_MOUNT_PATH, Settings

RUNTIME_PORT = 5000
POLICY_FILE = "guardrails.yaml"
POLICY_DIR = POLICY_MOUNT_PATH.rsplit("/", 1)[0]
RUNTIME_USER = 10001
COMPONENT = "sentinel-runtime"
ENGINE_LABEL = f"{crd.GROUP}/engine"
# Secret keys KAITO's runtime reads; the same key names here.
LLM_SECRET_KEY = "LLM_ACCESS_SECRET"
EMBEDDING_SECRET_KEY = "EMBEDDING_ACCESS_SECRET"
VECTOR_DB_SECRET_KEY = "VECTOR_DB_ACCESS_SECRET"
GUARD_SECRET_KEY = "GUARD_ACCESS_SECRET"
# The scoped keys file (spec.auth.keysSecret): mounted as a directory, never by subPath, so
# the kubelet's updates reach the runtime, which reloads it.
KEYS_DIR = "/etc/sentinel/keys"
KEYS_FILE = "keys.yaml"
KEYS_VOLUME = "runtime-keys"
# Readable by the runtime's group (fsGroup) only.
KEYS_FILE_MODE = 0o440
# The default policy: a ConfigMap in the operator's namespace, copied once into each
# namespace that needs it under the same name (namespace-shared, never owned).
POLICY_TEMPLATE = "sentinel-guardrails-policy-template"


# The engine's Deployment and Service take its name; a Service name is a DNS-1035 label,
# stricter than the DNS-1123 subdomain a custom resource may be named with ("shop.v2").
SERVICE_NAME = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
SERVICE_NAME_MAX = 63


def name_problem(name: str) -> str | None:
    """Why an engine of this name cannot get its Service, or None when it can."""
    if len(name) <= SERVICE_NAME_MAX and SERVICE_NAME.fullmatch(name):
        return None
    return (
        f"metadata.name {name!r} cannot name the engine's Service: use at most "
        f"{SERVICE_NAME_MAX} lowercase letters, digits and '-', starting with a letter and "
        "ending with a letter or digit (no dots)"
    )


def env_name(name: str) -> str:
    """``name`` if the runtime reads it; a typo here fails at import, not in a cluster."""
    if name not in Settings.model_fields:
        raise KeyError(f"the runtime reads no environment variable {name!r}")
    return name


# Every variable the pod gets, resolved once at import: a name the runtime does not read
# stops the operator from starting instead of shipping a pod whose setting is ignored.
ENV = {
    name: env_name(name)
    for name in (
        "OUTPUT_GUARDRAILS_ENABLED",
        "OUTPUT_GUARDRAILS_POLICY_PATH",
        "OUTPUT_GUARDRAILS_HOT_RELOAD_ENABLED",
        "LLM_INFERENCE_URL",
        "LLM_MODEL",
        "LLM_CONTEXT_WINDOW",
        "LLM_ACCESS_SECRET",
        "LLM_MAX_CONNECTIONS",
        "MAX_INFLIGHT_TURNS",
        "MAX_QUEUE_SECONDS",
        "EMBEDDING_TYPE",
        "EMBEDDING_MODEL_ID",
        "EMBEDDING_URL",
        "EMBEDDING_ACCESS_SECRET",
        "VECTOR_DB_PERSIST_DIR",
        "VECTOR_DB_TYPE",
        "VECTOR_DB_URL",
        "VECTOR_DB_ACCESS_SECRET",
        "VECTOR_DB_COLLECTION_PREFIX",
        "GUARD_URL",
        "GUARD_MODEL",
        "GUARD_FAMILY",
        "GUARD_MODE",
        "GUARD_ANSWERS",
        "GUARD_ON_ERROR",
        "GUARD_TIMEOUT_SECONDS",
        "GUARD_ACCESS_SECRET",
        "RUNTIME_KEYS_FILE",
    )
}


@dataclass(frozen=True)
class Engine:
    """What the builders need to know about one RAGEngine."""

    name: str
    namespace: str
    uid: str
    spec: crd.RAGEngineSpec
    default_image: str
    # The operator's OTel variables the runtime inherits (config.runtime_tracing_env).
    tracing_env: tuple[tuple[str, str], ...] = ()

    @property
    def policy_config_map(self) -> str | None:
        """The ConfigMap the pod mounts: the referenced one, else the namespace's copy."""
        guardrails = self.spec.guardrails
        if guardrails is None or not guardrails.enabled:
            return None
        return guardrails.config_map_ref.name if guardrails.config_map_ref else POLICY_TEMPLATE

    @property
    def keys_secret(self) -> crd.KeysSecretRef | None:
        """The Secret holding the scoped keys file, or None."""
        auth = self.spec.auth
        return auth.keys_secret if auth is not None else None

    @property
    def image(self) -> str:
        return self.spec.image or self.default_image

    @property
    def query_service_name(self) -> str:
        """The Service for queries: spec.queryServiceName, else the engine's name."""
        return self.spec.query_service_name or self.name

    @property
    def index_service_name(self) -> str | None:
        """A second Service for index input, or None when the query Service serves both."""
        wanted = self.spec.index_service_name
        return wanted if wanted and wanted != self.query_service_name else None

    @property
    def service_names(self) -> list[str]:
        return [self.query_service_name] + (
            [self.index_service_name] if self.index_service_name else []
        )

    @property
    def endpoint(self) -> str:
        return f"http://{self.query_service_name}.{self.namespace}.svc:{RUNTIME_PORT}"

    @property
    def index_endpoint(self) -> str | None:
        name = self.index_service_name
        return f"http://{name}.{self.namespace}.svc:{RUNTIME_PORT}" if name else None

    @property
    def vector_db(self) -> crd.VectorDBSpec | None:
        """The shared vector database, or None: the embedded index, one per pod."""
        storage = self.spec.storage
        return storage.vector_db if storage is not None else None

    @property
    def collection_prefix(self) -> str:
        """The engine's own collections in a Milvus that other engines may share: derived
        from namespace and name, so a re-created engine finds its indexes again."""
        digest = hashlib.blake2b(f"{self.namespace}/{self.name}".encode(), digest_size=6)
        return f"sentinel_{digest.hexdigest()}"

    @property
    def replicas(self) -> int:
        """The Deployment's replicas: as asked, except that the embedded index allows one
        (two pods would hold two diverging indexes); ``storage_problem`` says why."""
        wanted = self.spec.replicas
        return wanted if self.vector_db is not None or wanted <= 1 else 1

    @property
    def storage_problem(self) -> str | None:
        """Why the engine runs fewer replicas than its spec asks, or None."""
        wanted = self.spec.replicas
        if self.replicas == wanted:
            return None
        return (
            f"spec.replicas is {wanted}, but without spec.storage.vectorDB each replica would "
            f"hold its own index and answer from different documents, so the Deployment runs "
            f"{self.replicas} replica. Set spec.storage.vectorDB (a Milvus the replicas share) "
            f"to run {wanted}, or set spec.replicas to 1."
        )


def labels(engine: Engine) -> dict[str, str]:
    return {
        "app.kubernetes.io/name": COMPONENT,
        "app.kubernetes.io/instance": engine.name,
        "app.kubernetes.io/managed-by": "sentinel-operator",
        ENGINE_LABEL: engine.name,
    }


def selector(engine: Engine) -> dict[str, str]:
    return {ENGINE_LABEL: engine.name}


def selector_text(engine: Engine) -> str:
    """``selector`` as a label-selector string: ``status.selector`` for the scale subresource."""
    return ",".join(f"{key}={value}" for key, value in sorted(selector(engine).items()))


def owner_reference(engine: Engine) -> dict[str, Any]:
    return {
        "apiVersion": f"{crd.GROUP}/{crd.VERSION}",
        "kind": crd.KIND,
        "name": engine.name,
        "uid": engine.uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _metadata(engine: Engine) -> dict[str, Any]:
    return {
        "name": engine.name,
        "namespace": engine.namespace,
        "labels": labels(engine),
        "ownerReferences": [owner_reference(engine)],
    }


def _env(engine: Engine) -> list[dict[str, Any]]:
    spec = engine.spec
    # Enabled means enabled: with the policy missing the runtime refuses to answer (503),
    # never an unscanned pass (KAITO's gap: enabled guardrails with zero scanners).
    guardrails_on = engine.policy_config_map is not None
    env: list[dict[str, Any]] = [
        {"name": ENV["OUTPUT_GUARDRAILS_ENABLED"], "value": str(guardrails_on).lower()},
        {
            "name": ENV["OUTPUT_GUARDRAILS_POLICY_PATH"],
            "value": POLICY_MOUNT_PATH if guardrails_on else "",
        },
        {"name": ENV["OUTPUT_GUARDRAILS_HOT_RELOAD_ENABLED"], "value": "true"},
    ]
    inference = spec.inference_service
    if inference is not None:
        env.append({"name": ENV["LLM_INFERENCE_URL"], "value": inference.url})
        if inference.model:
            env.append({"name": ENV["LLM_MODEL"], "value": inference.model})
        if inference.context_window_size:
            env.append(
                {
                    "name": ENV["LLM_CONTEXT_WINDOW"],
                    "value": str(inference.context_window_size),
                }
            )
        if inference.access_secret:
            env.append(
                {
                    "name": ENV["LLM_ACCESS_SECRET"],
                    "valueFrom": {
                        "secretKeyRef": {"name": inference.access_secret, "key": LLM_SECRET_KEY}
                    },
                }
            )
    env.extend(_admission_env(spec))
    env.extend(_embedding_env(spec))
    env.extend(_vector_db_env(engine))
    env.extend(_guard_env(spec))
    if engine.keys_secret is not None:
        env.append({"name": ENV["RUNTIME_KEYS_FILE"], "value": f"{KEYS_DIR}/{KEYS_FILE}"})
    storage = spec.storage
    if storage is not None and storage.persistent_volume is not None:
        # Indexes and the audit log live on the volume, so a restarted pod loses nothing.
        env.append(
            {"name": ENV["VECTOR_DB_PERSIST_DIR"], "value": storage.persistent_volume.mount_path}
        )
    env.extend(_tracing_env(engine))
    return env


def _admission_env(spec: crd.RAGEngineSpec) -> list[dict[str, Any]]:
    """Only what the spec sets: an absent field keeps the runtime's default
    (docs/under-load.md), and server-side apply removes a variable an earlier spec set."""
    inference, admission = spec.inference_service, spec.admission
    values = {
        "LLM_MAX_CONNECTIONS": inference.max_connections if inference is not None else None,
        "MAX_INFLIGHT_TURNS": admission.max_in_flight_turns if admission is not None else None,
        "MAX_QUEUE_SECONDS": admission.max_queue_seconds if admission is not None else None,
    }
    return [
        {"name": ENV[name], "value": f"{value:g}"}
        for name, value in values.items()
        if value is not None
    ]


def _tracing_env(engine: Engine) -> list[dict[str, Any]]:
    """The operator's OTel variables (docs/tracing.md), with the engine's namespace and name
    added to the resource attributes so that a tracing UI tells the engines apart."""
    if not engine.tracing_env:
        return []
    inherited = dict(engine.tracing_env)
    where = f"k8s.namespace.name={engine.namespace},sentinel.ragengine={engine.name}"
    given = inherited.get("OTEL_RESOURCE_ATTRIBUTES", "").strip().strip(",")
    inherited["OTEL_RESOURCE_ATTRIBUTES"] = f"{given},{where}" if given else where
    return [{"name": name, "value": value} for name, value in sorted(inherited.items())]


def _embedding_env(spec: crd.RAGEngineSpec) -> list[dict[str, Any]]:
    embedding = spec.embedding
    if embedding is None or (embedding.local is None and embedding.remote is None):
        return [{"name": ENV["EMBEDDING_TYPE"], "value": "builtin"}]
    if embedding.local is not None:
        return [
            {"name": ENV["EMBEDDING_TYPE"], "value": "local"},
            {"name": ENV["EMBEDDING_MODEL_ID"], "value": embedding.local.model_id},
        ]
    remote = embedding.remote
    assert remote is not None
    env: list[dict[str, Any]] = [
        {"name": ENV["EMBEDDING_TYPE"], "value": "remote"},
        {"name": ENV["EMBEDDING_URL"], "value": remote.url},
    ]
    if remote.access_secret:
        env.append(
            {
                "name": ENV["EMBEDDING_ACCESS_SECRET"],
                "valueFrom": {
                    "secretKeyRef": {"name": remote.access_secret, "key": EMBEDDING_SECRET_KEY}
                },
            }
        )
    return env


def _vector_db_env(engine: Engine) -> list[dict[str, Any]]:
    vector_db = engine.vector_db
    if vector_db is None:
        return []  # the runtime's default: the embedded index
    env: list[dict[str, Any]] = [
        {"name": ENV["VECTOR_DB_TYPE"], "value": vector_db.engine},
        {"name": ENV["VECTOR_DB_URL"], "value": vector_db.url},
        {"name": ENV["VECTOR_DB_COLLECTION_PREFIX"], "value": engine.collection_prefix},
    ]
    if vector_db.access_secret:
        env.append(
            {
                "name": ENV["VECTOR_DB_ACCESS_SECRET"],
                "valueFrom": {
                    "secretKeyRef": {"name": vector_db.access_secret, "key": VECTOR_DB_SECRET_KEY}
                },
            }
        )
    return env


def _guard_env(spec: crd.RAGEngineSpec) -> list[dict[str, Any]]:
    """The guard model as the runtime reads it; nothing without spec.guard (server-side apply
    then removes the variables an earlier spec set). The policy file's guard: keys win."""
    guard = spec.guard
    if guard is None:
        return []
    env: list[dict[str, Any]] = [
        {"name": ENV["GUARD_URL"], "value": guard.url},
        {"name": ENV["GUARD_FAMILY"], "value": guard.family},
    ]
    if guard.model:
        env.append({"name": ENV["GUARD_MODEL"], "value": guard.model})
    env += [
        {"name": ENV["GUARD_MODE"], "value": guard.mode},
        {"name": ENV["GUARD_ANSWERS"], "value": str(guard.answers).lower()},
        {"name": ENV["GUARD_ON_ERROR"], "value": guard.on_error},
        {"name": ENV["GUARD_TIMEOUT_SECONDS"], "value": f"{guard.timeout_seconds:g}"},
    ]
    if guard.access_secret:
        env.append(
            {
                "name": ENV["GUARD_ACCESS_SECRET"],
                "valueFrom": {
                    "secretKeyRef": {"name": guard.access_secret, "key": GUARD_SECRET_KEY}
                },
            }
        )
    return env


def _volumes(engine: Engine) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    volumes: list[dict[str, Any]] = [{"name": "tmp", "emptyDir": {}}]
    mounts: list[dict[str, Any]] = [{"name": "tmp", "mountPath": "/tmp"}]
    if engine.policy_config_map is not None:
        volumes.append(
            {
                "name": "guardrails-policy",
                "configMap": {
                    "name": engine.policy_config_map,
                    "items": [{"key": POLICY_FILE, "path": POLICY_FILE}],
                    # A missing ConfigMap or key must not keep the pod from starting: the
                    # runtime then reports "policy missing" (503, /ready fails) and picks the
                    # file up by hot reload once it exists, with no restart.
                    "optional": True,
                },
            }
        )
        mounts.append({"name": "guardrails-policy", "mountPath": POLICY_DIR, "readOnly": True})
    keys_secret = engine.keys_secret
    if keys_secret is not None:
        # Not optional: a pod without its keys must not start open (SecretsReady names a
        # missing Secret or key).
        volumes.append(
            {
                "name": KEYS_VOLUME,
                "secret": {
                    "secretName": keys_secret.name,
                    "items": [{"key": keys_secret.key, "path": KEYS_FILE}],
                    "defaultMode": KEYS_FILE_MODE,
                },
            }
        )
        mounts.append({"name": KEYS_VOLUME, "mountPath": KEYS_DIR, "readOnly": True})
    storage = engine.spec.storage
    if storage is not None and storage.persistent_volume is not None:
        pv = storage.persistent_volume
        volumes.append(
            {
                "name": "data",
                "persistentVolumeClaim": {"claimName": pv.persistent_volume_claim},
            }
        )
        mounts.append({"name": "data", "mountPath": pv.mount_path})
    return volumes, mounts


def _probe(path: str, period: int, failures: int) -> dict[str, Any]:
    return {
        "httpGet": {"path": path, "port": "http"},
        "periodSeconds": period,
        "timeoutSeconds": 2,
        "failureThreshold": failures,
    }


def deployment(engine: Engine) -> dict[str, Any]:
    volumes, mounts = _volumes(engine)
    container: dict[str, Any] = {
        "name": "runtime",
        "image": engine.image,
        # A pod serves the user's indexes only: the demo corpus is for a first local run.
        "args": ["serve", "--host", "0.0.0.0", "--port", str(RUNTIME_PORT), "--no-demo"],
        "ports": [{"name": "http", "containerPort": RUNTIME_PORT, "protocol": "TCP"}],
        "env": _env(engine),
        "volumeMounts": mounts,
        "livenessProbe": _probe("/health", 10, 3),
        "readinessProbe": _probe("/ready", 5, 2),
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "runAsNonRoot": True,
            "capabilities": {"drop": ["ALL"]},
        },
    }
    if engine.spec.resources:
        container["resources"] = engine.spec.resources
    pod_spec: dict[str, Any] = {
        "automountServiceAccountToken": False,
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": RUNTIME_USER,
            "runAsGroup": RUNTIME_USER,
            "fsGroup": RUNTIME_USER,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [container],
        "volumes": volumes,
    }
    compute = engine.spec.compute
    nodes = compute.label_selector if compute else None
    if nodes and nodes.match_labels:
        pod_spec["nodeSelector"] = dict(nodes.match_labels)
    if nodes and nodes.match_expressions:
        # A node must meet every expression: one term holds them all (terms are ORed).
        term = {
            "matchExpressions": [e.model_dump(exclude_none=True) for e in nodes.match_expressions]
        }
        pod_spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
            }
        }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _metadata(engine),
        "spec": {
            "replicas": engine.replicas,
            "selector": {"matchLabels": selector(engine)},
            "template": {"metadata": {"labels": labels(engine)}, "spec": pod_spec},
        },
    }


def service(engine: Engine, name: str | None = None) -> dict[str, Any]:
    """One Service selecting the engine's pods; ``name`` defaults to the query Service's.
    The runtime serves the query and the index APIs on one port, so both Services match."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {**_metadata(engine), "name": name or engine.query_service_name},
        "spec": {
            "type": engine.spec.service_type,
            "selector": selector(engine),
            "ports": [
                {"name": "http", "port": RUNTIME_PORT, "targetPort": "http", "protocol": "TCP"}
            ],
        },
    }


def services(engine: Engine) -> list[dict[str, Any]]:
    """The query Service and, when spec.indexServiceName names another, the index Service."""
    return [service(engine, name) for name in engine.service_names]


def stale_services(engine: Engine, existing: list[dict[str, Any]]) -> list[str]:
    """Names of Services this engine owns (by uid) that its spec no longer asks for."""
    wanted = set(engine.service_names)
    return sorted(
        obj["metadata"]["name"]
        for obj in existing
        if obj["metadata"]["name"] not in wanted
        and any(
            ref.get("uid") == engine.uid and ref.get("controller")
            for ref in obj["metadata"].get("ownerReferences") or []
        )
    )


def drift(desired: dict[str, Any], live: dict[str, Any]) -> list[str]:
    """Where a live owned object no longer says what ``desired`` (as the builders made it) says,
    as ``path: live value (want desired value)`` lines; empty when it still does.

    ``desired`` must be contained in ``live``: the server adds defaults (probe thresholds,
    ``defaultMode``, a NodePort, ...) that are no drift, and lists are compared item by item
    (env, ports and volumes keep their order). Only the spec is compared. Resource quantities
    are compared by value (the server stores ``1024Mi`` as ``1Gi``); another difference the
    server makes on its own would show here too, which is why a repair is judged by whether
    re-applying changed the object, not by this list alone.
    """
    found: list[str] = []
    _contained(desired.get("spec") or {}, (live or {}).get("spec") or {}, "spec", found)
    return found


def _contained(want: Any, have: Any, path: str, found: list[str]) -> None:
    if isinstance(want, dict) and isinstance(have, dict):
        for key, value in want.items():
            _contained(value, have.get(key), f"{path}.{key}", found)
    elif isinstance(want, list) and isinstance(have, list) and len(want) == len(have):
        for index, (item, other) in enumerate(zip(want, have, strict=True)):
            _contained(item, other, f"{path}[{index}]", found)
    elif want != have and not (want in ("", {}, []) and have is None):  # omitempty on the server
        if ".resources." in path and _same_quantity(want, have):
            return
        found.append(f"{path}: {_short(have)} (want {_short(want)})")


def _same_quantity(want: Any, have: Any) -> bool:
    # Without this, a spec written as 0.5 or 1024Mi would look drifted at every Deployment
    # event, and each would cost a GET and a no-op apply.
    try:
        return bool(quantity.parse_quantity(want) == quantity.parse_quantity(have))
    except ValueError:
        return False


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."
