"""Runtime settings, read once from the environment (names as in docs/contracts.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

POLICY_MOUNT_PATH = "/etc/sentinel/guardrails/guardrails.yaml"
# The endpoints LLM_INFERENCE_URL may end with (checked in this order).
LLM_ENDPOINTS = ("/chat/completions", "/completions")
# Admission (docs/under-load.md gives the reasoning). A turn holds its slot for the
# model's whole answer, so turns in flight = turns a second x seconds an answer takes
# (Little's law). One runtime process does 480-770 turns a second of its own work
# (bench/overload.py, "CPU-bound rate"): with 512 slots and a 1 s model it could serve at
# most about 390 a second, half of that, while clients were shed (0.51x); 1024 slots keep a
# one-second model's worth of that rate in flight. A vLLM server batches 256 sequences (1024
# with vLLM's V1 engine on 80 GB GPUs) and queues the rest itself, so the extra turns wait
# there, counted in rag_turns_in_flight, rather than being refused here.
DEFAULT_MAX_INFLIGHT_TURNS = 1024
# Unset, LLM_MAX_CONNECTIONS is two connections a turn: a turn may hold a second upstream
# call (a guard model on the same server, best-of-N candidates) while its first is open, and
# a pool that runs dry queues calls inside aiohttp, where no metric sees them.
CONNECTIONS_PER_TURN = 2
DEFAULT_LLM_MAX_CONNECTIONS = CONNECTIONS_PER_TURN * DEFAULT_MAX_INFLIGHT_TURNS
# A second: long enough to ride out a burst (at 400 answers a second a slot frees every
# 2.5 ms), short enough that a shed client hears so within a second, and a served answer
# waits at most one second more than the model takes.
DEFAULT_MAX_QUEUE_SECONDS = 1.0
# Bounds that catch a unit mistake (milliseconds for seconds) before the pod starts.
MAX_QUEUE_SECONDS_LIMIT = 60.0
MAX_INFLIGHT_TURNS_LIMIT = 10_000
LLM_MAX_CONNECTIONS_LIMIT = 20_000


def connections_problem(connections: int, turns: int) -> str | None:
    """Why ``LLM_MAX_CONNECTIONS`` cannot serve ``MAX_INFLIGHT_TURNS`` (None: it can; 0 is
    the default, twice the turns). The operator checks a RAGEngine's spec with it too."""
    if connections and connections < turns:
        return (
            f"LLM_MAX_CONNECTIONS ({connections}) is below MAX_INFLIGHT_TURNS ({turns}): "
            "admitted turns would wait for an upstream connection in a queue nothing bounds "
            "or counts; raise LLM_MAX_CONNECTIONS or lower MAX_INFLIGHT_TURNS"
        )
    return None


