"""Plain data of a guard-model call: what is judged, what is sent, what came back, the verdict.

A family adapter (``guard.families``) is two pure functions over these types: ``build`` turns
a ``GuardInput`` into the ``GuardRequest`` its model expects, ``parse`` reads the model's
``GuardReply`` into a ``GuardVerdict``. The client (``guard.client``) does the HTTP call in
between; nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Subject = Literal["prompt", "answer"]


@dataclass(frozen=True)
class GuardInput:
    """What is judged: the user's turn, and for an answer the assistant's reply to it."""

    prompt: str
    answer: str | None = None

    @property
    def subject(self) -> Subject:
        return "prompt" if self.answer is None else "answer"


@dataclass(frozen=True)
class GuardRequest:
    """One request to an OpenAI-compatible server: chat ``messages`` for
    ``/chat/completions``, or a raw ``prompt`` for ``/completions`` (exactly one is set).
    ``params`` are extra body fields (``max_tokens``, ``temperature``, ``logprobs``,
    ``top_logprobs``, vLLM's ``chat_template_kwargs`` ...)."""

    messages: tuple[dict[str, str], ...] | None = None
    prompt: str | None = None
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def endpoint(self) -> Literal["chat", "completions"]:
        return "chat" if self.messages is not None else "completions"


@dataclass(frozen=True)
class GuardReply:
    """The model's reply: its text, and the first generated token's top log-probabilities
    (token text -> natural-log probability) when the server returned them."""

    text: str
    first_token_logprobs: dict[str, float] | None = None


@dataclass(frozen=True)
class GuardVerdict:
    """What the guard said. ``categories`` are the family's own codes or names as the model
    wrote them ("S1", "Violent"); ``risk_categories`` the same mapped onto Sentinel's risk
    categories (``pipeline.signals.harm.CATEGORIES``); ``probability`` is P(unsafe) when the
    reply carried log-probabilities, else None."""

    unsafe: bool
    categories: tuple[str, ...] = ()
    risk_categories: tuple[str, ...] = ()
    probability: float | None = None


class GuardFormatError(ValueError):
    """The guard's reply is not in its family's format (the caller applies ``onError``)."""


class Family(Protocol):
    """One guard-model family's request format and reply grammar."""

    name: str

    def build(self, item: GuardInput) -> GuardRequest: ...

    def parse(self, reply: GuardReply, item: GuardInput) -> GuardVerdict: ...


Outcome = Literal["ok", "timeout", "error", "malformed", "circuit_open", "skipped"]


@dataclass(frozen=True)
class GuardJudgement:
    """One guard stage's result: what the guard said (``verdict``, when ``outcome`` is
    ``ok``), or why it said nothing. ``detail`` is a short code, never the judged text."""

    subject: Subject
    outcome: Outcome
    family: str
    model: str
    verdict: GuardVerdict | None = None
    latency_ms: float = 0.0
    detail: str = ""

    @property
    def unsafe(self) -> bool | None:
        """True or False when the guard answered; None when it did not."""
        return None if self.verdict is None else self.verdict.unsafe

    @property
    def verdict_label(self) -> Literal["safe", "unsafe", "none"]:
        if self.verdict is None:
            return "none"
        return "unsafe" if self.verdict.unsafe else "safe"

    def describe(self) -> dict[str, Any]:
        """The trace's view: verdict, categories, probability, latency, which model."""
        described: dict[str, Any] = {
            "subject": self.subject,
            "outcome": self.outcome,
            "verdict": self.verdict_label,
            "family": self.family,
            "model": self.model,
            "latencyMs": round(self.latency_ms, 3),
        }
        if self.verdict is not None:
            described["categories"] = list(self.verdict.categories)
            described["riskCategories"] = list(self.verdict.risk_categories)
            described["probability"] = (
                None if self.verdict.probability is None else round(self.verdict.probability, 4)
            )
        if self.detail:
            described["detail"] = self.detail
        return described
