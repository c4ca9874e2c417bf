"""Client of an OpenAI-compatible upstream (vLLM, KAITO workspaces, OpenAI itself).

Every failure becomes :class:`UpstreamError` with the HTTP status the runtime should
answer (502 for an unusable upstream, 504 for a slow one) and a reason for the metric.
Upstream bodies are never echoed into our errors beyond a short, bounded excerpt.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx

from sentinel_runtime.llm.embedded import message_text
from sentinel_runtime.observability import events, metrics
from sentinel_runtime.observability.logs import log_event

logger = logging.getLogger(__name__)

EXCERPT_CHARS = 200


class UpstreamError(Exception):
    def __init__(self, status_code: int, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.status_code = status_code
        self.reason = reason
        self.detail = detail


class UpstreamGenerator:
    def __init__(self, *, chat_url: str, access_secret: str, model: str, timeout: float) -> None:
        self.chat_url = chat_url
        self.models_url = chat_url.removesuffix("/chat/completions") + "/models"
        self.default_model = model
        headers = {"Authorization": f"Bearer {access_secret}"} if access_secret else {}
        self._client = httpx.AsyncClient(
            headers=headers, timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0))
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    async def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        payload = dict(body)
        if not payload.get("model") and self.default_model:
            payload["model"] = self.default_model
        payload["stream"] = False
        data = await self._request("POST", self.chat_url, payload)
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

    async def _request(self, method: str, url: str, payload: dict[str, Any] | None) -> Any:
        try:
            response = await self._client.request(method, url, json=payload)
        except httpx.TimeoutException as exc:
            raise self._fail(
                504, "timeout", f"LLM upstream timed out ({type(exc).__name__})"
            ) from exc
        except httpx.HTTPError as exc:
            raise self._fail(
                502, "unreachable", f"LLM upstream unreachable: {type(exc).__name__}"
            ) from exc
        if response.status_code >= 400:
            excerpt = response.text[:EXCERPT_CHARS]
            raise self._fail(
                502, "http_status", f"LLM upstream answered HTTP {response.status_code}: {excerpt}"
            )
        try:
            return response.json()
        except json.JSONDecodeError as exc:
            raise self._fail(502, "bad_response", "LLM upstream returned invalid JSON") from exc

    def _fail(self, status: int, reason: str, detail: str) -> UpstreamError:
        metrics.UPSTREAM_ERRORS.labels(reason).inc()
        log_event(logger, events.UPSTREAM_FAILED, logging.WARNING, reason=reason, url=self.chat_url)
        return UpstreamError(status, reason, detail)
