"""A RAG answer that streams: the pipeline up to generation, then the model's reply read as
it arrives.

:func:`begin` runs stages 0-3 (``runner.preflight``, ``runner.gather``) and decides how the
answer is made. When the upstream model answers and the policy asks nothing piecewise
validation cannot do, it returns a :class:`StreamedAnswer`: the call that asks for inline
citation markers (the stream form: a JSON answer cannot be validated piece by piece) and
the :class:`citations_stream.SentenceCheck` that the streaming layer (``answer.stream``)
feeds the model's deltas through before the output scanners see them; when the stream
ends, :meth:`StreamedAnswer.conclude` makes the :class:`runner.PipelineResult` the trace,
the audit record and the metrics are written from. Otherwise it returns :class:`Whole`: the
whole pipeline's result (as ``runner.run`` makes it) and why it was not streamed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal

from sentinel_runtime.llm import calls
from sentinel_runtime.observability import metrics, tracing
from sentinel_runtime.pipeline import conversation, runner
from sentinel_runtime.pipeline.cite.citations_stream import SentenceCheck
from sentinel_runtime.pipeline.generate import model_answer
from sentinel_runtime.pipeline.types import Answer

# Why an answer was generated whole (the ``sentinel.stream.ragWhole`` reason).
WholeReason = Literal[
    "embedded_generator",  # no upstream model: the built-in generators answer whole
    "no_model_call",  # a refusal, or no kept evidence: no model is asked
    "citations_structured",  # citations.mode: structured insists on the JSON form
    "support_llm",  # citations.support: llm judges each claim in another call
    "keyword_overlap",  # citations.requireKeywordOverlap judges the whole answer
    "best_of_n",  # generation.bestOfN picks among whole answers
    "guard_answers",  # guard.answers: the guard model judges the whole answer first
]


@dataclass(frozen=True)
class Whole:
    """An answer generated and validated whole (``runner.complete``)."""

    result: runner.PipelineResult
    reason: WholeReason


@dataclass
class StreamedAnswer:
    """One answer the model writes while it streams; :attr:`check` judges its sentences."""

    pre: runner.Preflight
    gathered: runner.Gathered
    call: calls.ChatCall
    check: SentenceCheck
    trace: dict[str, Any]
    started: float = field(default_factory=time.perf_counter)

    @property
    def blocked_answer(self) -> str:
        return self.check.config.blocked_answer

    def conclude(
        self, *, finish_reason: str | None, usage: calls.Usage, model: str | None
    ) -> runner.PipelineResult:
        """The pipeline's result for what the stream released (``check.released``; a
        failed answer's text is what left before the block, then the block message)."""
        check = self.check
        validation = check.validation()
        cited = list(dict.fromkeys(c for claim in check.claims for c in claim.cited))
        details: dict[str, Any] = {"citation_form": "inline", "streamed": True}
        if finish_reason == "length":
            details["cut"] = True
        if validation.valid:
            answer = Answer(
                decision=self.gathered.decision,
                text=check.released,
                citations=tuple(cited or check.cited),
                generator="llm",
                details=details,
            )
        else:
            released = check.released
            answer = Answer(
                decision="block",
                text=f"{released}\n\n{self.blocked_answer}" if released else self.blocked_answer,
                generator="llm",
                details={**details, "blocked_citations": list(check.cited)},
            )
        outcome = "not_checked" if not validation.checked else "valid"
        metrics.CITATION_VALIDATIONS.labels(outcome if validation.valid else "invalid").inc()
        metrics.PIPELINE_DECISIONS.labels(answer.decision).inc()
        timings = self.pre.timer.timings
        timings["generate"] = time.perf_counter() - self.started
        timings["cite"] = check.seconds
        for stage in ("generate", "cite"):
            histogram = metrics.STAGE_DURATION.labels(stage)
            histogram.observe(timings[stage], exemplar=tracing.exemplar())
        gathered = self.gathered
        return runner.PipelineResult(
            request_id=self.pre.request_id,
            prompt=self.pre.prompt,
            state=self.pre.state,
            plan=gathered.plan,
            answer=answer,
            validation=validation,
            bundle=gathered.bundle,
            hits=gathered.hits,
            attempts=gathered.attempts,
            quality=gathered.quality,
            timings=timings,
            retrieval_performed=bool(gathered.attempts),
            follow_up_query=self.pre.follow_up_query,
            usage=usage,
            generation={**self.trace, "model": model or None, "cut": "cut" in details},
        )


def whole_reason(context: runner.PipelineContext) -> WholeReason | None:
    """Why the policy or the generator rule out streaming the answer (None: they do not)."""
    config = context.config
    if context.generate is None:
        return "embedded_generator"
    if config.citations.mode == "structured":
        return "citations_structured"
    if config.citations.support == "llm":
        return "support_llm"
    if config.citations.require_keyword_overlap:
        return "keyword_overlap"
    if config.generation.best_of_n > 1:
        return "best_of_n"
    if context.guard is not None and context.guard.config.judges_answers:
        return "guard_answers"
    return None


async def begin(
    request: runner.PipelineRequest, context: runner.PipelineContext
) -> StreamedAnswer | Whole:
    """Stages 0-3, then the streamed answer's call, or the whole answer and why."""
    reason = whole_reason(context)
    if reason is not None:
        return Whole(await runner.run(request, context), reason)
    pre = await runner.preflight(request, context)
    gathered = await runner.gather(pre, request, context)
    if not runner.uses_model(gathered, context):
        return Whole(
            await runner.complete(pre, request, context, gathered=gathered), "no_model_call"
        )
    config = context.config
    bundle = gathered.bundle
    question = model_answer.Question(
        pre.prompt.text,
        gathered.kept,
        gathered.decision,
        bundle.conflicts if bundle is not None else (),
        request.conversation or conversation.Conversation(),
    )
    call, prepared = model_answer.chat_call(
        question,
        citations=config.citations,
        context_window=context.context_window,
        structured=False,
    )
    chunks = {h.chunk.chunk_id: h.chunk.text for h in gathered.kept}
    check = SentenceCheck(chunks, config.citations, checked=config.citations.enabled)
    trace = model_answer.trace(
        question,
        prepared,
        structured=False,
        form=None,
        model="",
        replies=1,
        retried=False,
        cut=False,
    )
    return StreamedAnswer(pre, gathered, call, check, trace)
