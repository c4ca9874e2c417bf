"""Request and response models of the OpenAI-compatible and guardrails endpoints."""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from sentinel_runtime.index.manager import check_name

MAX_SCAN_CHARS = 1_000_000
SESSION_ID_CHARS = 256
MAX_GOAL_CHARS = 10_000

# Every index name a request carries (body field, query or path parameter) is checked by
# the index manager's own rule, so a name the store would refuse is a 400 at the edge.
IndexName = Annotated[str, AfterValidator(check_name)]


def non_finite_number(value: Any, where: str = "") -> str | None:
    """Where in a parsed JSON value a NaN or an infinity sits (``None``: nowhere)."""
    if isinstance(value, float) and not math.isfinite(value):
        return where or "body"
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = non_finite_number(item, f"{where}.{key}" if where else str(key))
        if found:
            return found
    return None


class ForwardedBody(BaseModel):
    """A body whose fields reach the model server as JSON. Python's parser accepts NaN and
    Infinity, which JSON has not (RFC 8259), so the upstream request could not be written:
    a 400 naming the field, for known and unknown fields alike."""

    @model_validator(mode="before")
    @classmethod
    def _finite_numbers(cls, data: Any) -> Any:
        where = non_finite_number(data)
        if where:
            raise ValueError(f"{where}: NaN and Infinity are not JSON numbers")
        return data


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[dict[str, Any]] | None = None


# Why log probabilities are refused, on chat and legacy completions alike.
LOGPROBS_REFUSED = (
    "log probabilities are not available: the answer is scanned and may be redacted, and "
    "per-token log probabilities would show the text removed"
)
StrictUnitInterval = Annotated[float, Field(strict=True, ge=0, le=1)]
Penalty = Annotated[float, Field(strict=True, ge=-2, le=2)]
TokenCount = Annotated[int, Field(strict=True, ge=1)]
Temperature = Annotated[float, Field(strict=True, ge=0, le=2)]
ChoiceCount = Annotated[int, Field(strict=True, ge=1, le=128)]
Seed = Annotated[int, Field(strict=True)]
ModelName = Annotated[str, Field(max_length=256)]


class StreamOptions(BaseModel):
    include_usage: bool = False


