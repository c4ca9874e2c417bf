"""Request and response models of the OpenAI-compatible and guardrails endpoints."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

MAX_SCAN_CHARS = 1_000_000


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[dict[str, Any]] | None = None


class ChatCompletionRequest(BaseModel):
    """OpenAI's request body; unknown fields (temperature, tools, ...) pass through upstream."""

    model_config = ConfigDict(extra="allow")

    model: str | None = None
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False
    index_name: str | None = Field(
        default=None, description="KAITO extension: answer from this index (RAG pipeline)."
    )


class ScanRequest(BaseModel):
    text: str = Field(max_length=MAX_SCAN_CHARS)


class ScanResponse(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    text: str
    action: Literal["redact", "block"] | None
    policy_hash: str
    scanners: list[dict[str, Any]]
    fail_open: list[dict[str, Any]]
