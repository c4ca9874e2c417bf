"""The client's conversation around a RAG question: what reaches the model, and what retrieval
looks up for a follow-up.

A chat request carries more than its last question: the application's system messages,
earlier turns and sampling parameters. All of it goes to the model (issue 15): Sentinel's
grounding rules first (they win on conflict), then the client's system messages, then the
history, trimmed oldest first to fit the context window, then the question. A follow-up
("and for monthly plans?") names too little to retrieve with, so retrieval looks up the
previous user turn joined with the question; the trace records both the trim and the rewrite.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import tiktoken

from sentinel_runtime.guardrails.scanners.token_limit import offline_encoding
from sentinel_runtime.index.analysis import keywords
from sentinel_runtime.llm.calls import SAMPLING_PARAMETERS
from sentinel_runtime.llm.messages import message_text

# A question with at most this many topic words, or opening like a continuation, leans on
# the turn before it.
FOLLOW_UP_MAX_TERMS = 3
_CONTINUATION = re.compile(
    r"^\s*(?:and|also|but|or|what\s+about|how\s+about|and\s+what\s+about|same\s+for|"
    r"und|aber|was\s+ist\s+mit|wie\s+sieht\s+es\s+mit)\b",
    re.IGNORECASE,
)
_REFERS_BACK = re.compile(
    r"\b(?:it|its|they|them|their|that|this|those|these|he|she|his|her|there|"
    r"es|sie|ihr|ihre|das|dies|diese|dort)\b",
    re.IGNORECASE,
)
# Per message, the chat format's own tokens (role markers); OpenAI's cookbook counts 3-4.
TOKENS_PER_MESSAGE = 4


@dataclass(frozen=True)
class Conversation:
    """A chat request without its last question: the client's system texts, the turns
    before the question (``user`` / ``assistant`` messages, oldest first) and the parameters
    the model call passes on."""

    system: tuple[str, ...] = ()
    history: tuple[dict[str, str], ...] = ()
    params: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_messages(
        cls, messages: Sequence[Mapping[str, Any]], params: Mapping[str, Any] | None = None
    ) -> Conversation:
        """Split OpenAI ``messages`` (the last user message is the question, kept out)."""
        last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
        system: list[str] = []
        history: list[dict[str, str]] = []
        for position, message in enumerate(messages):
            if position == last_user:
                continue
            role, text = message.get("role"), message_text(dict(message))
            if not text.strip():
                continue
            if role in ("system", "developer"):
                system.append(text)
            elif role in ("user", "assistant") and position < last_user:
                history.append({"role": str(role), "content": text})
        given = dict(params or {})
        if "max_tokens" not in given and "max_completion_tokens" in given:
            # The newer name (what current OpenAI clients send); every upstream the pipeline
            # talks to reads the older one, and the length retry doubles it.
            given["max_tokens"] = given["max_completion_tokens"]
        passed = {k: v for k, v in given.items() if k in (*SAMPLING_PARAMETERS, "model")}
        return cls(tuple(system), tuple(history), passed)


@dataclass(frozen=True)
class Prepared:
    """The messages after Sentinel's own system message, and what was done to fit them."""

    messages: tuple[dict[str, str], ...]
    turns: int  # history turns the client sent
    trimmed: int  # of those, dropped to fit the context window (oldest first)


@cache
def _encoding() -> tiktoken.Encoding:
    return offline_encoding("cl100k_base")


def count_tokens(messages: Sequence[Mapping[str, str]]) -> int:
    """Tokens of chat messages as an OpenAI-style model counts them (cl100k, approximately)."""
    encoding = _encoding()
    return sum(
        TOKENS_PER_MESSAGE + len(encoding.encode(m.get("content", ""), disallowed_special=()))
        for m in messages
    )


def prepare(
    conversation: Conversation,
    grounding: Sequence[Mapping[str, str]],
    question: str,
    *,
    context_window: int = 0,
    reserve: int = 0,
) -> Prepared:
    """The client's part of the messages, placed after ``grounding`` (Sentinel's system
    message): its system texts, then as much history as fits ``context_window`` tokens
    (0: no limit) with ``reserve`` tokens left for the answer, newest turns kept, then the
    question. System texts and the question are never dropped."""
    system = [{"role": "system", "content": text} for text in conversation.system]
    ask = [{"role": "user", "content": question}]
    history = list(conversation.history)
    turns = len(history)
    if context_window > 0:
        fixed = count_tokens([*grounding, *system, *ask]) + reserve
        room = context_window - fixed
        kept: list[dict[str, str]] = []
        for turn in reversed(history):
            cost = count_tokens([turn])
            if cost > room:
                break
            kept.insert(0, turn)
            room -= cost
        # A kept history starts with a user turn: an assistant reply without its question
        # reads as if the model had said it unprompted.
        while kept and kept[0]["role"] != "user":
            kept.pop(0)
        history = kept
    return Prepared(tuple([*system, *history, *ask]), turns, turns - len(history))


def leans_on(conversation: Conversation, question: str) -> str | None:
    """The previous user turn when ``question`` is a follow-up that needs it to be looked
    up ("and for monthly plans?"); None when the question stands on its own."""
    previous = [t["content"] for t in conversation.history if t["role"] == "user"]
    if not previous:
        return None
    terms = keywords(question)
    follows = (
        _CONTINUATION.match(question) is not None
        or (len(terms) <= FOLLOW_UP_MAX_TERMS and _REFERS_BACK.search(question) is not None)
        or len(terms) <= 1
    )
    return previous[-1] if follows else None
