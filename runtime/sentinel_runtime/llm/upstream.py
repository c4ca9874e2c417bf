"""Client of an OpenAI-compatible upstream (vLLM, KAITO workspaces, OpenAI itself).

Every failure becomes :class:`UpstreamError` with the HTTP status the runtime should
answer (the upstream's own for a rejected request, :data:`RELAYED_STATUSES`; 502 for an
unusable upstream, 504 for a slow one) and a reason for the metric.
Upstream bodies are never echoed into our errors beyond a short, bounded excerpt.
:meth:`UpstreamGenerator.stream` asks for ``stream: true`` and reads the server-sent events
(:class:`UpstreamStream`); its failures are the same errors with the same reasons, whether
they happen before the first event or in the middle of the stream.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import aiohttp

from sentinel_runtime import settings
from sentinel_runtime.llm import calls, http_client, structured_output
from sentinel_runtime.llm.messages import message_text
from sentinel_runtime.llm.streams import DeltaStream
from sentinel_runtime.observability import events, metrics, tracing
from sentinel_runtime.observability.logs import log_event

logger = logging.getLogger(__name__)

EXCERPT_CHARS = 200
# Upstream answers that judge the client's request (a parameter the model server rejects, a
# rate limit) keep their status, as KAITO relays them; anything else (401/403: Sentinel's own
# credentials, 5xx) is the upstream failing Sentinel: 502.
RELAYED_STATUSES = frozenset({400, 404, 409, 413, 422, 429})


def relayed_status(upstream_status: int) -> int:
    return upstream_status if upstream_status in RELAYED_STATUSES else 502


class UpstreamError(Exception):
    def __init__(
        self, status_code: int, reason: str, detail: str, *, upstream_status: int | None = None
    ) -> None:
        super().__init__(detail)
        self.status_code = status_code
        self.reason = reason
        self.detail = detail
        self.upstream_status = upstream_status  # the upstream's own HTTP status, if it answered


class UpstreamGenerator:
    def __init__(
        self,
        *,
        chat_url: str,
        access_secret: str,
        model: str,
        timeout: float,
        max_connections: int = settings.DEFAULT_LLM_MAX_CONNECTIONS,
    ) -> None:
        self.chat_url = chat_url
        self.models_url = chat_url.removesuffix("/chat/completions") + "/models"
        self.default_model = model
        self._structured = structured_output.Preference()
        headers = {"Authorization": f"Bearer {access_secret}"} if access_secret else {}
        self._http = http_client.Sessions(
            headers=headers, timeout=timeout, max_connections=max_connections
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    def _payload(self, body: dict[str, Any], *, stream: bool) -> dict[str, Any]:
        """The body sent upstream: ``LLM_MODEL``, when set, pins the model."""
        payload = dict(body)
        if self.default_model:
            payload["model"] = self.default_model
        payload["stream"] = stream
        return payload

    def _span_of(self, payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        model = str(payload.get("model") or "")
        attributes = tracing.model_call_attributes("chat", model, self.chat_url)
        return tracing.model_call_name("chat", model), attributes

    async def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        payload = self._payload(body, stream=False)
        with tracing.client_span(*self._span_of(payload)) as span:
            try:
                data = await self._request("POST", self.chat_url, payload)
            except UpstreamError as exc:
                span.error(exc.reason)
                raise
            if span.recording and isinstance(data, dict):
                usage = calls.Usage.of(data.get("usage"))
                choices = data.get("choices") if isinstance(data.get("choices"), list) else []
                tracing.model_call_result(
                    span,
                    model=str(data.get("model") or "") or None,
                    input_tokens=usage.prompt_tokens,
                    output_tokens=usage.completion_tokens,
                    finish_reasons=[
                        str(c.get("finish_reason"))
                        for c in choices
                        if isinstance(c, dict) and c.get("finish_reason")
                    ],
                )
        if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
            raise self._fail(502, "bad_response", "LLM upstream returned no 'choices' list")
        for choice in data["choices"]:
            message = choice.get("message") if isinstance(choice, dict) else None
            # Anything but text, text parts or nothing could carry text the guardrails miss.
            if not isinstance(message, dict) or not isinstance(
                message.get("content"), str | list | None
            ):
                raise self._fail(
                    502, "bad_response", "LLM upstream returned a message that cannot be scanned"
                )
        return data

    def stream(self, body: dict[str, Any]) -> DeltaStream:
        """The content deltas of one streamed completion (choice 0); nothing is sent before
        :meth:`UpstreamStream.start`."""
        return UpstreamStream(self, self._payload(body, stream=True))

    def stream_call(self, call: calls.ChatCall) -> DeltaStream:
        """One pipeline generation streamed (a streamed RAG answer): one answer, in prose;
        a call with a schema or ``n`` > 1 needs the whole reply and is refused."""
        if call.schema is not None or call.n != 1:
            raise ValueError("a streamed call asks for one answer without a schema")
        # The usage comes in a last chunk when asked for (else the caller counts it).
        options = {"stream_options": {"include_usage": True}}
        return self.stream({"messages": call.messages, **call.params, **options})

    async def generate(self, call: calls.ChatCall) -> calls.Completion:
        """One generation for the pipeline: ``call.n`` answers (separate calls make up for an
        upstream that returns fewer choices than asked), schema-constrained when ``call.schema``
        is set (raises :class:`calls.StructuredOutputUnsupportedError` when no form is accepted)."""
        body: dict[str, Any] = {"messages": call.messages, **call.params}
        if call.schema is None:
            return await self._generate_n(body, call.n)
        for form in self._structured.forms():
            response_format = structured_output.response_format(form, call.schema)
            try:
                completion = await self._generate_n(
                    {**body, "response_format": response_format}, call.n
                )
            except UpstreamError as exc:
                if not structured_output.refused_form(exc.upstream_status):
                    raise
                self._structured.refused(form)
                continue
            self._structured.accepted(form)
            return dataclasses.replace(completion, structured=form)
        raise calls.StructuredOutputUnsupportedError(
            "the LLM upstream accepts no response_format with a JSON schema"
        )

    async def _generate_n(self, body: dict[str, Any], n: int) -> calls.Completion:
        data = await self.complete({**body, "n": n} if n > 1 else body)
        replies = [_reply(c) for c in data["choices"] if isinstance(c, dict)]
        usage = calls.Usage.of(data.get("usage"))
        model = str(data.get("model") or "")
        if not replies:
            raise self._fail(502, "bad_response", "LLM upstream returned no choices")
        while len(replies) < n:  # the upstream ignores n (llama.cpp): one call per answer
            more = await self.complete(body)
            replies.extend(_reply(c) for c in more["choices"][:1] if isinstance(c, dict))
            usage += calls.Usage.of(more.get("usage"))
            if not more["choices"]:
                break
        return calls.Completion(tuple(replies[: max(n, 1)]), usage, model)

    async def texts(self, messages: list[dict[str, str]], n: int = 1) -> list[str]:
        """The assistant texts of one completion with ``n`` choices (servers may return fewer)."""
        body: dict[str, Any] = {"messages": messages}
        if n > 1:
            body["n"] = n
        data = await self.complete(body)
        texts = [message_text(c.get("message") or {}) for c in data["choices"]]
        if not texts:
            raise self._fail(502, "bad_response", "LLM upstream returned no choices")
        return texts

    async def models(self) -> dict[str, Any]:
        data = await self._request("GET", self.models_url, None)
        if not isinstance(data, dict) or not isinstance(data.get("data"), list):
            raise self._fail(502, "bad_response", "LLM upstream returned no model list")
        return data

    async def model_listing(self) -> dict[str, Any] | None:
        """The model list as metadata (the context window it reports), or None when it
        cannot be read. No upstream error is counted or logged: no client request failed."""
        try:
            status, content = await self._http.fetch("GET", self.models_url, None)
        except (TimeoutError, aiohttp.ClientError):
            return None
        if status >= 400:
            return None
        try:
            data = json.loads(content)
        except ValueError:
            return None
        return data if isinstance(data, dict) else None

    async def _request(self, method: str, url: str, payload: dict[str, Any] | None) -> Any:
        try:
            status, content = await self._http.fetch(method, url, payload)
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise self._fail(*_transport_error(exc)) from exc
        if status >= 400:
            excerpt = content.decode("utf-8", "replace")[:EXCERPT_CHARS]
            raise self._fail(
                relayed_status(status),
                "http_status",
                f"LLM upstream answered HTTP {status}: {excerpt}",
                upstream_status=status,
            )
        try:
            return json.loads(content)
        except ValueError as exc:  # not JSON, or bytes in no Unicode encoding
            raise self._fail(502, "bad_response", "LLM upstream returned invalid JSON") from exc

    def _fail(
        self,
        status: int,
        reason: str,
        detail: str,
        *,
        streaming: bool = False,
        upstream_status: int | None = None,
    ) -> UpstreamError:
        metrics.UPSTREAM_ERRORS.labels(reason).inc()
        log_event(
            logger,
            events.UPSTREAM_FAILED,
            logging.WARNING,
            reason=reason,
            url=self.chat_url,
            **({"stream": True} if streaming else {}),
        )
        return UpstreamError(status, reason, detail, upstream_status=upstream_status)


def _reply(choice: dict[str, Any]) -> calls.Reply:
    reason = choice.get("finish_reason")
    return calls.Reply(message_text(choice.get("message") or {}), str(reason) if reason else None)


def _transport_error(exc: TimeoutError | aiohttp.ClientError) -> tuple[int, str, str]:
    # aiohttp's connect and read timeouts are ClientErrors and TimeoutErrors both.
    if isinstance(exc, TimeoutError):
        return 504, "timeout", f"LLM upstream timed out ({type(exc).__name__})"
    return 502, "unreachable", f"LLM upstream unreachable: {type(exc).__name__}"


class UpstreamStream:
    """One ``stream: true`` completion: :meth:`start` sends the request, checks the status
    and reads up to the first event (which names the ``model``, so every chunk the client
    gets can carry that name from the first); iterating yields the text deltas of choice 0
    (``content``, and ``refusal`` text, which a client shows as well). Events that arrive in
    one network read come out as one delta: a stream faster than its reader is read in
    larger pieces, so the reader's cost per piece (scanning, framing) is paid less often,
    and a paced one piece by piece. The stream must end with ``[DONE]`` or a
    ``finish_reason``: a connection that just stops is a failure, never a complete answer.
    An ``error`` event, an event that is not JSON or UTF-8, or content that is not text
    fail as ``bad_response``. The read timeout applies between network reads."""

    def __init__(self, generator: UpstreamGenerator, payload: dict[str, Any]) -> None:
        self._generator = generator
        self._payload = payload
        self._response: aiohttp.ClientResponse | None = None
        self._reads: AsyncIterator[bytes] | None = None
        self._events = _EventParser()
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.model: str | None = None
        self.done = False
        self._seen_event = False
        self._pending = ""  # text read by start(), not yet yielded
        self._span: tracing.Activation | None = None

    async def start(self) -> None:
        generator = self._generator
        # The client span lasts until the stream is closed (aclose), with the usage it reported.
        self._span = tracing.start_client_span(*generator._span_of(self._payload))
        try:
            with self._span.current():
                self._response = await generator._http.open(
                    "POST", generator.chat_url, self._payload
                )
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise self._fail(*_transport_error(exc)) from exc
        response = self._response
        if response.status >= 400:
            try:
                excerpt = (await response.read())[:EXCERPT_CHARS].decode("utf-8", "replace")
            except (TimeoutError, aiohttp.ClientError):
                excerpt = ""
            await self.aclose()
            raise self._fail(
                relayed_status(response.status),
                "http_status",
                f"LLM upstream answered HTTP {response.status}: {excerpt}",
                upstream_status=response.status,
            )
        kind = response.headers.get("content-type", "")
        if not kind.startswith("text/event-stream"):
            await self.aclose()
            raise self._fail(
                502,
                "bad_response",
                f"LLM upstream did not stream (Content-Type {kind[:EXCERPT_CHARS]!r})",
            )
        self._reads = response.content.iter_any()
        try:
            while not self._seen_event and not self.done:
                self._pending += await self._read()
        except Exception:
            await self.aclose()
            raise

    def __aiter__(self) -> AsyncIterator[str]:
        return self

    async def __anext__(self) -> str:
        if self._pending:
            text, self._pending = self._pending, ""
            return text
        while self._reads is not None and not self.done:
            text = await self._read()
            if text:
                return text  # after [DONE] or the end, the next call stops
        raise StopAsyncIteration

    async def _read(self) -> str:
        """The text of the events one network read completes ("" for none)."""
        assert self._reads is not None
        try:
            read = await anext(self._reads)
        except StopAsyncIteration:
            events, ended = self._parse(None), True
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise self._fail(*_transport_error(exc)) from exc
        else:
            events, ended = self._parse(read), False
        texts: list[str] = []
        for data in events:
            self._seen_event = True
            if data == "[DONE]":
                self.done = True
                break
            texts.append(self._delta(data))
        if ended and not self.done:
            if self.finish_reason is None:
                raise self._fail(502, "bad_response", "LLM upstream stream ended before [DONE]")
            self.done = True
        return "".join(texts)

    def _parse(self, read: bytes | None) -> list[str]:
        """The events ``read`` completes (``None``: the stream ended)."""
        try:
            return self._events.close() if read is None else self._events.feed(read)
        except UnicodeDecodeError as exc:
            raise self._fail(
                502, "bad_response", "LLM upstream sent an event that is not UTF-8"
            ) from exc

    def _delta(self, data: str) -> str:
        try:
            chunk = json.loads(data)
        except json.JSONDecodeError as exc:
            raise self._fail(
                502, "bad_response", "LLM upstream sent an event that is not JSON"
            ) from exc
        if not isinstance(chunk, dict):
            raise self._fail(
                502, "bad_response", "LLM upstream sent an event that is not an object"
            )
        if "error" in chunk:
            error = chunk["error"]
            message = error.get("message") if isinstance(error, dict) else error
            raise self._fail(
                502,
                "bad_response",
                f"LLM upstream failed mid-stream: {str(message)[:EXCERPT_CHARS]}",
            )
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        if isinstance(chunk.get("model"), str):
            self.model = chunk["model"]
        choices = chunk.get("choices") or []
        if not isinstance(choices, list):
            raise self._fail(502, "bad_response", "LLM upstream sent 'choices' that is not a list")
        texts: list[str] = []
        for choice in choices:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue  # n is 1: another choice is never shown, so never sent
            delta = choice.get("delta") or {}
            if not isinstance(delta, dict):
                raise self._fail(
                    502, "bad_response", "LLM upstream sent a delta that is not an object"
                )
            for key in ("content", "refusal"):
                value = delta.get(key)
                if value is None:
                    continue
                if not isinstance(value, str):
                    raise self._fail(
                        502, "bad_response", "LLM upstream sent a delta that cannot be scanned"
                    )
                texts.append(value)
            if choice.get("finish_reason"):
                self.finish_reason = str(choice["finish_reason"])
        return "".join(texts)

    async def aclose(self) -> None:
        """Close the upstream response (and so its connection, when it is still streaming)."""
        self.done = True
        span, self._span = self._span, None
        if span is not None:
            usage = calls.Usage.of(self.usage)
            tracing.model_call_result(
                span.handle,
                model=self.model,
                input_tokens=usage.prompt_tokens,
                output_tokens=usage.completion_tokens,
                finish_reasons=[self.finish_reason] if self.finish_reason else None,
            )
            span.handle.end()
        response, self._response = self._response, None
        if response is not None:
            # A response read to its end has already given its connection back to the pool;
            # one still streaming loses it, so the upstream stops generating.
            response.close()

    def _fail(
        self, status: int, reason: str, detail: str, *, upstream_status: int | None = None
    ) -> UpstreamError:
        self.done = True
        span, self._span = self._span, None
        if span is not None:
            span.handle.error(reason)
            span.handle.end()
        return self._generator._fail(
            status, reason, detail, streaming=True, upstream_status=upstream_status
        )


class _EventParser:
    """The ``data`` of server-sent events, fed bytes as they arrive: several ``data:`` lines
    of one event are joined by newlines; comments, ``event:``, ``id:`` and ``retry:`` fields
    are skipped; lines end with LF or CRLF."""

    def __init__(self) -> None:
        self._partial = b""
        self._data: list[str] = []

    def feed(self, read: bytes) -> list[str]:
        *lines, self._partial = (self._partial + read).split(b"\n")
        return self._events(lines)

    def close(self) -> list[str]:
        """The end of the stream: an event not yet ended by a blank line counts too."""
        lines, self._partial = [self._partial, b""], b""
        return self._events(lines)

    def _events(self, lines: list[bytes]) -> list[str]:
        events: list[str] = []
        for raw in lines:
            line = raw.removesuffix(b"\r").decode("utf-8")
            if not line:
                if self._data:
                    events.append("\n".join(self._data))
                    self._data = []
            elif line.startswith("data:"):
                value = line[5:]
                self._data.append(value[1:] if value.startswith(" ") else value)
        return events
