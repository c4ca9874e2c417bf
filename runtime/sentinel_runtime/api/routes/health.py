"""Liveness, readiness and the Prometheus scrape endpoint.

``/ready`` is 503 only while guardrails are enabled and no policy is active. Its body also
says what serves degraded: a failed policy reload (the previous policy keeps serving), the
indexes, loaded and quarantined at start (``index.backends``), and admission (turns in flight
and queued against their bounds). ``/ready`` is open (the kubelet calls it without a key), so
with scoped keys (``RUNTIME_KEYS_FILE``) it counts the indexes instead of naming them: a key
sees only the names it may read (``GET /indexes``). A saturated replica stays ready:
Kubernetes would take it out of the Service, its load would fall on the others, saturate them
in turn, and with every replica out the Service answers nothing at all; shedding with 429/503
and Retry-After is how it says "not now" (docs/under-load.md).
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY
from prometheus_client.exposition import choose_encoder
from starlette.concurrency import run_in_threadpool

from sentinel_runtime.answer.services import Services
from sentinel_runtime.api.deps import ServicesDep
from sentinel_runtime.index.base import VectorDBError

router = APIRouter(tags=["ops"])


@router.get("/health")
async def health() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/ready")
async def ready(services: ServicesDep, request: Request) -> JSONResponse:
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
    failure = state.last_failure
    if state.engine is not None and state.reload_failed and failure is not None:
        # Still ready: the previous policy serves, but the file on disk is not it.
        body["guardrails"] = {**body["guardrails"], "reloadFailed": failure.describe()}
    indexes = await run_in_threadpool(_indexes, services)
    if request.app.state.access.scoped:
        indexes = _counted(indexes)
    body["indexes"] = indexes
    body["admission"] = services.admission.saturation().describe()
    return JSONResponse(body, status_code=200 if state.ready else 503)


def _indexes(services: Services) -> dict[str, object]:
    """The indexes served, and the files quarantined at start (they serve nothing)."""
    indexes = services.indexes
    detail: dict[str, object] = {"loaded": None}
    try:
        detail["loaded"] = indexes.names()
    except VectorDBError as exc:
        detail["error"] = str(exc)
    detail["quarantined"] = [record.describe() for record in indexes.quarantined()]
    return detail


def _counted(detail: dict[str, object]) -> dict[str, object]:
    """The indexes' detail without a name in it."""
    counted: dict[str, object] = {}
    for field, value in detail.items():
        counted[field] = len(value) if isinstance(value, list) else value
    return counted


@router.get(
    "/metrics",
    response_class=Response,
    responses={200: {"content": {CONTENT_TYPE_LATEST.split(";")[0]: {}}}},
)
async def prometheus_metrics(request: Request) -> Response:
    # Prometheus asks for OpenMetrics first (Accept: application/openmetrics-text): only that
    # format carries the exemplars (the trace ids on latency histograms, docs/tracing.md).
    encode, media_type = choose_encoder(request.headers.get("accept", ""))
    return Response(encode(REGISTRY), media_type=media_type)
