"""Assemble the FastAPI app: lifespan-built services, routers, auth and one error shape."""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from sentinel_runtime import __version__
from sentinel_runtime.answer.services import build_services
from sentinel_runtime.api import errors
from sentinel_runtime.api.request_metrics import RequestMetrics
from sentinel_runtime.api.routes import audit, chat, governance, guardrails, health, indexes, rag
from sentinel_runtime.governance.service import GovernanceError
from sentinel_runtime.observability import events
from sentinel_runtime.observability.logs import log_event
from sentinel_runtime.settings import Settings

logger = logging.getLogger(__name__)

OPEN_PATHS = frozenset({"/health", "/ready", "/metrics"})
MAX_BODY_BYTES = 8 * 1024 * 1024


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        services = build_services(settings)
        app.state.services = services
        log_event(
            logger,
            events.RUNTIME_STARTED,
            version=__version__,
            guardrails_enabled=settings.OUTPUT_GUARDRAILS_ENABLED,
            policy_path=services.guardrails.path if settings.OUTPUT_GUARDRAILS_ENABLED else "",
            llm="upstream" if settings.LLM_INFERENCE_URL else "embedded",
            embedder=services.indexes.embedder.name,
            indexes=services.indexes.describe(),
        )
        try:
            yield
        finally:
            await services.aclose()
            log_event(logger, events.RUNTIME_STOPPED)

    app = FastAPI(title="Sentinel runtime", version=__version__, lifespan=lifespan)
    app.include_router(health.router)
    app.include_router(chat.router)
    app.include_router(guardrails.router)
    app.include_router(indexes.router)
    app.include_router(rag.router)
    app.include_router(audit.router)
    app.include_router(governance.router)
    app.add_exception_handler(GovernanceError, governance.governance_error)
    errors.install(app)

    @app.middleware("http")
    async def screen_requests(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        length = request.headers.get("content-length")
        if length is not None and not length.isdigit():
            return _reject(request, 400, "invalid Content-Length header")
        if length is not None and int(length) > MAX_BODY_BYTES:
            return _reject(request, 413, f"request body larger than {MAX_BODY_BYTES} bytes")
        key = settings.RUNTIME_API_KEY
        if key and request.url.path not in OPEN_PATHS:
            supplied = request.headers.get("authorization", "")
            expected = f"Bearer {key}"
            if not secrets.compare_digest(supplied.encode(), expected.encode()):
                return _reject(request, 401, "missing or invalid API key", bearer=True)
        return await call_next(request)

    # Added last, so it wraps the screening above: rejected requests are counted too.
    app.add_middleware(RequestMetrics)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        logger.exception("unhandled error on %s", request.url.path)
        return errors.error_response(500, "internal server error")

    return app


def _reject(request: Request, status: int, detail: str, *, bearer: bool = False) -> JSONResponse:
    log_event(
        logger, events.REQUEST_REJECTED, logging.WARNING, path=request.url.path, status=status
    )
    headers = {"WWW-Authenticate": "Bearer"} if bearer else None
    return JSONResponse(errors.error_body(status, detail), status_code=status, headers=headers)
