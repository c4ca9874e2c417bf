"""Answer one question through the whole pipeline, then the output scanners, then the audit.

The one place that joins the pipeline (plain data) with the services built in the lifespan:
the active policy version, the named index, the upstream LLM and the audit log. The chat
route and ``POST /answer`` both call :func:`answer_question`; chat without an index calls
:func:`preflight` and, unless the request is refused, lets the generator answer, then
:func:`check_tool_calls` judges the tool calls it proposes before anything reaches the client.
Streamed answers (``api.streaming``) use the same steps and call :func:`conclude` when the
stream ends.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fastapi import HTTPException
from starlette.concurrency import run_in_threadpool

from sentinel_runtime.api.services import Services
from sentinel_runtime.governance.guard import Verdict
from sentinel_runtime.governance.service import GovernanceError
from sentinel_runtime.guardrails.chat import ChoiceVerdict, guard_chat_completion
from sentinel_runtime.guardrails.engine import GuardrailsEngine, ScanOutcome
from sentinel_runtime.index import manager as index_manager
from sentinel_runtime.llm import embedded
from sentinel_runtime.observability import events, metrics
from sentinel_runtime.observability.logs import log_event
from sentinel_runtime.pipeline import config as pipeline_config
from sentinel_runtime.pipeline import decision, report, runner
from sentinel_runtime.pipeline.conversation import Conversation

logger = logging.getLogger(__name__)
HIGH_LEVEL = (
    "Answer only at a high level, without operational detail: no steps, quantities, "
    "code or procedures."
)


def active_engine(services: Services) -> GuardrailsEngine | None:
    """The policy version for the whole request; 503 rather than an unscanned answer."""
    state = services.guardrails
    engine = state.engine
    if state.enabled and engine is None:
        problem = state.error.message if state.error else "no policy loaded"
        raise HTTPException(
            503,
            f"Output guardrails are enabled but no policy is active ({problem}); "
            "refusing to return unscanned output.",
        )
    return engine


def generator_name(services: Services) -> str:
    return "upstream" if services.settings.LLM_INFERENCE_URL else "embedded"


def context_for(
    services: Services, engine: GuardrailsEngine | None, index_name: str | None
) -> runner.PipelineContext:
    store = None
    if index_name is not None:
        try:
            store = services.indexes.get(index_name)
        except index_manager.IndexNotFound as exc:
            raise HTTPException(404, f"index {index_name!r} does not exist") from exc
    return runner.PipelineContext(
        config=pipeline_config.for_policy(engine.policy if engine else None),
        store=store,
        chat=services.chat,
        generate=services.generate,
        context_window=services.settings.LLM_CONTEXT_WINDOW,
    )


@dataclass
class Answered:
    result: runner.PipelineResult
    response: dict[str, Any]  # an OpenAI chat.completion, scanned
    scan: ScanOutcome | None

    @property
    def text(self) -> str:
        return str(self.response["choices"][0]["message"]["content"])


async def guard(
    services: Services,
    engine: GuardrailsEngine | None,
    result: runner.PipelineResult,
    response: dict[str, Any],
    *,
    index_name: str | None,
    endpoint: str,
    tool_calls: list[dict[str, Any]] | None = None,
) -> Answered:
    """Scan the response, describe it in ``sentinel``, and write the audit record;
    ``tool_calls`` (:func:`check_tool_calls`) joins both as ``toolCalls``."""
    verdicts: list[ChoiceVerdict] = []
    if engine is not None:
        verdicts = await run_in_threadpool(
            guard_chat_completion, engine, response, result.request_id
        )
    if result.decision == "block":  # citations failed; scanner blocks are set per choice
        for choice in response.get("choices", []):
            choice["finish_reason"] = "content_filter"
    audit_extra = None
    if tool_calls is not None:
        # The audit keeps the verdicts, not the arguments (the reasons name what mattered).
        audit_extra = {"toolCalls": [_without_arguments(c) for c in tool_calls]}
    response["sentinel"] = conclude(
        services,
        engine,
        result,
        verdicts,
        index_name=index_name,
        endpoint=endpoint,
        audit_extra=audit_extra,
    )
    if tool_calls is not None:
        response["sentinel"]["toolCalls"] = tool_calls
    # KAITO's field: the evidence with an index, null without one.
    response["source_nodes"] = report.source_nodes(result) if index_name is not None else None
    return Answered(result, response, verdicts[0].outcome if verdicts else None)


def conclude(
    services: Services,
    engine: GuardrailsEngine | None,
    result: runner.PipelineResult,
    verdicts: Sequence[ChoiceVerdict],
    *,
    index_name: str | None,
    endpoint: str,
    audit_extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``sentinel`` object of an answer already scanned; writes its audit record and
    logs the decision (streamed answers call this once, when the stream ends)."""
    scan = verdicts[0].outcome if verdicts else None
    if engine is not None:
        guardrails: dict[str, Any] = {
            "enabled": True,
            "policyHash": engine.policy.sha256,
            "choices": [v.describe() for v in verdicts],
        }
    else:
        guardrails = {"enabled": False}
    described = report.sentinel(result, index_name=index_name)
    described["guardrails"] = guardrails
    _audit(
        services,
        engine,
        result,
        scan,
        index_name=index_name,
        endpoint=endpoint,
        extra=audit_extra,
    )
    log_event(
        logger,
        events.PIPELINE_DECISION,
        request_id=result.request_id,
        decision=result.decision,
        gate_action=result.plan.action,
        intent=result.state.intent,
        kept=len(result.bundle.kept) if result.bundle else 0,
        dropped=len(result.bundle.dropped) if result.bundle else 0,
        scanner_action=scan.action if scan else None,
    )
    if result.decision == "block":
        log_event(
            logger,
            events.CITATIONS_BLOCKED,
            logging.WARNING,
            request_id=result.request_id,
            errors=list(result.validation.errors),
        )
    return described


