"""The RAGEngine resource as typed models: the one definition of its schema.

The operator reads specs only through :class:`RAGEngineSpec`;
``charts/sentinel/files/crds/ragengine.yaml`` is generated from these models by
:func:`crd_manifest` (``sentinel operator crd``), and a test fails when the committed file and
the models drift apart; the chart renders it (CEL rules only for servers that enforce them).
The spec mirrors KAITO's ``kaito.sh/v1beta1`` RAGEngine, so a KAITO manifest needs only a new
``apiVersion``.
"""

from __future__ import annotations

import copy
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.alias_generators import to_camel

from sentinel_runtime import settings as runtime_settings
from sentinel_runtime.guard import config as guard_config

GROUP = "rag.sentinel.dev"
VERSION = "v1alpha1"
KIND = "RAGEngine"
PLURAL = "ragengines"
SINGULAR = "ragengine"
SHORT_NAMES = ["rag"]
DEFAULT_MOUNT_PATH = "/mnt/data"
# A Service name is a DNS-1035 label (at most 63 characters).
SERVICE_NAME_PATTERN = r"^[a-z]([-a-z0-9]*[a-z0-9])?$"
SERVICE_NAME_MAX = 63
# The guard-model families, modes and failure policies are the runtime's (one definition:
# sentinel_runtime.guard.config).
GUARD_FAMILIES = guard_config.FAMILY_NAMES
# An http(s) URL with a host: the schema's pattern (which the 1.20 apiserver enforces) and the
# operator's own check of engines stored before the CRD had it.
GUARD_URL_PATTERN = r"^https?://[^\s/?#]+(/\S*)?$"
GUARD_TIMEOUT_MAX = 120
# The Secret key read when auth.keysSecret names none.
KEYS_SECRET_KEY = "keys.yaml"


class _Model(BaseModel):
    # Unknown fields are kept out by the apiserver's pruning; here they are ignored.
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class LabelSelectorRequirement(_Model):
    key: str = Field(min_length=1, description="Node label key.")
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"]
    values: list[str] | None = Field(default=None, description="For In and NotIn.")


class LabelSelector(_Model):
    """KAITO's node selector: matchLabels and matchExpressions, both required of a node."""

    match_labels: dict[str, str] | None = Field(default=None, description="Node labels to require.")
    match_expressions: list[LabelSelectorRequirement] | None = Field(
        default=None, description="Node label requirements (KAITO's form), as node affinity."
    )


class ComputeSpec(_Model):
    """KAITO's compute block; only labelSelector is used: matchLabels as a nodeSelector,
    matchExpressions as required node affinity."""

    model_config = ConfigDict(json_schema_extra={"x-kubernetes-preserve-unknown-fields": True})

    instance_type: str | None = Field(default=None, description="Accepted for KAITO; unused.")
    label_selector: LabelSelector | None = None


class PersistentVolumeSpec(_Model):
    persistent_volume_claim: str = Field(min_length=1, description="PVC holding index and audit.")
    mount_path: str = Field(
        default=DEFAULT_MOUNT_PATH, pattern=r"^/", description="Where the volume is mounted."
    )


class VectorDBSpec(_Model):
    engine: Literal["milvus"] = Field(description="Shared vector database engine.")
    url: str = Field(min_length=1, description="Connection URL, e.g. http://milvus:19530.")
    access_secret: str | None = Field(
        default=None, description="Secret with key VECTOR_DB_ACCESS_SECRET."
    )


class StorageSpec(_Model):
    persistent_volume: PersistentVolumeSpec | None = None
    vector_db: VectorDBSpec | None = Field(
        default=None,
        alias="vectorDB",
        description="A vector database the replicas share; without it each pod holds its own "
        "index and the engine runs one replica.",
    )


class LocalEmbeddingSpec(_Model):
    model_id: str = Field(
        min_length=1,
        alias="modelID",
        description="sentence-transformers model, e.g. BAAI/bge-small-en-v1.5.",
    )


class RemoteEmbeddingSpec(_Model):
    url: str = Field(min_length=1, description="OpenAI-compatible /v1/embeddings base URL.")
    access_secret: str | None = Field(
        default=None, description="Secret with key EMBEDDING_ACCESS_SECRET."
    )


class EmbeddingSpec(_Model):
    """Exactly one of local and remote; absent means the built-in embedder."""

    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": [
                {
                    "rule": "!(has(self.local) && has(self.remote))",
                    "message": "embedding: set exactly one of local and remote",
                }
            ]
        }
    )

    local: LocalEmbeddingSpec | None = None
    remote: RemoteEmbeddingSpec | None = None

    @model_validator(mode="after")
    def _one_of(self) -> EmbeddingSpec:
        if self.local is not None and self.remote is not None:
            raise ValueError("embedding: set exactly one of local and remote")
        return self


