"""One guard-model call over HTTP: a ``GuardRequest`` to an OpenAI-compatible server, its
``GuardReply`` back.

Chat requests go to ``{url}/chat/completions``, raw prompts to ``{url}/completions`` (a
family whose model reads its own instruction prompt). The first generated token's
log-probabilities are read from either shape when the server returned them: chat's
``choices[0].logprobs.content[0].top_logprobs`` (a list of ``{token, logprob}``) or
completions' ``choices[0].logprobs.top_logprobs[0]`` (a mapping). Failures are
``GuardCallError`` with a closed ``outcome``, so the caller can count them and apply
``guard.onError`` without reading messages.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import aiohttp

from sentinel_runtime.guard.types import GuardReply, GuardRequest
from sentinel_runtime.llm.http_client import Sessions
from sentinel_runtime.observability import tracing

Failure = Literal["timeout", "error", "malformed"]


class GuardCallError(Exception):
    """The guard server did not give a readable reply."""

    def __init__(self, outcome: Failure, detail: str) -> None:
        super().__init__(detail)
        self.outcome: Failure = outcome
        self.detail = detail


def base_url(url: str) -> str:
    """The server's base URL; a full ``.../chat/completions`` or ``.../completions`` URL is
    accepted too, as for the main model."""
    trimmed = url.strip().rstrip("/")
    for suffix in ("/chat/completions", "/completions"):
        if trimmed.endswith(suffix):
            return trimmed[: -len(suffix)]
    return trimmed


class GuardClient:
    """Posts guard requests to one server with one model and one token."""

    def __init__(
        self, url: str, *, model: str, token: str, timeout: float, max_connections: int
    ) -> None:
        self.base = base_url(url)
        self.model = model
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = Sessions(headers=headers, timeout=timeout, max_connections=max_connections)

    def body(self, request: GuardRequest) -> dict[str, Any]:
        body: dict[str, Any] = dict(request.params)
        if self.model:
            body["model"] = self.model
        if request.messages is not None:
            body["messages"] = [dict(m) for m in request.messages]
        else:
            body["prompt"] = request.prompt
        return body

    async def call(self, request: GuardRequest) -> GuardReply:
        """One guard call, as a client span named by the GenAI conventions (docs/tracing.md)."""
        operation = "chat" if request.endpoint == "chat" else "text_completion"
        path = "/chat/completions" if request.endpoint == "chat" else "/completions"
        attributes = tracing.model_call_attributes(operation, self.model, self.base + path)
        attributes["sentinel.guard"] = True
        name = tracing.model_call_name(operation, self.model)
        with tracing.client_span(name, attributes) as span:
            try:
                return await self._call(request, path)
            except GuardCallError as exc:
                span.error(exc.outcome)
                raise

    async def _call(self, request: GuardRequest, path: str) -> GuardReply:
        try:
            status, content = await self._http.fetch("POST", self.base + path, self.body(request))
        except TimeoutError as exc:
            raise GuardCallError("timeout", "the guard server did not answer in time") from exc
        except aiohttp.ClientError as exc:
            raise GuardCallError(
                "error", f"guard server unreachable: {type(exc).__name__}"
            ) from exc
        if status >= 400:
            raise GuardCallError("error", f"guard server answered HTTP {status}")
        try:
            data = json.loads(content)
        except ValueError as exc:
            raise GuardCallError("malformed", "guard server returned invalid JSON") from exc
        return read_reply(data, request.endpoint)

    async def aclose(self) -> None:
        await self._http.aclose()


def read_reply(data: Any, endpoint: Literal["chat", "completions"]) -> GuardReply:
    """The text and first-token log-probabilities of an OpenAI-shaped completion."""
    try:
        choice = data["choices"][0]
        if endpoint == "chat":
            text = choice["message"].get("content") or ""
        else:
            text = choice.get("text") or ""
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise GuardCallError("malformed", "guard reply has no choices") from exc
    if not isinstance(text, str):
        raise GuardCallError("malformed", "guard reply's text is not a string")
    return GuardReply(text=text, first_token_logprobs=_first_token_logprobs(choice))


def _first_token_logprobs(choice: dict[str, Any]) -> dict[str, float] | None:
    logprobs = choice.get("logprobs")
    if not isinstance(logprobs, dict):
        return None
    found: dict[str, float] = {}
    content = logprobs.get("content")
    if isinstance(content, list) and content and isinstance(content[0], dict):
        first = content[0]
        for entry in first.get("top_logprobs") or []:
            if isinstance(entry, dict) and _number(entry.get("logprob")):
                found.setdefault(str(entry.get("token", "")), float(entry["logprob"]))
        if _number(first.get("logprob")):
            found.setdefault(str(first.get("token", "")), float(first["logprob"]))
    top = logprobs.get("top_logprobs")
    if isinstance(top, list) and top and isinstance(top[0], dict):
        for token, value in top[0].items():
            if _number(value):
                found.setdefault(str(token), float(value))
    return found or None


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
