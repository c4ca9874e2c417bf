"""Streamed chat completions as events: OpenAI ``chat.completion.chunk`` payloads whose text
is scanned before it leaves; ``api.streaming`` frames them as server-sent events.

:func:`open_chat_stream` does everything that can fail with an error before the first event:
the policy version (read once: a reload mid-stream never changes this stream's policy), the
pipeline's stages before generation, and the generator's connection up to its first event
(which names the model: every chunk carries ``turn.response_model``, as a response that is
not streamed does). With ``index_name`` and an upstream model (``pipeline.streamed``), the
model is asked for inline citation markers and streams: each sentence passes its citation
check (``citations_stream.SentenceCheck``) once it is complete, then goes to the guard; a
sentence that fails ends the stream with the policy's ``citations.blockedAnswer`` and
``content_filter`` after what was already sent. Without an upstream, or under a policy that
needs the whole answer (``streamed.whole_reason``), the answer is generated, validated and
scanned whole, then sent in word-sized pieces (``sentinel.stream.rag`` says which). Then
:class:`ChatStream` yields the role, the content the :class:`StreamGuard` releases, a last
chunk with ``finish_reason`` and the ``sentinel`` object, with ``stream_options.include_usage``
a chunk with no choices and the ``turn.usage``, and :data:`DONE`.

A failure mid-stream (the upstream, a fail-closed scanner) ends the stream with an ``error``
event and :data:`DONE`; text the guard still holds is dropped, never sent unscanned. When the
client goes away the upstream request is closed. Metrics, the audit record and the decision
log are written once per stream, when it ends, however it ends.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from typing import Any

import anyio

from sentinel_runtime.access import caller
from sentinel_runtime.answer import answer_guard
from sentinel_runtime.answer import turn as answering
from sentinel_runtime.answer.errors import InvalidRequestError
from sentinel_runtime.answer.offload import run_sized
from sentinel_runtime.answer.services import Services
from sentinel_runtime.guardrails.chat import (
    ChoiceVerdict,
    guard_chat_completion,
    report_action,
    scanned_chars,
)
from sentinel_runtime.guardrails.engine import (
    FAILURE_DETAIL,
    GuardrailsEngine,
    OutputGuardrailsError,
)
from sentinel_runtime.guardrails.streaming import Release, StreamGuard
from sentinel_runtime.llm.calls import Usage
from sentinel_runtime.llm.streams import DeltaStream, TextStream
from sentinel_runtime.llm.upstream import UpstreamError
from sentinel_runtime.observability import events, metrics, tracing
from sentinel_runtime.observability.logs import log_event
from sentinel_runtime.pipeline import report, runner, streamed
from sentinel_runtime.pipeline.cite.citations_stream import Step as SentenceStep
from sentinel_runtime.pipeline.conversation import Conversation

logger = logging.getLogger(__name__)

DONE = "[DONE]"  # the last event of every stream
Event = dict[str, Any] | str
FINISH_ON_STOP = {"block": "content_filter", "truncate": "length"}
# How a stream ended -> rag_chat_requests_total{status}.
STATUS_OF_END = {"complete": "success", "client_disconnected": "cancelled"}
# Between text already sent and the message that ends a stream early (as the guard's block).
BLOCK_SEPARATOR = "\n\n"


@dataclass(frozen=True)
class Chunks:
    """``chat.completion.chunk`` objects of one response (same id, time and model)."""

    id: str
    created: int
    model: str

    def chunk(
        self, delta: dict[str, Any], finish_reason: str | None = None, **extra: Any
    ) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            **extra,
        }

    def usage(self, usage: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [],
            "usage": usage,
        }


def _check_streamable(body: dict[str, Any]) -> None:
    if body.get("tools") or body.get("functions"):
        raise InvalidRequestError(
            "stream=true with tools is not supported; send stream=false for tool calls",
            param="tools",
        )


def _include_usage(body: dict[str, Any]) -> bool:
    options = body.get("stream_options")
    return isinstance(options, dict) and bool(options.get("include_usage"))


async def open_chat_stream(
    services: Services,
    body: dict[str, Any],
    query: str,
    *,
    index_name: str | None,
    started: float,
) -> ChatStream:
    """Prepare one streamed answer; raises this layer's errors (``answer.errors``) or
    ``UpstreamError`` before any event. ``body`` is the request as the generator gets it;
    ``started`` is when the request arrived (``time.perf_counter()``)."""
    _check_streamable(body)
    engine = answering.active_engine(services)
    generator = services.generator
    model = str(body.get("model") or "")
    pre: runner.Preflight | None = None
    result: runner.PipelineResult | None = None
    prescanned: list[ChoiceVerdict] | None = None
    rag: streamed.StreamedAnswer | None = None
    whole: streamed.WholeReason | None = None
    prompt = body["messages"]
    named: str | None = None  # without a whole answer: known once the stream has started
    source: DeltaStream
    began: streamed.StreamedAnswer | streamed.Whole | None = None
    held: answer_guard.AnswerVerdict | None = None  # the guard's verdict on a reply held whole
    if index_name is not None:
        began = await answering.begin_rag_stream(
            services,
            engine,
            query=query,
            index_name=index_name,
            conversation=Conversation.from_messages(body["messages"], body),
        )
    if isinstance(began, streamed.StreamedAnswer):
        # The model writes the answer as it streams: each sentence leaves once its citations
        # pass (began.check), then through the output scanners' guard.
        rag = began
        generator_name = "llm"
        request_id = rag.pre.request_id
        prompt = rag.call.messages  # what the model got (counted when it reports no usage)
        source = answering.stream_call(services, rag.call)
    elif isinstance(began, streamed.Whole):
        # Generated, validated and scanned whole, then sent in word-sized pieces (nothing
        # unscanned is ever sent): the reason is in sentinel.stream.ragWhole.
        result, whole = began.result, began.reason
        source, prescanned, named = await _scanned_whole(
            services, engine, result, model, body["messages"]
        )
        generator_name = result.answer.generator
        request_id = result.request_id
    else:
        pre, context, refused = await answering.preflight(services, engine, query, body)
        generator_name = answering.generator_name(services)
        request_id = pre.request_id
        if refused:
            result = await answering.refusal(pre, context, query)
            source = TextStream(result.answer.text)
            pre = None
        elif answer_guard.active(services, engine):
            # The guard model judges the whole answer: read it whole, then send it in pieces.
            source, held = await _held_whole(services, engine, pre, generator.stream(body), body)
        else:
            source = generator.stream(body)
    guard = None
    if engine is not None and prescanned is None:
        guard = StreamGuard(engine, response_id=request_id)
    await source.start()  # an upstream that fails here gets its HTTP status
    if named is None:
        named = answering.response_model(services, model, source.model)
    stream = ChatStream(
        services,
        engine,
        guard,
        source,
        Chunks(f"chatcmpl-{uuid.uuid4().hex}", int(time.time()), named),
        started=started,
        index_name=index_name,
        include_usage=_include_usage(body),
        prompt=prompt,
        result=result,
        pre=pre,
        generator_name=generator_name,
        prescanned=prescanned,
        rag=rag,
        whole=whole,
        held=held,
    )
    return stream


async def _held_whole(
    services: Services,
    engine: GuardrailsEngine | None,
    pre: runner.Preflight,
    upstream: DeltaStream,
    body: dict[str, Any],
) -> tuple[TextStream, answer_guard.AnswerVerdict | None]:
    """The model's whole streamed reply, judged by the guard model, as word-sized pieces
    (the policy's blockMessage when it was judged unsafe)."""
    await upstream.start()
    try:
        text = "".join([delta async for delta in upstream])
    finally:
        await upstream.aclose()
    verdict = await answer_guard.judge(services, engine, pre.prompt.text, text)
    blocked = verdict is not None and verdict.block_message is not None
    shown = verdict.block_message if verdict is not None and verdict.block_message else text
    held = TextStream(
        shown,
        finish_reason="content_filter" if blocked else (upstream.finish_reason or "stop"),
    )
    # Counted as generated, like an answer that is not streamed: before the guard replaced it.
    held.usage = answering.usage(upstream.usage, body["messages"], [text])
    held.model = upstream.model
    return held, verdict


async def _scanned_whole(
    services: Services,
    engine: GuardrailsEngine | None,
    result: runner.PipelineResult,
    model: str,
    messages: list[dict[str, Any]],
) -> tuple[TextStream, list[ChoiceVerdict], str]:
    """A whole pipeline answer scanned whole, as word-sized pieces; its verdicts and name."""
    completion = answering.pipeline_completion(services, result, model, messages)
    await answer_guard.guard_completion(services, engine, result, completion)
    prescanned: list[ChoiceVerdict] = []
    if engine is not None:
        prescanned = await run_sized(
            scanned_chars(completion), guard_chat_completion, engine, completion, result.request_id
        )
    choice = completion["choices"][0]
    source = TextStream(choice["message"]["content"], finish_reason=choice["finish_reason"])
    source.usage = completion["usage"]
    return source, prescanned, completion["model"]


class ChatStream:
    """One streamed answer: its events, and its accounting when it ends."""

    def __init__(
        self,
        services: Services,
        engine: GuardrailsEngine | None,
        guard: StreamGuard | None,
        source: DeltaStream,
        chunks: Chunks,
        *,
        started: float,
        index_name: str | None,
        include_usage: bool,
        prompt: list[dict[str, Any]],
        result: runner.PipelineResult | None,
        pre: runner.Preflight | None,
        generator_name: str,
        prescanned: list[ChoiceVerdict] | None = None,
        rag: streamed.StreamedAnswer | None = None,
        whole: streamed.WholeReason | None = None,
        held: answer_guard.AnswerVerdict | None = None,
    ) -> None:
        self.services = services
        self.engine = engine
        self.guard = guard
        self.source = source
        self.chunks = chunks
        self.started = started
        self.index_name = index_name
        self.include_usage = include_usage
        self.prompt = prompt  # the messages the generator got (counted when it reports no usage)
        self.result = result  # known before the stream (index_name, refusals)
        self.pre = pre  # otherwise: the generator's answer is passed through at the end
        self.generator_name = generator_name
        self.prescanned = prescanned  # the verdicts of a text scanned whole before streaming
        self.rag = rag  # a RAG answer checked sentence by sentence as the model writes it
        self.whole = whole  # or why a RAG answer was generated whole
        self.held = held  # the guard model's verdict on a reply read whole before it streamed
        self.received: list[str] = []
        self.received_chars = 0
        self.upstream_first_at: float | None = None
        self.arrived_at: float | None = None  # the generator's latest text
        self.first_token_guard: float | None = None
        self.first_token_at: float | None = None
        self.first_token_after_chars: int | None = None
        self.content_chunks = 0
        self.stop: str | None = None
        self.end: str | None = None
        self.sentinel: dict[str, Any] | None = None
        self._events = self._generate()
        self._accounted = False

    def events(self) -> AsyncIterator[Event]:
        return self._events

    async def _generate(self) -> AsyncGenerator[Event, None]:
        yield self.chunks.chunk({"role": "assistant", "content": ""})
        try:
            async for delta in self.source:
                self.arrived_at = time.perf_counter()
                if self.upstream_first_at is None:
                    self.upstream_first_at = self.arrived_at
                self.received.append(delta)
                self.received_chars += len(delta)
                release = await self._feed(delta)
                if release.text:
                    yield self._content(release.text)
                if release.stop:
                    self.stop = release.stop
                    break
            await self._close_source()  # at the end, or after a stop: nothing more is wanted
            if self.stop is None and self.rag is not None:
                release = await self._checked(self.rag.check.finish())
                if release.text:
                    yield self._content(release.text)
                self.stop = release.stop
            if self.stop is None and self.guard is not None:
                release = await self._finish(self.guard)
                if release.text:
                    yield self._content(release.text)
                self.stop = release.stop
            extra: dict[str, Any] = {"sentinel": self._conclude("complete")}
            if self.index_name is not None and self.result is not None:
                extra["source_nodes"] = report.source_nodes(self.result)
            last: list[Event] = [self.chunks.chunk({}, self._finish_reason(), **extra)]
            if self.include_usage:
                last.append(self.chunks.usage(self._usage()))
        except UpstreamError as exc:
            self._conclude("upstream_error")
            error = {"message": exc.detail, "type": "upstream_error", "code": exc.reason}
            last = [{"error": error}]
        except OutputGuardrailsError:
            self._conclude("guardrails_error")
            last = [{"error": {"message": FAILURE_DETAIL, "type": "guardrails_error"}}]
        except Exception:
            logger.exception("streamed chat completion failed")
            self._conclude("internal_error")
            last = [{"error": {"message": "internal server error", "type": "server_error"}}]
        # Counted before the client can see the end, so whoever reads [DONE] sees the metrics.
        await self._close_source()  # after an error, the upstream's connection goes too
        self._account()
        for event in last:
            yield event
        yield DONE

    async def _finish(self, guard: StreamGuard) -> Release:
        if guard.holds_whole_text:  # the whole answer is scanned now: off the event loop
            return await anyio.to_thread.run_sync(guard.finish)
        return guard.finish()

    async def _feed(self, delta: str) -> Release:
        if self.rag is not None:
            return await self._checked(self.rag.check.feed(delta))
        return self._guarded(delta)

    def _guarded(self, text: str) -> Release:
        if self.guard is None:
            return Release(text)
        return self.guard.feed(text)

    async def _checked(self, step: SentenceStep) -> Release:
        """What the output guard releases of the sentences that passed their citations; when
        one failed, the stream ends there with the policy's citations.blockedAnswer (after
        what was already sent, which cannot be recalled: the guard's late block does the
        same) and ``content_filter``."""
        release = self._guarded(step.text) if step.text else Release("")
        if not step.blocked or release.stop:
            return release
        assert self.rag is not None
        message = self.rag.blocked_answer
        if self.rag.check.released:
            message = BLOCK_SEPARATOR + message
        tail = self._guarded(message)
        text = release.text + tail.text
        if tail.stop is None and self.guard is not None:
            end = await self._finish(self.guard)
            text += end.text
        return Release(text, "block")

    def _usage(self) -> dict[str, Any]:
        """The generator's usage, else counted: what it wrote, before the citation check
        or the guard held or cut any of it."""
        generated = ["".join(self.received)]
        return answering.usage(self.source.usage, self.prompt, generated)

    def _content(self, text: str) -> dict[str, Any]:
        if self.first_token_at is None:
            self.first_token_at = time.perf_counter()
            self.first_token_after_chars = self.received_chars
            if self.arrived_at is not None:
                self.first_token_guard = self.first_token_at - self.arrived_at
            metrics.CHAT_TIME_TO_FIRST_TOKEN.observe(self.first_token_at - self.started)
        self.content_chunks += 1
        return self.chunks.chunk({"content": text})

    def _finish_reason(self) -> str:
        if self.stop is not None:
            return FINISH_ON_STOP[self.stop]
        if self.result is not None and self.result.decision == "block":
            return "content_filter"  # citations failed: the answer is the fallback text
        return self.source.finish_reason or "stop"

    def describe(self) -> dict[str, Any]:
        """The ``sentinel.stream`` object."""
        guard = self.guard

        def ms(at: float | None) -> float | None:
            return None if at is None else round((at - self.started) * 1000, 3)

        described: dict[str, Any] = {
            "windowChars": guard.window if guard else 0,
            "holdsWholeText": guard.holds_whole_text if guard else False,
            "timeToFirstTokenMs": ms(self.first_token_at),
            "generatorFirstTokenMs": ms(self.upstream_first_at),
            "firstTokenAfterChars": self.first_token_after_chars,
            "firstTokenGuardMs": None
            if self.first_token_guard is None
            else round(self.first_token_guard * 1000, 3),
            "chunks": self.content_chunks,
            "stop": self.stop,
        }
        if self.index_name is not None:
            # How the RAG answer streamed: checked sentence by sentence as the model wrote
            # it, or generated whole first (and why).
            described["rag"] = "incremental" if self.rag is not None else "whole"
            if self.whole is not None:
                described["ragWhole"] = self.whole
        return described

    def _conclude(self, end: str) -> dict[str, Any]:
        """Describe the answer, count its scanner action, write its audit record: once."""
        if self.sentinel is not None:
            return self.sentinel
        self.end = end
        result = self.result
        if result is None and self.rag is not None:
            result = self.rag.conclude(
                finish_reason=self.source.finish_reason,
                usage=Usage.of(self._usage()),
                model=self.source.model,
            )
            self.result = result
        if result is None:
            assert self.pre is not None
            result = runner.passthrough(self.pre, "".join(self.received), self.generator_name)
            answer_guard.settle(result, self.held)
            self.result = result
        verdicts: list[ChoiceVerdict] = list(self.prescanned or [])
        if self.engine is not None and self.guard is not None and self.received_chars:
            outcome = self.guard.outcome()
            verdicts.append(ChoiceVerdict(0, outcome))
            failed = end == "guardrails_error"
            report_action(self.engine, outcome, result.request_id, failed=failed)
        stream = self.describe()
        sentinel = answering.conclude(
            self.services,
            self.engine,
            result,
            verdicts,
            index_name=self.index_name,
            endpoint="chat",
            audit_extra={"stream": {**stream, "end": end}},
        )
        sentinel["stream"] = stream
        self.sentinel = sentinel
        return sentinel

    async def _close_source(self) -> None:
        try:
            await self.source.aclose()
        except Exception:
            logger.warning("closing the generator's stream failed", exc_info=True)

    def _account(self) -> None:
        """Count and log the request once, however it ended."""
        if self._accounted:
            return
        self._accounted = True
        if self.sentinel is None:
            try:
                self._conclude("client_disconnected")
            except Exception:
                logger.exception("accounting for an abandoned stream failed")
        if caller.metered():
            try:
                self._usage()  # noted for the key's tpm, even when the client asked for none
            except Exception:
                logger.exception("counting the usage of a streamed answer failed")
        end = self.end or "client_disconnected"
        status = STATUS_OF_END.get(end, "failure")
        elapsed = time.perf_counter() - self.started
        metrics.CHAT_REQUESTS.labels(status).inc()
        metrics.CHAT_DURATION.observe(elapsed, exemplar=tracing.exemplar())
        metrics.CHAT_LATENCY.labels(status).observe(elapsed)
        log_event(
            logger,
            events.CHAT_COMPLETED,
            status=status,
            duration_ms=round(elapsed * 1000, 2),
            stream=True,
            end=end,
            time_to_first_token_ms=self.describe()["timeToFirstTokenMs"],
        )

    async def close(self) -> None:
        """The response is over (sent, failed or abandoned): stop the generator, account."""
        with anyio.CancelScope(shield=True):
            await self._events.aclose()
            await self._close_source()
        self._account()