class InferenceServiceSpec(_Model):
    url: str = Field(
        min_length=1,
        description=(
            "OpenAI-compatible base URL (http://vllm:8000/v1) or full endpoint URL "
            "(.../v1/chat/completions or .../v1/completions)."
        ),
    )
    access_secret: str | None = Field(
        default=None, description="Secret with key LLM_ACCESS_SECRET."
    )
    model: str | None = Field(default=None, description="Model name sent upstream.")
    context_window_size: int | None = Field(
        default=None, ge=1, description="Input plus output tokens the LLM accepts."
    )
    max_connections: int | None = Field(
        default=None,
        ge=1,
        le=runtime_settings.LLM_MAX_CONNECTIONS_LIMIT,
        description="Connections each runtime pod holds open to the LLM at most "
        "(LLM_MAX_CONNECTIONS), at least admission.maxInFlightTurns; default: twice it.",
    )


class AdmissionSpec(_Model):
    """How many turns each runtime pod runs at once and how long the others may wait
    (README "Under load"); absent fields keep the runtime's defaults."""

    max_in_flight_turns: int | None = Field(
        default=None,
        ge=1,
        le=runtime_settings.MAX_INFLIGHT_TURNS_LIMIT,
        description="Turns (chat, completions, /answer, /retrieve) run at once per pod, a "
        "stream until it ends (MAX_INFLIGHT_TURNS; default "
        f"{runtime_settings.DEFAULT_MAX_INFLIGHT_TURNS}). As many more may wait.",
    )
    max_queue_seconds: float | None = Field(
        default=None,
        ge=0,
        le=runtime_settings.MAX_QUEUE_SECONDS_LIMIT,
        description="Longest a turn waits for a slot before 503 with Retry-After "
        f"(MAX_QUEUE_SECONDS; default {runtime_settings.DEFAULT_MAX_QUEUE_SECONDS:g}); 0: no "
        "queue, 429 at once.",
    )


class GuardSpec(_Model):
    """A guard model (Llama Guard, ShieldGemma, Granite Guardian, ...) served on an
    OpenAI-compatible endpoint, which the runtime asks whether prompts (and, with ``answers``,
    answers) are harmful. The runtime gets it as GUARD_* environment variables; the policy
    file's own ``guard:`` section, where set, wins over them."""

    url: str = Field(
        min_length=1,
        description="OpenAI-compatible base URL of the guard-model server, e.g. "
        "http://llama-guard:8000/v1 (vLLM) or http://WORKSPACE.NAMESPACE.svc/v1 (KAITO).",
        json_schema_extra={"pattern": GUARD_URL_PATTERN},
    )
    model: str | None = Field(
        default=None,
        description="Model name sent upstream, as the guard server's /v1/models lists it.",
    )
    family: guard_config.Family = Field(
        description="The guard model's family: its prompt and reply format. custom needs the "
        "policy file's guard.custom section (a prompt template and a reply pattern)."
    )
    access_secret: str | None = Field(
        default=None,
        description="Secret with key GUARD_ACCESS_SECRET: the bearer token for the guard "
        "server (read by the runtime pods, never by the operator).",
    )
    mode: guard_config.Mode = Field(
        default="uncertain",
        description="always: every prompt goes to the guard; uncertain: only prompts the "
        "built-in judge is unsure of; off: never.",
    )
    answers: bool = Field(
        default=False,
        description="Also judge each final answer before it is released (a harmful one is "
        "blocked with the policy's message).",
    )
    on_error: guard_config.OnError = Field(
        default="builtin",
        description="When the guard is down, slow or answers garbage: builtin (the built-in "
        "judge decides), refuse, or allow.",
    )
    timeout_seconds: float = Field(
        default=5.0,
        gt=0,
        le=GUARD_TIMEOUT_MAX,
        description="Seconds to wait for the guard's verdict before onError applies.",
    )

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not re.fullmatch(GUARD_URL_PATTERN, value):
            raise ValueError(
                f"{value!r} is not an http:// or https:// URL: give the guard server's base "
                "URL, e.g. http://llama-guard:8000/v1"
            )
        return value


class ConfigMapRef(_Model):
    name: str = Field(min_length=1, max_length=253)


class GuardrailsSpec(_Model):
    enabled: bool = Field(default=False, description="Scan every answer with the policy.")
    config_map_ref: ConfigMapRef | None = Field(
        default=None,
        description="ConfigMap holding guardrails.yaml; without it the operator's template is "
        "copied into the namespace once.",
    )


