"""One generation call as the pipeline asks for it, and what comes back.

The pipeline never builds request bodies: it says which messages, how many answers, the
client's sampling parameters and, optionally, a JSON schema the reply must follow. The
generator (``llm.upstream``) turns that into whatever the upstream understands and reports
which structured-output form it used, the choices' texts with their finish reasons, and the
token usage.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

# Client parameters a generation call passes on (OpenAI chat-completions names).
SAMPLING_PARAMETERS = (
    "temperature",
    "top_p",
    "max_tokens",
    "stop",
    "seed",
    "presence_penalty",
    "frequency_penalty",
)


class StructuredOutputUnsupportedError(Exception):
    """The upstream accepts no form of schema-constrained output (remembered per upstream)."""


@dataclass(frozen=True)
class ChatCall:
    messages: list[dict[str, Any]]
    n: int = 1
    params: Mapping[str, Any] = field(default_factory=dict)  # model and SAMPLING_PARAMETERS
    schema: dict[str, Any] | None = None  # a JSON schema the reply must follow


@dataclass(frozen=True)
class Reply:
    text: str
    finish_reason: str | None = None

    @property
    def cut(self) -> bool:
        """The upstream stopped at its token limit: the reply is unfinished."""
        return self.finish_reason == "length"


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
        )

    def describe(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
        }

    @classmethod
    def of(cls, usage: Any) -> Usage:
        """From an OpenAI ``usage`` object (anything else counts as nothing)."""
        if not isinstance(usage, Mapping):
            return cls()

        def count(key: str) -> int:
            value = usage.get(key)
            return value if isinstance(value, int) and value >= 0 else 0

        return cls(count("prompt_tokens"), count("completion_tokens"))


@dataclass(frozen=True)
class Completion:
    replies: tuple[Reply, ...]
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    structured: str | None = None  # the response_format form used: json_schema | json_object


GenerateFn = Callable[[ChatCall], Awaitable[Completion]]
