"""The HTTP side of admission control (``answer.admission``): which routes run a turn, and
what a shed turn is told.

A pure ASGI middleware inside the request guard (so a request without a valid key or with an
oversized body is refused before it takes a slot) and outside the routes: it holds the slot
for the whole response, so a streamed answer keeps it until its last event is sent or the
client leaves. A shed turn gets OpenAI's error body with ``Retry-After``:

- 429 ``rate_limit_exceeded`` (code ``queue_full``): refused at once, every slot and every
  queue place taken: the client sends more than this replica runs; back off;
- 503 ``server_error`` (code ``queue_timeout``): it waited ``MAX_QUEUE_SECONDS`` and no turn
  ended: this replica is slowed down (usually by the model server), not the client too fast.

OpenAI's clients retry both after ``Retry-After``. Health, readiness, metrics, the index
API and ``/validate`` (no model, no pipeline) are never admitted.
"""

from __future__ import annotations

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from sentinel_runtime.answer.admission import ShedError
from sentinel_runtime.api import errors
from sentinel_runtime.api.request_metrics import SHED_ROUTE

# (method, path) of every route that runs a turn; tests/api check each is a route of the app.
ADMITTED_ROUTES = frozenset(
    {
        ("POST", "/v1/chat/completions"),
        ("POST", "/v1/completions"),
        ("POST", "/answer"),
        ("POST", "/retrieve"),
        ("GET", "/debug/retrieval"),
    }
)
SHED_STATUS = {"queue_full": 429, "queue_timeout": 503}


class AdmissionGate:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or (scope["method"], scope["path"]) not in ADMITTED_ROUTES:
            await self.app(scope, receive, send)
            return
        controller = scope["app"].state.services.admission
        try:
            slot = await controller.admit(scope["path"])
        except ShedError as shed:
            scope[SHED_ROUTE] = scope["path"]  # counted under its route, not "other"
            await shed_response(shed)(scope, receive, send)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            slot.release()


def shed_response(shed: ShedError) -> JSONResponse:
    response = errors.error_response(SHED_STATUS[shed.reason], shed.message, code=shed.reason)
    response.headers["Retry-After"] = str(shed.retry_after)
    return response