class ChatCompletionRequest(ForwardedBody):
    """OpenAI's request body. The parameters below are checked here (type and range) and
    honoured; unknown fields pass to the upstream model server unchanged in a plain chat
    (a RAG turn passes only the sampling parameters). Parameters whose result could carry
    text past the guardrails are refused by name (``logprobs``, ``top_logprobs``, audio
    output); the harmless ones Sentinel does not use (``user``, ``metadata``, ``store``,
    ``service_tier``, ``parallel_tool_calls``, ``prediction``) are ignored."""

    model_config = ConfigDict(extra="allow")

    model: ModelName | None = None
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False
    stream_options: StreamOptions | None = None
    max_tokens: TokenCount | None = None
    max_completion_tokens: TokenCount | None = None
    temperature: Temperature | None = None
    top_p: StrictUnitInterval | None = None
    n: ChoiceCount | None = None
    presence_penalty: Penalty | None = None
    frequency_penalty: Penalty | None = None
    stop: str | list[str] | None = Field(default=None, max_length=16)
    seed: Seed | None = None
    logprobs: bool | None = None
    top_logprobs: Annotated[int, Field(strict=True, ge=0, le=20)] | None = None
    modalities: list[str] | None = None
    audio: dict[str, Any] | None = None
    index_name: IndexName | None = Field(
        default=None, description="KAITO extension: answer from this index (RAG pipeline)."
    )
    sentinel_session: str | None = Field(
        default=None,
        min_length=1,
        max_length=SESSION_ID_CHARS,
        description="Sentinel extension: the governance session whose facts the proposed tool "
        "calls are judged by (none: a fresh session kept nowhere).",
    )

    @field_validator("logprobs", "top_logprobs")
    @classmethod
    def _no_logprobs(cls, value: bool | int | None) -> bool | int | None:
        if value:
            raise ValueError(LOGPROBS_REFUSED)
        return value

    @field_validator("modalities")
    @classmethod
    def _text_only(cls, value: list[str] | None) -> list[str] | None:
        if value and set(value) - {"text"}:
            raise ValueError("only text output is available: guardrails scan text")
        return value

    @field_validator("audio")
    @classmethod
    def _no_audio(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            raise ValueError("audio output is not available: guardrails scan text")
        return value


def _refuse_token_arrays(value: Any, field: str) -> Any:
    """A list of token ids (or of such lists) is refused by name, before pydantic's own
    message for each member."""
    if isinstance(value, list) and any(
        isinstance(item, int) or (isinstance(item, list) and item) for item in value
    ):
        raise ValueError(
            f"{field} as token arrays is not supported: send text (Sentinel's guardrails "
            "and tokenizer work on text)"
        )
    return value


class CompletionRequest(ForwardedBody):
    """OpenAI's legacy ``/v1/completions`` body. The prompt becomes one user message of a chat
    turn (the same guarded pipeline), so the sampling parameters are checked as in
    :class:`ChatCompletionRequest`. Only one text prompt is served: a list of several prompts
    and token arrays are refused (``prompt``). ``echo``, ``suffix``, ``best_of`` other than 1
    and ``logprobs`` are refused by name (each would return text or scores the guardrails
    did not judge); ``user`` and unknown fields are ignored."""

    model_config = ConfigDict(extra="allow")

    model: ModelName | None = None
    prompt: str | list[str]
    stream: bool = False
    stream_options: StreamOptions | None = None
    max_tokens: TokenCount | None = None
    temperature: Temperature | None = None
    top_p: StrictUnitInterval | None = None
    n: ChoiceCount | None = None
    presence_penalty: Penalty | None = None
    frequency_penalty: Penalty | None = None
    stop: str | list[str] | None = Field(default=None, max_length=16)
    seed: Seed | None = None
    logprobs: Annotated[int, Field(strict=True, ge=0, le=5)] | None = None
    echo: bool | None = None
    suffix: str | None = None
    best_of: ChoiceCount | None = None
    index_name: IndexName | None = Field(
        default=None, description="KAITO extension: answer from this index (RAG pipeline)."
    )
    sentinel_session: str | None = Field(
        default=None,
        min_length=1,
        max_length=SESSION_ID_CHARS,
        description="Sentinel extension: the governance session (as in chat completions).",
    )

    @field_validator("prompt", mode="before")
    @classmethod
    def _no_tokens(cls, value: Any) -> Any:
        return _refuse_token_arrays(value, "prompt")

    @field_validator("prompt")
    @classmethod
    def _one_prompt(cls, value: str | list[str]) -> str | list[str]:
        if isinstance(value, list) and len(value) != 1:
            raise ValueError(
                f"a list of {len(value)} prompts: send one prompt per request (Sentinel "
                "returns one guarded answer per request)"
            )
        return value

    @field_validator("logprobs")
    @classmethod
    def _no_logprobs(cls, value: int | None) -> int | None:
        if value is not None:
            raise ValueError(LOGPROBS_REFUSED)
        return value

    @field_validator("echo")
    @classmethod
    def _no_echo(cls, value: bool | None) -> bool | None:
        if value:
            raise ValueError("echo is not supported: the answer holds the guarded text only")
        return value

    @field_validator("suffix")
    @classmethod
    def _no_suffix(cls, value: str | None) -> str | None:
        if value:
            raise ValueError("suffix (insertion) is not supported")
        return value

    @field_validator("best_of")
    @classmethod
    def _one_best_of(cls, value: int | None) -> int | None:
        if value is not None and value != 1:
            raise ValueError(
                f"best_of={value} is not supported: Sentinel generates one guarded answer"
            )
        return value

    def text(self) -> str:
        """The one prompt."""
        return self.prompt if isinstance(self.prompt, str) else self.prompt[0]


MAX_EMBEDDING_INPUTS = 2048  # OpenAI's limit on one request's inputs


class EmbeddingRequest(ForwardedBody):
    """OpenAI's ``/v1/embeddings`` body, embedded by the runtime's own embedder (the one its
    indexes use, whatever ``model`` says). Token arrays are refused (``input``);
    ``dimensions`` is accepted only when it equals the embedder's; ``user`` and unknown
    fields are ignored."""

    model_config = ConfigDict(extra="allow")

    input: str | list[str] = Field(
        description=f"One text or a list of at most {MAX_EMBEDDING_INPUTS}; each non-empty."
    )
    model: ModelName | None = None
    encoding_format: Literal["float", "base64"] = "float"
    dimensions: Annotated[int, Field(strict=True, ge=1)] | None = None

    @field_validator("input", mode="before")
    @classmethod
    def _no_tokens(cls, value: Any) -> Any:
        return _refuse_token_arrays(value, "input")

    @field_validator("input")
    @classmethod
    def _texts(cls, value: str | list[str]) -> str | list[str]:
        texts = [value] if isinstance(value, str) else value
        if not texts:
            raise ValueError("input must hold at least one text")
        if len(texts) > MAX_EMBEDDING_INPUTS:
            raise ValueError(f"{len(texts)} inputs: at most {MAX_EMBEDDING_INPUTS} per request")
        if any(not text for text in texts):
            raise ValueError("every input must be a non-empty string")
        return value

    def texts(self) -> list[str]:
        return [self.input] if isinstance(self.input, str) else list(self.input)


class ScanRequest(BaseModel):
    text: str = Field(max_length=MAX_SCAN_CHARS)


class ScanResponse(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    text: str
    action: Literal["redact", "block"] | None
    policy_hash: str
    scanners: list[dict[str, Any]]
    fail_open: list[dict[str, Any]]


class AnswerRequest(BaseModel):
    """Seed 004's ``POST /answer``; ``index_name`` may be left out when one index exists."""

    query: str = Field(min_length=1, max_length=MAX_SCAN_CHARS)
    top_k: int = Field(default=5, ge=1, le=100)
    freshness_days: int = Field(default=90, ge=1, le=36_500)
    index_name: IndexName | None = None


class RetrievedChunk(BaseModel):
    model_config = ConfigDict(extra="allow")

    doc_id: str = ""
    chunk_id: str = Field(min_length=1)
    timestamp: str | None = None
    similarity: float | None = None
    text: str = ""


class ValidateRequest(BaseModel):
    """Seed 004's ``POST /validate``."""

    answer: str = Field(max_length=MAX_SCAN_CHARS)
    citations: list[str] = Field(max_length=1000)
    retrieved_chunks: list[RetrievedChunk] = Field(default_factory=list, max_length=1000)


# -- governed tool calls (docs/contracts.md) ----------------------------------------------

SessionId = Annotated[str, Field(min_length=1, max_length=SESSION_ID_CHARS)]
ContextValue = Annotated[str | int | float, Field(union_mode="left_to_right")]


class OpenSessionRequest(BaseModel):
    """The application opens a session: its trusted bindings (the logged-in user) and facts."""

    session_id: SessionId | None = None
    contexts: dict[str, ContextValue] = Field(default_factory=dict, max_length=100)
    facts: list[str] = Field(default_factory=list, max_length=1000)


class QueryRequest(BaseModel):
    session_id: SessionId
    goal: str = Field(min_length=1, max_length=MAX_GOAL_CHARS)
    max_answers: int = Field(default=20, ge=1, le=1000)


class ContextRequest(BaseModel):
    session_id: SessionId
    name: str = Field(min_length=1, max_length=200)
    value: ContextValue


class AnswerFactRequest(BaseModel):
    session_id: SessionId
    fact: str = Field(min_length=1, max_length=MAX_GOAL_CHARS)


class InvokeRequest(BaseModel):
    session_id: SessionId
    tool: str = Field(min_length=1, max_length=200)
    arguments: dict[str, Any] = Field(default_factory=dict)
