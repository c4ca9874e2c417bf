"""OpenTelemetry traces: the one module that knows the OpenTelemetry API and SDK.

The HTTP layer opens a server span per request (:func:`server_span`), the pipeline a span per
stage (:func:`span`), the LLM and guard clients a client span per model call
(:func:`client_span`, :func:`start_client_span`) and inject the W3C ``traceparent`` into
their requests (:func:`inject`). Everything else reads :func:`trace_id` (the audit record's
request id, docs/tracing.md) and :func:`exemplar` (the trace id on latency histograms).

Off unless the standard variables ask for it (:func:`wanted`): ``OTEL_EXPORTER_OTLP_ENDPOINT``,
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` or ``OTEL_TRACES_EXPORTER`` (and not
``OTEL_SDK_DISABLED=true``). Off, every function here returns a shared no-op object after one
``None`` check, and the SDK is never imported. On, the SDK reads the rest of the variables
itself: ``OTEL_SERVICE_NAME`` and ``OTEL_RESOURCE_ATTRIBUTES`` (``Resource.create``),
``OTEL_TRACES_SAMPLER(_ARG)`` (``TracerProvider``), ``OTEL_EXPORTER_OTLP_*`` (the exporter),
``OTEL_BSP_*`` (the batch processor), ``OTEL_PROPAGATORS`` (the global propagator).

Attributes are decisions, codes, counts and hashes. Prompt and answer text go on a span only
when :func:`capture_content` is on (``SENTINEL_TRACE_CAPTURE_CONTENT=true``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace

from sentinel_runtime.observability import events
from sentinel_runtime.observability.logs import log_event

logger = logging.getLogger(__name__)

ENDPOINT_VARIABLES = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_TRACES_EXPORTER",
)
# OTEL_TRACES_EXPORTER=otlp is the spec's name; the HTTP/protobuf exporter registers itself
# under its own entry-point name.
EXPORTER_ALIASES = {"otlp": "otlp_proto_http"}
Attributes = Mapping[str, str | bool | int | float]


class _NoSpan:
    """What every function returns with tracing off: accepts everything, records nothing."""

    recording = False

    def set(self, **attributes: Any) -> None:
        pass

    def set_attributes(self, attributes: Attributes) -> None:
        pass

    def rename(self, name: str) -> None:
        pass

    def error(self, code: str) -> None:
        pass

    def end(self) -> None:
        pass

    def __enter__(self) -> _NoSpan:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


NO_SPAN = _NoSpan()


class Span:
    """A started span, as the layers see it: attributes, an error code, its end."""

    recording = True

    def __init__(self, span: trace.Span) -> None:
        self._span = span

    def set(self, **attributes: Any) -> None:
        self.set_attributes(attributes)

    def set_attributes(self, attributes: Attributes) -> None:
        self._span.set_attributes({k: v for k, v in attributes.items() if v is not None})

    def rename(self, name: str) -> None:
        self._span.update_name(name)

    def error(self, code: str) -> None:
        self._span.set_attribute("error.type", code)
        self._span.set_status(trace.StatusCode.ERROR)

    def end(self) -> None:
        self._span.end()


Handle = Span | _NoSpan  # what the context managers below yield


def annotate(**attributes: Any) -> None:
    """Set attributes on the current span (the request's, between stages)."""
    if _live.state is not None:
        Span(trace.get_current_span()).set_attributes(attributes)


@dataclass
class _State:
    provider: Any  # opentelemetry.sdk.trace.TracerProvider
    tracer: trace.Tracer
    capture_content: bool


class _Live:
    """The provider tracing runs with, or None: off."""

    state: _State | None = None


_live = _Live()


def wanted(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the standard variables ask for traces."""
    env = os.environ if environ is None else environ
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporters = env.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporters == "none":
        return False
    return any(env.get(name, "").strip() for name in ENDPOINT_VARIABLES)


def configure(service_name: str, *, capture_content: bool = False) -> bool:
    """Start tracing when :func:`wanted` (replacing a provider an earlier call started);
    ``service_name`` is the default ``OTEL_SERVICE_NAME``. Returns whether tracing is on."""
    shutdown()
    if not wanted():
        return False
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    exporters = _exporters()
    if not exporters:
        return False
    # Resource.create reads OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME; when neither
    # names the service, it says "unknown_service:...", and ours is the better default.
    resource = Resource.create()
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: service_name}))
    provider = TracerProvider(resource=resource)  # the sampler from OTEL_TRACES_SAMPLER(_ARG)
    for exporter in exporters:
        provider.add_span_processor(BatchSpanProcessor(exporter))
    _live.state = _State(provider, provider.get_tracer("sentinel"), capture_content)
    log_event(
        logger,
        events.TRACING_STARTED,
        service=resource.attributes.get(SERVICE_NAME, service_name),
        exporters=[type(e).__name__ for e in exporters],
        sampler=provider.sampler.get_description(),
        capture_content=capture_content,
    )
    return True


def _exporters() -> list[Any]:
    from importlib.metadata import entry_points

    names = os.environ.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() or "otlp"
    found = []
    for name in (n.strip() for n in names.split(",") if n.strip()):
        group, entry = "opentelemetry_traces_exporter", EXPORTER_ALIASES.get(name, name)
        points = entry_points(group=group, name=entry)
        if not points:
            log_event(logger, events.TRACING_EXPORTER_UNKNOWN, logging.WARNING, exporter=name)
            continue
        found.append(next(iter(points)).load()())
    return found


def enabled() -> bool:
    return _live.state is not None


def capture_content() -> bool:
    """Whether prompt and answer text may go on spans (``SENTINEL_TRACE_CAPTURE_CONTENT``)."""
    return _live.state is not None and _live.state.capture_content


def force_flush(timeout_millis: int = 10_000) -> bool:
    return _live.state is None or bool(_live.state.provider.force_flush(timeout_millis))


def shutdown() -> None:
    """Export what is queued and stop; tracing is off afterwards."""
    state, _live.state = _live.state, None
    if state is not None:
        state.provider.shutdown()


# With tracing off, each of these returns NO_SPAN itself (no generator is made): a stage
# then costs one attribute read more than it did without tracing.


def server_span(
    name: str, headers: Mapping[str, str], attributes: Attributes
) -> AbstractContextManager[Handle]:
    """The span of one HTTP request, continuing the trace its ``traceparent`` names."""
    if _live.state is None:
        return NO_SPAN
    parent = propagate.extract(headers)
    return _current(name, trace.SpanKind.SERVER, attributes, parent)


def span(name: str, attributes: Attributes | None = None) -> AbstractContextManager[Handle]:
    """An internal span (a pipeline stage, a scanner), current while the block runs."""
    if _live.state is None or _unsampled():
        return NO_SPAN
    return _current(name, trace.SpanKind.INTERNAL, attributes, None)


def client_span(name: str, attributes: Attributes) -> AbstractContextManager[Handle]:
    """A call to another server (the model, the guard); requests sent inside the block carry
    its ``traceparent`` (:func:`inject`)."""
    if _live.state is None or _unsampled():
        return NO_SPAN
    return _current(name, trace.SpanKind.CLIENT, attributes, None)


def _unsampled() -> bool:
    """Inside a trace the sampler dropped: a child span would be dropped too (the SDK's
    samplers decide a child as its parent, or by the same trace id), so none is made; the
    request's unsampled span stays current, and its traceparent (flag 0) still goes out.
    What an unsampled turn then costs is its server span and these checks, about 40 µs."""
    current = trace.get_current_span()
    return current.get_span_context().is_valid and not current.is_recording()


@contextmanager
def _current(
    name: str,
    kind: trace.SpanKind,
    attributes: Attributes | None,
    parent: otel_context.Context | None,
) -> Iterator[Handle]:
    state = _live.state
    assert state is not None
    with state.tracer.start_as_current_span(
        name, context=parent, kind=kind, attributes=attributes
    ) as started:
        yield Span(started)


class Activation:
    """A span started now, ended later (a streamed model call): :meth:`current` makes it the
    parent of what runs inside (so :func:`inject` names it)."""

    def __init__(self, started: trace.Span | None) -> None:
        self._span = started
        self.handle: Span | _NoSpan = Span(started) if started is not None else NO_SPAN

    @contextmanager
    def current(self) -> Iterator[None]:
        if self._span is None:
            yield
            return
        token = otel_context.attach(trace.set_span_in_context(self._span))
        try:
            yield
        finally:
            otel_context.detach(token)


def start_client_span(name: str, attributes: Attributes) -> Activation:
    if _live.state is None or _unsampled():
        return Activation(None)
    return Activation(
        _live.state.tracer.start_span(name, kind=trace.SpanKind.CLIENT, attributes=attributes)
    )


def record(name: str, started_ns: int, attributes: Attributes) -> None:
    """A span that began at ``started_ns`` (``time.time_ns()``) and ends now, under the
    current span: for work measured piecemeal (the stream guard's scans over a stream)."""
    if _live.state is not None and not _unsampled():
        _live.state.tracer.start_span(name, start_time=started_ns, attributes=attributes).end()


def inject(headers: MutableMapping[str, str]) -> None:
    """Add the current span's ``traceparent`` (and ``tracestate``) to outgoing ``headers``."""
    if _live.state is not None:
        propagate.inject(headers)


def trace_id() -> str | None:
    """The current trace's id (32 hex digits), or None with tracing off or no span."""
    if _live.state is None:
        return None
    found = trace.get_current_span().get_span_context()
    return trace.format_trace_id(found.trace_id) if found.is_valid else None


def exemplar() -> dict[str, str] | None:
    """An OpenMetrics exemplar naming the current trace, for a histogram observation (only
    for a sampled span: an exemplar must open a trace that exists)."""
    if _live.state is None:
        return None
    found = trace.get_current_span().get_span_context()
    if not (found.is_valid and found.trace_flags.sampled):
        return None
    return {"trace_id": trace.format_trace_id(found.trace_id)}


# The GenAI semantic conventions (opentelemetry.io/docs/specs/semconv/gen-ai/): the names a
# tracing UI's LLM views read. The provider is the protocol Sentinel speaks to the server.
GENAI_PROVIDER = "openai"


def model_call_name(operation: str, model: str) -> str:
    """A model call's span name, as the conventions write it: ``chat {model}``."""
    return f"{operation} {model}" if model else operation


def model_call_attributes(operation: str, model: str, url: str) -> dict[str, Any]:
    """The request side of a model call: operation, provider, requested model, server."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": operation,
        "gen_ai.provider.name": GENAI_PROVIDER,
        "gen_ai.system": GENAI_PROVIDER,  # the name before semconv 1.37, still read by UIs
        "server.address": parts.hostname or "",
    }
    if parts.port:
        attributes["server.port"] = parts.port
    if model:
        attributes["gen_ai.request.model"] = model
    return attributes


def model_call_result(
    span: Handle,
    *,
    model: str | None,
    input_tokens: int,
    output_tokens: int,
    finish_reasons: list[str] | None = None,
) -> None:
    """The response side of a model call: the model that answered and the tokens used."""
    if not span.recording:
        return
    attributes: dict[str, Any] = {
        "gen_ai.usage.input_tokens": input_tokens,
        "gen_ai.usage.output_tokens": output_tokens,
    }
    if model:
        attributes["gen_ai.response.model"] = model
    if finish_reasons:
        attributes["gen_ai.response.finish_reasons"] = finish_reasons
    span.set_attributes(attributes)
