"""The edge every request passes before any route: size, key, text, and a last resort.

A pure ASGI middleware (no per-response stream wrapping) that, in order:

- refuses a declared ``Content-Length`` that is malformed (400) or over the limit (413);
- authenticates the request when keys are configured (``RUNTIME_API_KEY``, the scoped keys
  of ``RUNTIME_KEYS_FILE``), except on the open probe paths: 401 without a valid key; then
  holds it to its key's rate limits: 429 with ``Retry-After`` (``access.limits``);
- reads the body itself, counting bytes as they arrive, and answers 413 the moment the
  limit is passed: a chunked body without ``Content-Length`` is held to the same limit, and
  nothing past it is ever buffered;
- refuses text no route can use: a NUL or a lone UTF-16 surrogate anywhere in the path,
  the query or a JSON body (400, with the JSON field at fault as ``param``), before any
  work starts, so nothing half-done is left behind;
- turns an exception no handler took into a 500 *answer* instead of letting it propagate:
  Starlette's outermost middleware re-raises after answering, which makes the server
  close the keep-alive connection; here the connection stays usable.

The request's principal is kept in the scope (``PRINCIPAL``; routes check its scopes) and in
``access.caller`` for the layers below (the audit record names the key); its name is the
``key`` label of the request metrics (``KEY_NAME``). Once the response is over, the tokens
its answer used are charged to the key.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sentinel_runtime.access import caller, keys
from sentinel_runtime.access.control import AccessControl
from sentinel_runtime.access.limits import Refusal
from sentinel_runtime.api import errors
from sentinel_runtime.observability import events
from sentinel_runtime.observability.logs import log_event

logger = logging.getLogger(__name__)

OPEN_PATHS = frozenset({"/health", "/ready", "/metrics"})
# Scope entries this middleware writes: the principal (absent on open paths and refusals
# before authentication) and the key name the request metrics label it with.
PRINCIPAL = "sentinel.principal"
KEY_NAME = "sentinel.key"
LIMIT_NAMES = {"rpm": "requests per minute (rpm)", "tpm": "tokens per minute (tpm)"}
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# Only a body holding one of these can decode to a NUL or a lone surrogate: an escaped
# surrogate or NUL, or a surrogate's raw UTF-8 bytes (Python's JSON reader lets those
# through). Bodies without one skip the full check.
_SUSPECT_BODY = re.compile(rb"\\u[dD][89a-fA-F]|\\u0000|\xed[\xa0-\xbf]")
_FORBIDDEN_TEXT = re.compile("[\x00\ud800-\udfff]")


class BodyTooLargeError(Exception):
    """The body passed the limit while it was being read."""


class RequestGuard:
    def __init__(
        self, app: ASGIApp, *, max_body_bytes: int, access: AccessControl | None = None
    ) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.access = access or AccessControl()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_tracking(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        scope[KEY_NAME] = keys.UNAUTHENTICATED if self.access.required else keys.ANONYMOUS
        try:
            refusal = self._screen_head(scope)
            if refusal is not None:
                await _reject(scope, send, *refusal)
                return
            principal: keys.Principal | None = scope.get(PRINCIPAL)
            if principal is not None:
                limited = self.access.admit(principal)
                if limited is not None:
                    await _rate_limited(scope, send, principal, limited)
                    return
            if scope["method"] in _BODY_METHODS:
                try:
                    body = await self._read_body(receive)
                except BodyTooLargeError:
                    await _reject(
                        scope, send, 413, f"request body larger than {self.max_body_bytes} bytes"
                    )
                    return
                bad = _forbidden_json_text(body) if _SUSPECT_BODY.search(body) else None
                if bad is not None:
                    await _reject(scope, send, 400, *bad)
                    return
                receive = _replay(body, receive)
            if principal is None:
                await self.app(scope, receive, send_tracking)
                return
            call, token = caller.begin(principal)
            try:
                await self.app(scope, receive, send_tracking)
            finally:
                caller.end(token)
                self.access.charge(principal, call.tokens)
        except Exception:
            if started:
                raise  # mid-response: nothing can be said any more; the server closes
            logger.exception("unhandled error on %s", scope.get("path", ""))
            await _send_json(send, 500, errors.error_body(500, "internal server error"))

    def _screen_head(self, scope: Scope) -> tuple[int, str, str | None] | None:
        headers = _headers(scope)
        length = headers.get("content-length")
        if length is not None and not length.isdigit():
            return 400, "invalid Content-Length header", None
        if length is not None and int(length) > self.max_body_bytes:
            return 413, f"request body larger than {self.max_body_bytes} bytes", None
        if scope["path"] not in OPEN_PATHS:
            principal = self.access.authenticate(headers.get("authorization"))
            if principal is None:
                return 401, "missing or invalid API key", None
            scope[PRINCIPAL] = principal
            scope[KEY_NAME] = principal.name
        if _FORBIDDEN_TEXT.search(scope["path"]):
            return 400, "the path holds a NUL or an unpaired surrogate character", None
        query = scope.get("query_string", b"").decode("latin-1")
        for name, value in parse_qsl(query, keep_blank_values=True):
            if _FORBIDDEN_TEXT.search(name) or _FORBIDDEN_TEXT.search(value):
                return 400, f"{name}: text holds a NUL or an unpaired surrogate character", name
        return None

    async def _read_body(self, receive: Receive) -> bytes:
        parts: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break  # the client left; the route sees an empty body and the server cleans up
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                raise BodyTooLargeError
            parts.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(parts)


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}


def _replay(body: bytes, receive: Receive) -> Receive:
    """The body already read, then whatever the client sends next (a disconnect)."""
    delivered = False

    async def replay() -> Message:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def _forbidden_json_text(body: bytes) -> tuple[str, str] | None:
    """The first JSON string (key or value) holding a NUL or a lone surrogate: a message
    and the field's dotted path. A body that is not JSON is left to the route."""
    try:
        value = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    for path, text in _strings(value, ()):
        if _FORBIDDEN_TEXT.search(text):
            field = ".".join(path)
            where = f"{field}: " if field else ""
            return f"{where}text holds a NUL or an unpaired surrogate character", field
    return None


