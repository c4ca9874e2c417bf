"""The guard model's verdict on a final answer (``guard.answers: true``).

An answer is judged whole, with the question it answers, before any of it leaves: a response
that is not streamed is judged before the output scanners; a streamed one is generated whole
first (``streamed.whole_reason``: ``guard_answers``) or, without an index, read whole from
the model and then sent in pieces. An unsafe verdict replaces every choice's text with the
policy's ``blockMessage`` (``finish_reason: content_filter``, decision ``block``); a guard
that failed blocks only under ``guard.onError: refuse``. Refusals and blocks are not judged:
Sentinel wrote them.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from typing import Any

from sentinel_runtime.answer.services import Services
from sentinel_runtime.guard.types import GuardInput, GuardJudgement
from sentinel_runtime.guardrails.engine import GuardrailsEngine
from sentinel_runtime.guardrails.policy import DEFAULT_BLOCK_MESSAGE
from sentinel_runtime.llm.messages import message_text
from sentinel_runtime.observability import events
from sentinel_runtime.observability.logs import log_event
from sentinel_runtime.pipeline import config as pipeline_config
from sentinel_runtime.pipeline import runner

logger = logging.getLogger(__name__)
JUDGED_DECISIONS = frozenset({"answer", "summary"})


@dataclass(frozen=True)
class AnswerVerdict:
    judgement: GuardJudgement
    block_message: str | None  # the text that replaces the answer; None: it stands


def active(services: Services, engine: GuardrailsEngine | None) -> bool:
    config = pipeline_config.for_policy(engine.policy if engine else None, services.guard_defaults)
    return config.guard.judges_answers


async def judge(
    services: Services, engine: GuardrailsEngine | None, prompt: str, answer: str
) -> AnswerVerdict | None:
    """The guard's verdict on ``answer`` to ``prompt``; None when no guard judges answers
    under this policy version or there is no text to judge."""
    config = pipeline_config.for_policy(engine.policy if engine else None, services.guard_defaults)
    judge_ = services.guards.for_config(config.guard) if config.guard.judges_answers else None
    if judge_ is None or not answer.strip():
        return None
    judgement = await judge_.judge(GuardInput(prompt=prompt, answer=answer))
    failed = judgement.outcome != "ok"
    blocked = judgement.unsafe is True or (failed and config.guard.on_error == "refuse")
    message = None
    if blocked:
        message = engine.policy.block_message if engine is not None else DEFAULT_BLOCK_MESSAGE
    return AnswerVerdict(judgement, message)


def settle(result: runner.PipelineResult, verdict: AnswerVerdict | None) -> None:
    """Record the verdict on the result; a block makes it the answer (in place)."""
    if verdict is None:
        return
    result.answer_guard = verdict.judgement
    if verdict.block_message is None:
        return
    result.answer = dataclasses.replace(
        result.answer, decision="block", text=verdict.block_message, citations=()
    )
    log_event(
        logger,
        events.GUARD_ANSWER_BLOCKED,
        logging.WARNING,
        request_id=result.request_id,
        model=verdict.judgement.model,
        outcome=verdict.judgement.outcome,
        categories=list(verdict.judgement.verdict.categories) if verdict.judgement.verdict else [],
    )


async def guard_completion(
    services: Services,
    engine: GuardrailsEngine | None,
    result: runner.PipelineResult,
    response: dict[str, Any],
) -> None:
    """Judge a ``chat.completion``'s first choice (in place: a block replaces every choice)."""
    if result.decision not in JUDGED_DECISIONS:
        return
    choices = response.get("choices") or []
    if not choices:
        return
    text = message_text(choices[0].get("message") or {})
    verdict = await judge(services, engine, result.prompt.text, text)
    settle(result, verdict)
    if verdict is None or verdict.block_message is None:
        return
    for choice in choices:
        message = choice.get("message")
        if isinstance(message, dict):
            message["content"] = verdict.block_message
            message.pop("tool_calls", None)
        choice["finish_reason"] = "content_filter"