def _audit(
    services: Services,
    engine: GuardrailsEngine | None,
    result: runner.PipelineResult,
    scan: ScanOutcome | None,
    *,
    index_name: str | None,
    endpoint: str,
    extra: dict[str, Any] | None = None,
) -> None:
    config = pipeline_config.for_policy(engine.policy if engine else None)
    if not config.audit.enabled:
        return
    prompt = None
    if config.audit.include_prompt:
        # Only ever the scanned prompt: a secret typed by the user stays out of the trail.
        prompt = engine.scan(result.prompt.text).text if engine else result.prompt.text
    record = report.audit_record(
        result,
        index_name=index_name,
        policy_hash=engine.policy.sha256 if engine else "",
        scan=scan,
        endpoint=endpoint,
        prompt=prompt,
    )
    services.audit.append({**record, **(extra or {})})


async def run_pipeline(
    services: Services,
    engine: GuardrailsEngine | None,
    *,
    query: str,
    index_name: str | None,
    top_k: int | None = None,
    freshness_days: int = 90,
    conversation: Conversation | None = None,
) -> runner.PipelineResult:
    """The whole pipeline (output scanners excepted) under ``engine``'s policy version."""
    context = context_for(services, engine, index_name)
    request = runner.PipelineRequest(
        query,
        index_name,
        top_k=top_k,
        freshness_days=freshness_days,
        conversation=conversation,
    )
    return await runner.run(request, context)


def pipeline_completion(
    services: Services, result: runner.PipelineResult, model: str
) -> dict[str, Any]:
    """The ``chat.completion`` of a pipeline answer: the model the upstream named (else the
    request's, else the default), its token usage, ``length`` when the reply was cut."""
    named = result.generation.get("model") or model or services.generator.default_model
    response = embedded.completion(result.answer.text, model=str(named))
    response["usage"] = result.usage.describe()
    if result.answer.details.get("cut"):
        response["choices"][0]["finish_reason"] = "length"
    return response


async def answer_question(
    services: Services,
    *,
    query: str,
    index_name: str | None,
    top_k: int | None = None,
    freshness_days: int = 90,
    model: str = "",
    endpoint: str,
    conversation: Conversation | None = None,
) -> Answered:
    engine = active_engine(services)
    result = await run_pipeline(
        services,
        engine,
        query=query,
        index_name=index_name,
        top_k=top_k,
        freshness_days=freshness_days,
        conversation=conversation,
    )
    response = pipeline_completion(services, result, model)
    return await guard(services, engine, result, response, index_name=index_name, endpoint=endpoint)


async def preflight(
    services: Services, engine: GuardrailsEngine | None, query: str, body: dict[str, Any]
) -> tuple[runner.Preflight, runner.PipelineContext, bool]:
    """Stages 0-2 for chat without an index; the flag says whether to refuse. A restricted
    request gets :data:`HIGH_LEVEL` as a first system message in ``body`` (in place)."""
    context = context_for(services, engine, None)
    pre = await runner.preflight(runner.PipelineRequest(query), context)
    refused = decision.is_refused(pre.state, pre.plan)
    if not refused and decision.decide(pre.state, pre.plan, None) == "summary":
        body["messages"] = [{"role": "system", "content": HIGH_LEVEL}, *body["messages"]]
    return pre, context, refused


async def refusal(
    pre: runner.Preflight, context: runner.PipelineContext, query: str
) -> runner.PipelineResult:
    """The pipeline's answer to a request :func:`preflight` refused (no generator called)."""
    return await runner.complete(pre, runner.PipelineRequest(query), context)


# -- governed tool calls (seed 002) --------------------------------------------------------

SUMMARY_HEADING = (
    "Sentinel governance session {session}: what is established. Use only these values as "
    "tool arguments; ask the user for what is askable."
)


