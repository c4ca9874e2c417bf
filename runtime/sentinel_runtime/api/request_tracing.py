"""ASGI middleware that opens the server span of every HTTP request (docs/tracing.md).

Outermost, so that the request metrics (``request_metrics``) observe their latency while the
span is current and tag it with the trace id as an exemplar, and the whole turn, the pipeline's
stage spans and the model calls, nests under it. It continues the trace a client's W3C
``traceparent`` header names. The span is named ``METHOD /route/template`` once routing has
chosen the route (``request_metrics.route_template``), so a path parameter never becomes part
of a span name. With tracing off it costs one check per request.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sentinel_runtime.api.request_metrics import route_template
from sentinel_runtime.observability import tracing


class RequestTracing:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not tracing.enabled():
            await self.app(scope, receive, send)
            return
        method = scope["method"]
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        attributes = {"http.request.method": method, "url.path": scope["path"]}
        status = 500

        async def send_with_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        with tracing.server_span(method, headers, attributes) as span:
            try:
                await self.app(scope, receive, send_with_status)
            finally:
                route = route_template(scope)
                span.rename(f"{method} {route}")
                span.set(**{"http.route": route, "http.response.status_code": status})
                if status >= 500:
                    span.error(str(status))
