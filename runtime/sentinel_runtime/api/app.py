"""Assemble the FastAPI app: lifespan-built services, routers, auth and one error shape."""

from __future__ import annotations

import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from sentinel_runtime import __version__
from sentinel_runtime.access.control import AccessControl, KeysState
from sentinel_runtime.answer.services import build_services
from sentinel_runtime.api import errors
from sentinel_runtime.api.admission_gate import AdmissionGate
from sentinel_runtime.api.request_guard import RequestGuard
from sentinel_runtime.api.request_metrics import RequestMetrics
from sentinel_runtime.api.request_tracing import RequestTracing
from sentinel_runtime.api.routes import (
    audit,
    chat,
    completions,
    embeddings,
    governance,
    guardrails,
    health,
    indexes,
    rag,
)
from sentinel_runtime.governance.service import GovernanceError
from sentinel_runtime.guardrails.reloader import FileReloader
from sentinel_runtime.observability import events, tracing
from sentinel_runtime.observability.logs import log_event
from sentinel_runtime.settings import Settings

logger = logging.getLogger(__name__)


GC_THRESHOLDS = (50_000, 50, 100)


def create_app(settings: Settings | None = None, *, freeze_heap: bool = False) -> FastAPI:
    """The runtime's app. ``freeze_heap`` (``sentinel serve``) freezes what start-up built
    out of the garbage collector's reach; in-process tests create many apps and leave it off,
    or every app's objects would stay frozen after the app is gone."""
    settings = settings or Settings()
    # Read now: a keys file that cannot be used stops the start (keys.KeysFileError).
    access = AccessControl.from_settings(settings.RUNTIME_API_KEY, settings.RUNTIME_KEYS_FILE)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Off unless the OTEL_* variables ask for it (docs/tracing.md).
        tracing.configure(
            "sentinel-runtime", capture_content=settings.SENTINEL_TRACE_CAPTURE_CONTENT
        )
        services = build_services(settings)
        app.state.services = services
        keys_reloader = _keys_reloader(access.keys)
        if freeze_heap:
            # What start-up built (indexes, judges, scanners, the demo corpus) lives as long
            # as the process: frozen, full collections no longer walk it. Unfrozen, each took
            # about 65 ms every 3 s under load, the whole one-client p99 tail
            # (bench/http_load.py --tail).
            gc.collect()
            gc.freeze()
            # A request leaves thousands of short-lived objects that reference counting
            # frees; the cycle collector's default first threshold (700 allocations) ran it
            # hundreds of times a second under load: 12 % of the runtime's time at 800
            # connections, 1.44 -> 1.25 ms of CPU per turn at 32 (bench/overload.py).
            gc.set_threshold(*GC_THRESHOLDS)
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
            if keys_reloader is not None:
                keys_reloader.stop()
            await services.aclose()
            tracing.shutdown()  # exports the spans still queued
            log_event(logger, events.RUNTIME_STOPPED)

    app = FastAPI(title="Sentinel runtime", version=__version__, lifespan=lifespan)
    app.state.access = access
    app.include_router(health.router)
    for router in (chat, completions, embeddings, guardrails, indexes, rag, audit, governance):
        app.include_router(router.router, responses=errors.ERROR_RESPONSES)
    app.add_exception_handler(GovernanceError, governance.governance_error)
    errors.install(app)

    # Admission sits inside the guard (a refused request takes no slot) and the metrics
    # middleware (shed turns are counted); the guard inside the metrics, so its refusals are too.
    app.add_middleware(AdmissionGate)
    app.add_middleware(
        RequestGuard,
        max_body_bytes=settings.MAX_REQUEST_BYTES,
        access=access,
    )
    app.add_middleware(RequestMetrics)
    # Outermost: the metrics observe their latency inside the request's span (exemplars).
    app.add_middleware(RequestTracing)
    return app


def _keys_reloader(state: KeysState | None) -> FileReloader | None:
    """The keys file follows its Secret like the policy follows its ConfigMap (always on:
    a revoked key must stop working without a restart)."""
    if state is None:
        return None
    reloader = FileReloader(
        state,
        name="keys-reloader",
        started_event=events.KEYS_HOT_RELOAD_STARTED,
        terminated_event=events.KEYS_RELOADER_TERMINATED,
    )
    reloader.start()
    return reloader