class Settings(BaseSettings):
    """Every environment variable the runtime reads; the field name is the variable name."""

    model_config = SettingsConfigDict(case_sensitive=True, extra="ignore", frozen=True)

    OUTPUT_GUARDRAILS_ENABLED: bool = Field(
        default=False, description="Master switch; when false no policy is loaded."
    )
    OUTPUT_GUARDRAILS_POLICY_PATH: str = Field(
        default="",
        description="Absolute path of guardrails.yaml; empty means the shipped default policy.",
    )
    OUTPUT_GUARDRAILS_HOT_RELOAD_ENABLED: bool = Field(
        default=True, description="Watch the policy file's directory and reload on change."
    )
    LLM_INFERENCE_URL: str = Field(
        default="",
        description="OpenAI-compatible base URL (http://vllm:8000/v1) or a full endpoint "
        "URL, .../v1/chat/completions or .../v1/completions as KAITO writes it (chat is "
        "always what is called); empty means the built-in generator.",
    )
    LLM_ACCESS_SECRET: str = Field(default="", description="Bearer token for the upstream LLM.")
    LLM_MODEL: str = Field(
        default="",
        description="Pins the model sent upstream; empty: the request's model is passed on.",
    )
    LLM_CONTEXT_WINDOW: int = Field(
        default=0, ge=0, description="Upstream context window in tokens; 0 disables the check."
    )
    LLM_TIMEOUT_SECONDS: float = Field(
        default=60.0, gt=0, description="Total time allowed for one upstream call."
    )
    LLM_MAX_CONNECTIONS: int = Field(
        default=0,
        ge=0,
        le=LLM_MAX_CONNECTIONS_LIMIT,
        description="Connections to the upstream LLM (and to a guard server) held open at "
        "most; at least MAX_INFLIGHT_TURNS, so an admitted turn never waits for one. 0: twice "
        "MAX_INFLIGHT_TURNS.",
    )
    MAX_INFLIGHT_TURNS: int = Field(
        default=DEFAULT_MAX_INFLIGHT_TURNS,
        ge=1,
        le=MAX_INFLIGHT_TURNS_LIMIT,
        description="Turns (chat, completions, /answer, /retrieve, /debug/retrieval) run at "
        "once; a stream holds its turn until it ends. More wait up to MAX_QUEUE_SECONDS.",
    )
    MAX_QUEUE_SECONDS: float = Field(
        default=DEFAULT_MAX_QUEUE_SECONDS,
        ge=0,
        le=MAX_QUEUE_SECONDS_LIMIT,
        description="Longest a turn waits for a free slot before it is answered 503 with "
        "Retry-After; the queue holds at most MAX_INFLIGHT_TURNS turns (more: 429 at once). "
        "0: no queue.",
    )
    GUARD_URL: str = Field(
        default="",
        description="OpenAI-compatible base URL of a guard model's server (the policy's "
        "guard.url wins); empty: no guard model unless the policy names one.",
    )
    GUARD_MODEL: str = Field(default="", description="Guard model name sent to that server.")
    GUARD_FAMILY: str = Field(
        default="",
        description="Guard model family: llama-guard-3, llama-guard-4, shieldgemma, "
        "granite-guardian, qwen3guard, wildguard or custom (empty: llama-guard-3).",
    )
    GUARD_MODE: str = Field(
        default="",
        description="always, uncertain or off (empty: uncertain when GUARD_URL is set).",
    )
    GUARD_ANSWERS: str = Field(
        default="", description="true: the guard model judges final answers too."
    )
    GUARD_ON_ERROR: str = Field(
        default="", description="builtin, refuse or allow when the guard fails (empty: builtin)."
    )
    GUARD_TIMEOUT_SECONDS: str = Field(
        default="", description="Seconds one guard call may take (empty: 5)."
    )
    GUARD_ACCESS_SECRET: str = Field(
        default="", description="Bearer token for the guard model's server (never in a policy)."
    )
    EMBEDDING_TYPE: Literal["builtin", "local", "remote"] = Field(
        default="builtin",
        description="builtin: model-free hashing embedder; local: a sentence-transformers "
        "model read from disk; remote: an OpenAI-compatible /embeddings server.",
    )
    EMBEDDING_MODEL_ID: str = Field(
        default="",
        description="local: model directory or offline name (empty = the packaged "
        "all-MiniLM-L6-v2); remote: the model name sent to the server.",
    )
    EMBEDDING_URL: str = Field(
        default="",
        description="remote: base URL (http://tei:8080/v1) or a full .../embeddings URL.",
    )
    EMBEDDING_ACCESS_SECRET: str = Field(
        default="", description="remote: bearer token for the embeddings server."
    )
    VECTOR_DB_PERSIST_DIR: str = Field(
        default="",
        description="Directory of the persisted indexes, loaded at start and rewritten after "
        "every change; empty keeps indexes in memory only.",
    )
    VECTOR_DB_TYPE: Literal["embedded", "milvus"] = Field(
        default="embedded",
        description="embedded: FAISS + BM25 in the process, persisted to VECTOR_DB_PERSIST_DIR "
        "(one replica); milvus: the indexes live in the Milvus at VECTOR_DB_URL, shared by "
        "every runtime pointed at it.",
    )
    VECTOR_DB_URL: str = Field(
        default="",
        description="milvus: the Milvus server (http://milvus:19530), or a local file "
        "(/data/milvus.db) that milvus-lite serves to this one process.",
    )
    VECTOR_DB_ACCESS_SECRET: str = Field(
        default="", description="milvus: token (user:password or an API key) for the server."
    )
    VECTOR_DB_COLLECTION_PREFIX: str = Field(
        default="sentinel",
        pattern=r"^[A-Za-z][A-Za-z0-9_]{0,62}$",
        description="milvus: index NAME lives in collection PREFIX__NAME; runtimes that share "
        "a prefix share their indexes (the operator gives each RAGEngine its own).",
    )
    RUNTIME_API_KEY: str = Field(
        default="",
        description="When set, every API call needs 'Authorization: Bearer <key>'; with "
        "RUNTIME_KEYS_FILE too, it is one more key with every scope (runtime-api-key).",
    )
    RUNTIME_KEYS_FILE: str = Field(
        default="",
        description="Path of the scoped keys file (YAML: named keys, the indexes each may "
        "read and write, audit and policy access, rpm/tpm limits), hot-reloaded; empty: none.",
    )
    DEMO_CORPUS: bool = Field(
        default=False,
        description="Index the bundled demo corpus as 'demo' at start (sentinel serve: on).",
    )
    LOG_LEVEL: str = Field(default="INFO", description="Log level of the JSON log stream.")
    SENTINEL_TRACE_CAPTURE_CONTENT: bool = Field(
        default=False,
        description="With tracing on (OTEL_* variables, docs/tracing.md): put the prompt and "
        "the answer on the turn's spans. Off: spans carry decisions, codes, counts and hashes.",
    )
    MAX_REQUEST_BYTES: int = Field(
        default=8 * 1024 * 1024,
        ge=1024,
        description="Largest request body, counted as it arrives (chunked bodies too): 413 "
        "once passed.",
    )
    MAX_DOCUMENT_BYTES: int = Field(
        default=2 * 1024 * 1024,
        ge=1,
        description="Largest document text (UTF-8 bytes) an index request may carry: 413.",
    )
    MAX_DOCUMENTS_PER_REQUEST: int = Field(
        default=1000,
        ge=1,
        description="Most documents one index or update request may carry: 413.",
    )

    @field_validator("LLM_INFERENCE_URL")
    @classmethod
    def _strip_slash(cls, value: str) -> str:
        return value.strip().rstrip("/")

    @model_validator(mode="after")
    def _remote_embedding_needs_url(self) -> Settings:
        if self.EMBEDDING_TYPE == "remote" and not self.EMBEDDING_URL.strip():
            raise ValueError("EMBEDDING_TYPE=remote needs EMBEDDING_URL")
        return self

    @model_validator(mode="after")
    def _connections_cover_turns(self) -> Settings:
        problem = connections_problem(self.LLM_MAX_CONNECTIONS, self.MAX_INFLIGHT_TURNS)
        if problem is not None:
            raise ValueError(problem)
        return self

    def upstream_connections(self) -> int:
        """``LLM_MAX_CONNECTIONS``, or twice ``MAX_INFLIGHT_TURNS`` when it is 0."""
        return self.LLM_MAX_CONNECTIONS or CONNECTIONS_PER_TURN * self.MAX_INFLIGHT_TURNS

    @model_validator(mode="after")
    def _milvus_needs_url(self) -> Settings:
        if self.VECTOR_DB_TYPE == "milvus" and not self.VECTOR_DB_URL.strip():
            raise ValueError("VECTOR_DB_TYPE=milvus needs VECTOR_DB_URL")
        return self

    def persist_dir(self) -> Path | None:
        """Where indexes and the audit log live; None keeps them in memory."""
        value = self.VECTOR_DB_PERSIST_DIR.strip()
        return Path(value) if value else None

    def llm_base_url(self) -> str:
        """``LLM_INFERENCE_URL`` without its endpoint: KAITO documents the full endpoint
        (``.../v1/chat/completions`` or the legacy ``.../v1/completions``), OpenAI clients
        take the base (``.../v1``); all three are accepted."""
        url = self.LLM_INFERENCE_URL
        for endpoint in LLM_ENDPOINTS:
            if url.endswith(endpoint):
                return url.removesuffix(endpoint)
        return url

    def guard_environment(self) -> dict[str, str]:
        """The ``GUARD_*`` variables as ``guard.config.environment_defaults`` reads them."""
        return {
            name: getattr(self, name)
            for name in type(self).model_fields
            if name.startswith("GUARD_")
        }

    def chat_completions_url(self) -> str:
        """Where chat is posted (``upstream`` derives ``/models`` from it the same way)."""
        return f"{self.llm_base_url()}/chat/completions"
