"""Answer one question through the whole pipeline, then the output scanners, then the audit.

The one place that joins the pipeline (plain data) with the services built in the lifespan:
the active policy version, the named index, the upstream LLM and the audit log. Chat with an
index (``chat``) and ``POST /answer`` (``retrieval``) call :func:`answer_question`; chat
without an index calls :func:`preflight` and, unless the request is refused, lets the
generator answer, then ``tool_calls.check_tool_calls`` judges the tool calls it proposes
before anything reaches the client. Streamed answers (``stream``) use the same steps and call
:func:`conclude` when the stream ends.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sentinel_runtime.access import caller
from sentinel_runtime.answer import answer_guard, policy
from sentinel_runtime.answer import tool_calls as tool_calls_mod
from sentinel_runtime.answer.offload import run_sized
from sentinel_runtime.answer.services import Services
from sentinel_runtime.guardrails.chat import ChoiceVerdict, guard_chat_completion, scanned_chars
from sentinel_runtime.guardrails.engine import GuardrailsEngine, ScanOutcome
from sentinel_runtime.index.base import IndexNotFound, Store
from sentinel_runtime.llm import calls, echo
from sentinel_runtime.llm.messages import completion
from sentinel_runtime.llm.streams import DeltaStream
from sentinel_runtime.llm.upstream import UpstreamGenerator
from sentinel_runtime.observability import events, tracing
from sentinel_runtime.observability.logs import log_event
from sentinel_runtime.pipeline import config as pipeline_config
from sentinel_runtime.pipeline import report, runner, streamed
from sentinel_runtime.pipeline.conversation import Conversation
from sentinel_runtime.pipeline.gate import decision
from sentinel_runtime.pipeline.generate import model_answer

logger = logging.getLogger(__name__)
HIGH_LEVEL = (
    "Answer only at a high level, without operational detail: no steps, quantities, "
    "code or procedures."
)


def active_engine(services: Services) -> GuardrailsEngine | None:
    """The request's guardrails engine, read once (``policy.active``: 503 rather than an
    unscanned answer when guardrails are on and no policy is active)."""
    return policy.active(services).engine


def generator_name(services: Services) -> str:
    return "upstream" if services.settings.LLM_INFERENCE_URL else "embedded"


def response_model(services: Services, requested: str | None, reported: str | None = None) -> str:
    """The ``model`` of a chat response, the same whether it is streamed or not. Without an
    upstream (no ``LLM_INFERENCE_URL``) it is ``sentinel-embedded``, the name ``/v1/models``
    lists, whatever the request named. With one: the model the upstream says it used
    (``reported``: its response's, or its stream's first chunk's ``model``), else the
    model ``LLM_MODEL`` pins, else the request's ``model``, else ``sentinel-embedded`` (an
    answer no upstream wrote, a refusal or the extractive generator, has no ``reported``)."""
    settings = services.settings
    if not settings.LLM_INFERENCE_URL:
        return echo.MODEL_NAME
    return reported or settings.LLM_MODEL or requested or echo.MODEL_NAME


def usage(
    reported: Any, prompt: Sequence[Mapping[str, Any]], generated: Sequence[str]
) -> dict[str, Any]:
    """The ``usage`` of a chat response, the same whether it is streamed or not: the
    upstream's (``reported``) when it reports any tokens, else counted with tiktoken's
    cl100k_base (``model_answer.counted_usage``): ``prompt`` are the messages as the
    generator got them (Sentinel's system messages included), ``generated`` the text it
    wrote. Like OpenAI, which counts what the model generated, the completion is counted
    before the output guardrails: a redaction or a block does not change it."""
    if calls.Usage.of(reported) != calls.Usage():
        counted = dict(reported)
    else:
        counted = model_answer.counted_usage(prompt, generated).describe()
    # What the key's tpm is charged once the response is over (access.limits).
    caller.note_tokens(calls.Usage.of(counted).describe()["total_tokens"])
    return counted


def readable_index(services: Services, index_name: str) -> Store:
    """The named index, as the request's key may see it. An unknown index raises
    index.manager.IndexNotFound (404 at the HTTP layer); so does one outside the key's read
    scope, before the store is asked, so the answer is the same whether or not it exists."""
    if not caller.may_read(index_name):
        raise IndexNotFound(index_name)
    return services.indexes.get(index_name)


def context_for(
    services: Services, engine: GuardrailsEngine | None, index_name: str | None
) -> runner.PipelineContext:
    store = readable_index(services, index_name) if index_name is not None else None
    config = pipeline_config.for_policy(engine.policy if engine else None, services.guard_defaults)
    return runner.PipelineContext(
        config=config,
        store=store,
        chat=services.chat,
        generate=services.generate,
        context_window=services.window.known,
        guard=services.guards.for_config(config.guard),
    )


@dataclass
class Answered:
    result: runner.PipelineResult
    response: dict[str, Any]  # an OpenAI chat.completion, scanned
    scan: ScanOutcome | None

    @property
    def text(self) -> str:
        return str(self.response["choices"][0]["message"]["content"])


async def scan_and_record(
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
    await answer_guard.guard_completion(services, engine, result, response)
    verdicts: list[ChoiceVerdict] = []
    if engine is not None:
        verdicts = await run_sized(
            scanned_chars(response), guard_chat_completion, engine, response, result.request_id
        )
    if result.decision == "block":  # citations failed; scanner blocks are set per choice
        for choice in response.get("choices", []):
            choice["finish_reason"] = "content_filter"
    audit_extra = None
    if tool_calls is not None:
        # The audit keeps the verdicts, not the arguments (the reasons name what mattered).
        audit_extra = {"toolCalls": [tool_calls_mod.without_arguments(c) for c in tool_calls]}
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
    # The turn's outcome on the request's span (the server span; docs/tracing.md).
    tracing.annotate(
        **{
            "sentinel.request_id": result.request_id,
            "sentinel.decision": result.decision,
            "sentinel.gate.action": result.plan.action,
            "sentinel.intent": result.state.intent,
            "sentinel.policy.hash": engine.policy.sha256 if engine is not None else "",
            "sentinel.scan.action": (scan.action or "allow") if scan else None,
            "sentinel.citations.valid": result.validation.valid,
            "sentinel.endpoint": endpoint,
        }
    )
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
    # The key's name, never the key (anonymous when no key is configured).
    services.audit.append({**record, **(extra or {}), "key": caller.name()})


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


async def begin_rag_stream(
    services: Services,
    engine: GuardrailsEngine | None,
    *,
    query: str,
    index_name: str,
    conversation: Conversation,
) -> streamed.StreamedAnswer | streamed.Whole:
    """A streamed turn with an index under ``engine``'s policy version: the answer the
    upstream model writes as it streams (``pipeline.streamed``), or the whole answer and why
    it is whole."""
    context = context_for(services, engine, index_name)
    request = runner.PipelineRequest(query, index_name, conversation=conversation)
    return await streamed.begin(request, context)


def stream_call(services: Services, call: calls.ChatCall) -> DeltaStream:
    """The upstream model's streamed reply to a pipeline call (only a turn with an upstream
    streams its RAG answer: ``streamed.whole_reason``)."""
    generator = services.generator
    if not isinstance(generator, UpstreamGenerator):
        raise TypeError("only the upstream model streams a pipeline call")
    return generator.stream_call(call)


def pipeline_completion(
    services: Services,
    result: runner.PipelineResult,
    model: str,
    messages: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """The ``chat.completion`` of a pipeline answer: named by :func:`response_model`, its
    :func:`usage` (the model's, summed over its calls; with no model call, ``messages``, the
    client's, and the answer counted), ``length`` when the reply was cut."""
    named = response_model(services, model, result.generation.get("model"))
    response = completion(result.answer.text, model=named)
    response["usage"] = usage(result.usage.describe(), messages, [result.answer.text])
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
    messages: Sequence[Mapping[str, Any]] | None = None,
) -> Answered:
    """The pipeline's scanned answer to ``query``; ``messages`` are the client's (for the
    usage of an answer no model wrote; None: the query alone)."""
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
    asked = messages if messages is not None else [{"role": "user", "content": query}]
    response = pipeline_completion(services, result, model, asked)
    return await scan_and_record(
        services, engine, result, response, index_name=index_name, endpoint=endpoint
    )


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