class KeysSecretRef(_Model):
    """A Secret holding the runtime's keys file (README "Keys and tenants")."""

    name: str = Field(min_length=1, max_length=253, description="Secret name.")
    key: str = Field(
        default=KEYS_SECRET_KEY,
        min_length=1,
        max_length=253,
        pattern=r"^[-._a-zA-Z0-9]+$",
        description="The Secret's key holding the keys file (YAML).",
    )


class AuthSpec(_Model):
    keys_secret: KeysSecretRef | None = Field(
        default=None,
        description="Scoped API keys: a Secret holding the keys file (named keys, the indexes "
        "each may read and write, audit and policy access, rpm/tpm limits), mounted into "
        "the runtime pods as RUNTIME_KEYS_FILE; edits take effect without a restart.",
    )


class RAGEngineSpec(_Model):
    compute: ComputeSpec | None = None
    storage: StorageSpec | None = None
    embedding: EmbeddingSpec | None = None
    inference_service: InferenceServiceSpec | None = None
    guardrails: GuardrailsSpec | None = None
    guard: GuardSpec | None = Field(
        default=None,
        description="A guard model that judges prompts (and answers); absent: the built-in "
        "judge alone.",
    )
    auth: AuthSpec | None = Field(
        default=None,
        description="Who may call the runtime; absent: no key is needed.",
    )
    admission: AdmissionSpec | None = Field(
        default=None,
        description="Admission control of each runtime pod: turns in flight and their wait; "
        "absent: the runtime's defaults.",
    )
    replicas: int = Field(
        default=1,
        ge=0,
        le=100,
        description="Runtime pod replicas; more than 1 needs storage.vectorDB.",
    )
    resources: dict[str, Any] | None = Field(
        default=None,
        description="Container resources (requests, limits).",
        json_schema_extra={"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    )
    image: str | None = Field(default=None, description="Runtime image; default: the operator's.")
    service_type: Literal["ClusterIP", "NodePort", "LoadBalancer"] = "ClusterIP"
    query_service_name: str | None = Field(
        default=None,
        max_length=SERVICE_NAME_MAX,
        pattern=SERVICE_NAME_PATTERN,
        description="Name of the Service for user queries (KAITO's field); default: the "
        "engine's name.",
    )
    index_service_name: str | None = Field(
        default=None,
        max_length=SERVICE_NAME_MAX,
        pattern=SERVICE_NAME_PATTERN,
        description="Name of a second Service for index input (KAITO's field), selecting the "
        "same pods and port; unset or equal to the query Service's name: none.",
    )

    @model_validator(mode="after")
    def _connections_cover_turns(self) -> RAGEngineSpec:
        # The runtime's own rule, so a spec it would refuse at start is refused here.
        inference, admission = self.inference_service, self.admission
        connections = inference.max_connections if inference is not None else None
        turns = admission.max_in_flight_turns if admission is not None else None
        problem = runtime_settings.connections_problem(
            connections or 0, turns or runtime_settings.DEFAULT_MAX_INFLIGHT_TURNS
        )
        if problem is not None:
            raise ValueError(
                problem.replace("LLM_MAX_CONNECTIONS", "inferenceService.maxConnections").replace(
                    "MAX_INFLIGHT_TURNS", "admission.maxInFlightTurns"
                )
            )
        return self


class SkippedScanner(_Model):
    index: int
    type: str
    reason: str


class PolicyStatus(_Model):
    config_map: str | None = None
    sha256: str | None = None
    active_scanners: int | None = None
    skipped: list[SkippedScanner] | None = None


# metav1.Condition's validation, so `kubectl` tools and libraries that read conditions
# generically (kstatus, Argo CD health checks) see the shape they expect.
CONDITION_TYPE_PATTERN = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
)
CONDITION_REASON_PATTERN = r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"
CONDITION_MESSAGE_MAX = 32768


class Condition(_Model):
    type: str = Field(max_length=316, pattern=CONDITION_TYPE_PATTERN)
    status: Literal["True", "False", "Unknown"]
    reason: str = Field(min_length=1, max_length=1024, pattern=CONDITION_REASON_PATTERN)
    message: str = Field(max_length=CONDITION_MESSAGE_MAX)
    last_transition_time: str = Field(json_schema_extra={"format": "date-time"})
    observed_generation: int | None = Field(
        default=None, ge=0, json_schema_extra={"format": "int64"}
    )


class RAGEngineStatus(_Model):
    observed_generation: int | None = None
    conditions: list[Condition] | None = Field(
        default=None,
        json_schema_extra={
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["type"],
        },
    )
    endpoint: str | None = None
    index_endpoint: str | None = Field(
        default=None,
        description="URL of the index Service, when spec.indexServiceName names a second one.",
    )
    replicas: int | None = Field(
        default=None,
        ge=0,
        description="Pods the runtime Deployment has (its status.replicas): the scale "
        "subresource's current replicas, which a HorizontalPodAutoscaler reads.",
    )
    selector: str | None = Field(
        default=None,
        description="Label selector of the runtime pods, for the scale subresource.",
    )
    ready_replicas: int | None = None
    policy: PolicyStatus | None = None


# `kubectl scale rag NAME --replicas N` and a HorizontalPodAutoscaler write spec.replicas
# through this; the operator fills the two status paths from the Deployment.
SCALE = {
    "specReplicasPath": ".spec.replicas",
    "statusReplicasPath": ".status.replicas",
    "labelSelectorPath": ".status.selector",
}

PRINTER_COLUMNS = [
    {
        "name": "Ready",
        "type": "string",
        "jsonPath": '.status.conditions[?(@.type=="Ready")].status',
    },
    # Why an engine is not ready: the first component condition that is not True
    # (PolicyInvalid, AccessSecretMissing, ReplicasNotReady, ...).
    {
        "name": "Reason",
        "type": "string",
        "jsonPath": '.status.conditions[?(@.type=="Ready")].reason',
    },
    {
        "name": "Policy",
        "type": "string",
        "jsonPath": '.status.conditions[?(@.type=="PolicyReady")].reason',
    },
    {"name": "Endpoint", "type": "string", "jsonPath": ".status.endpoint"},
    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
]


def _structural(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """Turn pydantic's JSON Schema into a Kubernetes structural OpenAPI v3 schema."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        merged = {**copy.deepcopy(defs[name]), **{k: v for k, v in schema.items() if k != "$ref"}}
        return _structural(merged, defs)
    if "anyOf" in schema:
        options = [s for s in schema["anyOf"] if s.get("type") != "null"]
        if len(options) != 1:
            raise ValueError(f"cannot express union {schema['anyOf']} in a structural schema")
        rest = {k: v for k, v in schema.items() if k not in ("anyOf", "default")}
        if schema.get("default") is not None:
            rest["default"] = schema["default"]
        return _structural({**options[0], **rest}, defs)
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("title", "additionalProperties") and not (
            key == "additionalProperties" and isinstance(value, dict)
        ):
            continue
        if key == "const":
            out["enum"] = [value]
        elif key == "exclusiveMinimum":
            out["minimum"], out["exclusiveMinimum"] = value, True
        elif key == "exclusiveMaximum":
            out["maximum"], out["exclusiveMaximum"] = value, True
        elif key == "properties":
            out["properties"] = {name: _structural(sub, defs) for name, sub in value.items()}
        elif key in ("items", "additionalProperties"):
            out[key] = _structural(value, defs)
        elif key == "default" and value is None:
            continue
        else:
            out[key] = value
    if "properties" in out or "x-kubernetes-preserve-unknown-fields" in out:
        out.setdefault("type", "object")
    return out


def _without_defaults(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _without_defaults(v) for k, v in node.items() if k != "default"}
    if isinstance(node, list):
        return [_without_defaults(v) for v in node]
    return node


def openapi_schema(model: type[BaseModel], *, defaults: bool = True) -> dict[str, Any]:
    raw = model.model_json_schema(by_alias=True, mode="validation")
    schema = _structural(raw, raw.pop("$defs", {}))
    return schema if defaults else _without_defaults(schema)


def crd_manifest() -> dict[str, Any]:
    """The CustomResourceDefinition, generated from the models above."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{PLURAL}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "names": {
                "kind": KIND,
                "listKind": f"{KIND}List",
                "plural": PLURAL,
                "singular": SINGULAR,
                "shortNames": SHORT_NAMES,
                "categories": ["sentinel"],
            },
            "scope": "Namespaced",
            "versions": [
                {
                    "name": VERSION,
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}, "scale": SCALE},
                    "additionalPrinterColumns": PRINTER_COLUMNS,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "description": "A guardrailed RAG runtime and its policy.",
                            "properties": {
                                "apiVersion": {"type": "string"},
                                "kind": {"type": "string"},
                                "metadata": {"type": "object"},
                                "spec": openapi_schema(RAGEngineSpec),
                                # The operator writes status whole; defaults would only
                                # let the server invent values it never wrote.
                                "status": openapi_schema(RAGEngineStatus, defaults=False),
                            },
                        }
                    },
                }
            ],
        },
    }
