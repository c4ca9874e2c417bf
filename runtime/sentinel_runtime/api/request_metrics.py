"""ASGI middleware that counts and times every HTTP request by route template.

The label is the template of the route the app's router chose (``/indexes/{name}``, read
from the ASGI scope after routing), so a path parameter never becomes a label value and the
number of series stays bounded by the routes the app declares. A request that reached no
route (an unknown path, or one the request guard rejected before routing: 400, 401, 413)
is ``other``; so is a method outside the standard ones. A turn admission control shed before
routing (429, 503) is counted under its route: the gate names it in the scope
(:data:`SHED_ROUTE`), and every admitted route is a template without parameters. The ``key``
label is the name the request guard found (``request_guard.KEY_NAME``): a key's name from the
keys file, ``runtime-api-key``, ``anonymous`` or ``unauthenticated``.
"""

from __future__ import annotations

import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sentinel_runtime.access import keys
from sentinel_runtime.api.request_guard import KEY_NAME
from sentinel_runtime.observability import metrics, tracing

UNMATCHED = "other"
# An ASGI scope extension key: the route of a turn shed before routing (api.admission_gate).
SHED_ROUTE = "sentinel.shed_route"
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def route_template(scope: Scope) -> str:
    """The path template of the route that served ``scope``, or ``other``."""
    path = getattr(scope.get("route"), "path", None) or scope.get(SHED_ROUTE)
    return path if isinstance(path, str) and path else UNMATCHED


class RequestMetrics:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method = scope["method"] if scope["method"] in METHODS else UNMATCHED
        status = 500  # what the client gets if the app raises before it answers
        started = time.perf_counter()

        async def send_with_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_with_status)
        finally:
            # Routing has written the matched route into the scope by now.
            route = route_template(scope)
            key = scope.get(KEY_NAME, keys.ANONYMOUS)
            metrics.HTTP_REQUESTS.labels(route, method, str(status), key).inc()
            elapsed = time.perf_counter() - started
            # The trace id as an OpenMetrics exemplar (docs/tracing.md), with tracing on.
            histogram = metrics.HTTP_DURATION.labels(route, method)
            histogram.observe(elapsed, exemplar=tracing.exemplar())