def _strings(value: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield path, key
            yield from _strings(item, (*path, key))
    elif isinstance(value, list):
        for position, item in enumerate(value):
            yield from _strings(item, (*path, str(position)))


async def _reject(
    scope: Scope, send: Send, status: int, message: str, param: str | None = None
) -> None:
    log_event(
        logger, events.REQUEST_REJECTED, logging.WARNING, path=scope.get("path"), status=status
    )
    body = errors.error_body(status, message, param=param)
    headers = [(b"www-authenticate", b"Bearer")] if status == 401 else []
    await _send_json(send, status, body, headers)


async def _rate_limited(
    scope: Scope, send: Send, principal: keys.Principal, refusal: Refusal
) -> None:
    """OpenAI's 429: ``rate_limit_exceeded``, and when to come back."""
    seconds = refusal.retry_after_seconds
    limit = principal.rpm if refusal.limit == "rpm" else principal.tpm
    log_event(
        logger,
        events.REQUEST_RATE_LIMITED,
        logging.WARNING,
        path=scope.get("path"),
        key=principal.name,
        limit=refusal.limit,
        retry_after=seconds,
    )
    message = (
        f"Rate limit reached for key {principal.name} on {LIMIT_NAMES[refusal.limit]}: "
        f"limit {limit}. Please try again in {seconds}s."
    )
    body = errors.error_body(429, message, code="rate_limit_exceeded")
    await _send_json(send, 429, body, [(b"retry-after", str(seconds).encode())])


async def _send_json(
    send: Send, status: int, body: dict[str, Any], headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    payload = json.dumps(body, separators=(",", ":")).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})