def governance_session(services: Services, session_id: str | None) -> str | None:
    """The request's governance session, checked before the upstream is asked (404 when
    unknown); None: the tool calls are checked in a fresh session kept nowhere."""
    if session_id is not None:
        services.governance.require_session(session_id)
    return session_id


def add_fact_summary(services: Services, session_id: str | None, body: dict[str, Any]) -> None:
    """With a session and an active rulebase, the session's summary goes upstream as a first
    system message of ``body`` (in place), so the model proposes calls with known values."""
    governance = services.governance
    if session_id is None or governance.rulebase is None:
        return
    text = SUMMARY_HEADING.format(session=session_id) + "\n" + governance.summary(session_id)
    body["messages"] = [{"role": "system", "content": text}, *body["messages"]]


async def check_tool_calls(
    services: Services, session_id: str | None, response: dict[str, Any], request_id: str
) -> list[dict[str, Any]] | None:
    """Judge every tool call of ``response`` (an upstream chat.completion) by its guard, in
    place: an allowed call stays as it is; a blocked one leaves ``message.tool_calls`` and the
    message's content says why (a choice left with no call ends with ``finish_reason: stop``).
    Returns one description per call for ``sentinel.toolCalls``; None when there was none."""
    described: list[dict[str, Any]] = []
    for position, choice in enumerate(response.get("choices") or []):
        message = choice.get("message") if isinstance(choice, dict) else None
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        if not isinstance(message, dict) or not isinstance(calls, list) or not calls:
            continue
        verdicts = await _tool_verdicts(services, session_id, calls)
        kept, refused = [], []
        for call, verdict in zip(calls, verdicts, strict=True):
            entry = _describe_call(call, verdict, choice.get("index", position))
            described.append(entry)
            verdict_label = "allowed" if verdict.allowed else "blocked"
            metrics.GOVERNANCE_TOOL_CALLS.labels("chat", verdict_label).inc()
            if verdict.allowed:
                kept.append(call)
                continue
            refused.append(entry)
            log_event(
                logger,
                events.GOVERNANCE_TOOL_CALL_BLOCKED,
                logging.WARNING,
                path="chat",
                request_id=request_id,
                session_id=session_id,
                call_id=entry["id"],
                tool=entry["name"],
            )
        if not refused:
            continue
        _explain(message, refused)
        if kept:
            message["tool_calls"] = kept
        else:
            del message["tool_calls"]
            choice["finish_reason"] = "stop"
    return described or None


async def _tool_verdicts(
    services: Services, session_id: str | None, calls: list[Any]
) -> list[Verdict]:
    governance = services.governance
    if governance.rulebase is not None:
        try:
            return await governance.check_tool_calls(
                session_id, [c if isinstance(c, dict) else {} for c in calls]
            )
        except GovernanceError as exc:
            if exc.kind != "unavailable":  # a reload removed the rulebase meanwhile: below
                raise
    names = [_call_name(c) for c in calls]
    if governance.error is not None:  # fail closed: a rulebase was meant to govern these
        reason = (
            "no rulebase is active: the policy's tools section is invalid "
            f"({governance.error.message})"
        )
        return [Verdict(False, name, {}, reason) for name in names]
    ungoverned = "ungoverned: the policy has no tools section"
    return [Verdict(True, name, {}, ungoverned) for name in names]


def _call_name(call: Any) -> str:
    function = call.get("function") if isinstance(call, dict) else None
    return str(function.get("name", "")) if isinstance(function, dict) else ""


def _describe_call(call: Any, verdict: Verdict, choice: int) -> dict[str, Any]:
    described = verdict.describe()
    entry: dict[str, Any] = {
        "id": call.get("id") if isinstance(call, dict) else None,
        "choice": choice,
        "name": verdict.tool or _call_name(call),
        "arguments": described["arguments"],
        "allowed": verdict.allowed,
        "reason": verdict.reason,
        "blockers": described.get("blockers", []),
    }
    for key in ("failedPrecondition", "strictViolations"):
        if key in described:
            entry[key] = described[key]
    return entry


def _without_arguments(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k != "arguments"}


def _explain(message: dict[str, Any], refused: list[dict[str, Any]]) -> None:
    """Append why each refused call was not made to the message's content (string or parts),
    so the client, and the model on the next turn, read it."""
    lines = [f"The call {e['name']} was not made: {e['reason']}" for e in refused]
    questions = [b["question"] for e in refused for b in e["blockers"] if b.get("question")]
    lines.extend(f"Ask the user: {q}" for q in dict.fromkeys(questions))
    text = "\n".join(lines)
    content = message.get("content")
    if isinstance(content, list):
        message["content"] = [*content, {"type": "text", "text": "\n\n" + text}]
    elif isinstance(content, str) and content.strip():
        message["content"] = content + "\n\n" + text
    else:
        message["content"] = text
