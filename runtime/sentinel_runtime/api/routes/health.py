"""Liveness, readiness and the Prometheus scrape endpoint."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from sentinel_runtime.api.deps import ServicesDep

router = APIRouter(tags=["ops"])


@router.get("/health")
async def health() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/ready")
async def ready(services: ServicesDep) -> JSONResponse:
    state = services.guardrails
    body: dict[str, object] = {"ready": state.ready, "guardrails": {"enabled": state.enabled}}
    if state.engine is not None:
        body["guardrails"] = {
            "enabled": True,
            "policyHash": state.engine.policy.sha256,
            "path": state.path,
        }
    if not state.ready and state.error is not None:
        body["guardrails"] = {
            "enabled": True,
            "path": state.path,
            "error": {"status": state.error.status, "message": state.error.message},
        }
    return JSONResponse(body, status_code=200 if state.ready else 503)


@router.get("/metrics")
async def prometheus_metrics() -> Response:
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
