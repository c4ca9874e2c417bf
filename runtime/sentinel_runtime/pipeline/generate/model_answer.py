"""Stage 4 through the upstream model: one grounded answer, with the conversation around it.

The messages are Sentinel's grounding rules with the kept chunks, then the client's own
conversation (``conversation.prepare``); the call carries the client's model and sampling
parameters. The citation mode follows the policy (``citations.mode``): ``auto`` asks for
schema-constrained JSON and, when the upstream accepts no such form, asks again for inline
markers; ``structured`` insists; ``inline`` never asks for a schema. A reply cut at the token
limit is asked for once more with twice the room; if it is still cut, the answer says so
(``details["cut"]``) and the response's ``finish_reason`` is ``length``. With best-of-N the
composite reward (``selection``) picks among the replies. The usage is the upstream's, summed
over the calls; a call whose upstream reports none is counted (:func:`counted_usage`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sentinel_runtime.guardrails.scanners.token_limit import offline_encoding
from sentinel_runtime.index.types import Hit
from sentinel_runtime.llm import calls
from sentinel_runtime.llm.messages import message_text
from sentinel_runtime.pipeline import conversation as conversation_mod
from sentinel_runtime.pipeline.cite.citations import CitationConfig
from sentinel_runtime.pipeline.generate import grounded, selection
from sentinel_runtime.pipeline.types import Answer, Claim, Conflict, Decision

# Room asked for when a cut reply is retried and the client set no max_tokens.
RETRY_MAX_TOKENS = 1024
RETRY_MAX_TOKENS_CAP = 4096


@dataclass
class ModelAnswer:
    answer: Answer
    claims: tuple[Claim, ...]
    rewards: tuple[selection.Reward, ...] = ()
    usage: calls.Usage = field(default_factory=calls.Usage)
    trace: dict[str, Any] = field(default_factory=dict)  # the sentinel.generation object


@dataclass(frozen=True)
class Question:
    """What the model is asked: the question, its evidence and the conversation around it."""

    query: str
    kept: Sequence[Hit]
    decision: Decision
    conflicts: Sequence[Conflict] = ()
    conversation: conversation_mod.Conversation = field(
        default_factory=conversation_mod.Conversation
    )


async def answer(
    question: Question,
    generate: calls.GenerateFn,
    *,
    citations: CitationConfig,
    best_of_n: int = 1,
    context_window: int = 0,
) -> ModelAnswer:
    def ask(structured: bool) -> Any:
        return _ask(
            question,
            generate,
            citations=citations,
            best_of_n=best_of_n,
            context_window=context_window,
            structured=structured,
        )

    structured = citations.mode != "inline"
    try:
        completion, prepared, retried = await ask(structured)
    except calls.StructuredOutputUnsupportedError as exc:
        if citations.mode == "structured":  # the policy insists: no answer rather than prose
            error = f"{exc}, and the policy's citations.mode is structured"
            failed = Answer(
                decision=question.decision,
                text="",
                generator="llm",
                details={"format_error": error},
            )
            return ModelAnswer(failed, (), trace={"citationMode": "structured", "error": error})
        structured = False
        completion, prepared, retried = await ask(structured)
    kept, decision = question.kept, question.decision
    candidates = [_read(reply, kept, decision) for reply in completion.replies]
    rewards: tuple[selection.Reward, ...] = ()
    best = candidates[0]
    if len(candidates) > 1:
        chunks = {h.chunk.chunk_id: h.chunk.text for h in kept}
        chosen, scored = selection.select_best(
            [c[0] for c in candidates], question.query, chunks, citations
        )
        best = next(c for c in candidates if c[0] is chosen)
        rewards = tuple(scored)
    described = trace(
        question,
        prepared,
        structured=structured,
        form=completion.structured,
        model=completion.model,
        replies=len(completion.replies),
        retried=retried,
        cut=bool(best[0].details.get("cut")),
    )
    return ModelAnswer(best[0], best[1], rewards, completion.usage, described)


async def _ask(
    question: Question,
    generate: calls.GenerateFn,
    *,
    citations: CitationConfig,
    best_of_n: int,
    context_window: int,
    structured: bool,
) -> tuple[calls.Completion, conversation_mod.Prepared, bool]:
    call, prepared = chat_call(
        question,
        citations=citations,
        best_of_n=best_of_n,
        context_window=context_window,
        structured=structured,
    )
    params = dict(call.params)
    completion = _with_usage(call, await generate(call))
    if not completion.replies or not completion.replies[0].cut:
        return completion, prepared, False
    room = min(2 * int(params.get("max_tokens") or RETRY_MAX_TOKENS // 2), RETRY_MAX_TOKENS_CAP)
    retry = dataclasses.replace(call, params={**params, "max_tokens": room})
    again = _with_usage(retry, await generate(retry))
    usage = completion.usage + again.usage
    return dataclasses.replace(again, usage=usage), prepared, True


def chat_call(
    question: Question,
    *,
    citations: CitationConfig,
    best_of_n: int = 1,
    context_window: int = 0,
    structured: bool,
) -> tuple[calls.ChatCall, conversation_mod.Prepared]:
    """The call that asks for ``question``'s answer: Sentinel's grounding rules with the
    kept chunks, the client's conversation (trimmed to the context window) and parameters,
    and with ``structured`` the JSON schema of a cited answer (else inline markers)."""
    mode: grounded.Mode = "structured" if structured else "inline"
    kept = question.kept
    system = grounded.system_message(
        kept,
        mode=mode,
        decision=question.decision,
        conflicts=question.conflicts,
        max_citations=citations.max_citations,
    )
    params = dict(question.conversation.params)
    reserve = int(params.get("max_tokens") or 0)
    prepared = conversation_mod.prepare(
        question.conversation,
        [system],
        question.query,
        context_window=context_window,
        reserve=reserve,
    )
    schema = (
        grounded.answer_schema([h.chunk.chunk_id for h in kept], citations.max_citations)
        if structured
        else None
    )
    return calls.ChatCall([system, *prepared.messages], best_of_n, params, schema), prepared


def trace(
    question: Question,
    prepared: conversation_mod.Prepared,
    *,
    structured: bool,
    form: str | None,
    model: str,
    replies: int,
    retried: bool,
    cut: bool,
) -> dict[str, Any]:
    """The ``sentinel.generation`` object: how the model was asked and what it did."""
    return {
        "citationMode": "structured" if structured else "inline",
        "structuredForm": form,
        "model": model or None,
        "replies": replies,
        "retriedForLength": retried,
        "cut": cut,
        "conversation": {"turns": prepared.turns, "trimmed": prepared.trimmed},
        "clientSystemMessages": len(question.conversation.system),
    }


def counted_usage(messages: Sequence[Mapping[str, Any]], texts: Sequence[str]) -> calls.Usage:
    """Token usage counted as an OpenAI model reports it, for a generator that reports none
    (the embedded ones; an upstream that leaves ``usage`` out): the prompt is ``messages``
    (``conversation.count_tokens``, the context window's count), the completion the
    generated ``texts`` (cl100k_base tokens, no per-message overhead)."""
    prompt = conversation_mod.count_tokens([{"content": message_text(dict(m))} for m in messages])
    encoding = offline_encoding("cl100k_base")
    completion = sum(len(encoding.encode(text, disallowed_special=())) for text in texts)
    return calls.Usage(prompt, completion)


def _with_usage(call: calls.ChatCall, completion: calls.Completion) -> calls.Completion:
    """``completion`` with its usage counted when the upstream reported none."""
    if completion.usage != calls.Usage():
        return completion
    counted = counted_usage(call.messages, [reply.text for reply in completion.replies])
    return dataclasses.replace(completion, usage=counted)


def _read(
    reply: calls.Reply, kept: Sequence[Hit], decision: Decision
) -> tuple[Answer, tuple[Claim, ...]]:
    try:
        answer, claims = grounded.read_reply(reply.text, kept, decision=decision)
    except grounded.AnswerFormatError as exc:
        error = str(exc)
        if reply.cut:
            error += " (the reply was cut at the token limit)"
        answer = Answer(
            decision=decision, text=reply.text, generator="llm", details={"format_error": error}
        )
        return answer, ()
    if reply.cut:
        answer = dataclasses.replace(answer, details={**answer.details, "cut": True})
    return answer, claims
