"""``/v1/guardrails``: the active policy, and scanning a text with it."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException
from starlette.concurrency import run_in_threadpool

from sentinel_runtime.api.deps import ServicesDep
from sentinel_runtime.api.protocol import ScanRequest, ScanResponse
from sentinel_runtime.guardrails.engine import FAILURE_DETAIL, OutputGuardrailsError
from sentinel_runtime.pipeline import config as pipeline_config

router = APIRouter(prefix="/v1/guardrails", tags=["guardrails"])


@router.get("/policy")
async def active_policy(services: ServicesDep) -> dict[str, Any]:
    state = services.guardrails
    engine = state.engine
    if engine is None:
        return {
            "enabled": state.enabled,
            "active": False,
            "path": state.path if state.enabled else "",
            "error": {"status": state.error.status, "message": state.error.message}
            if state.error
            else None,
        }
    policy = engine.policy
    pipeline = pipeline_config.for_policy(policy)
    return {
        "enabled": True,
        "active": True,
        "path": state.path,
        "sha256": policy.sha256,
        "loadedAt": engine.loaded_at,
        "action": policy.default_action,
        "blockMessage": policy.block_message,
        "scanners": [active.spec.describe() for active in engine.scanners],
        "skipped": [skipped.describe() for skipped in engine.skipped],
        "diagnostics": [
            {"event": d.event, **d.fields} for d in (*policy.diagnostics, *pipeline.diagnostics)
        ],
        "pipeline": pipeline.describe(),  # the sections in force, defaults included
        # The tools section's rulebase: the active one's policy hash, a rejected one's problems.
        "governance": services.governance.status(),
    }


@router.post("/scan")
async def scan_text(request: ScanRequest, services: ServicesDep) -> ScanResponse:
    engine = services.guardrails.engine
    if engine is None:
        detail = (
            "output guardrails are disabled"
            if not services.guardrails.enabled
            else "no guardrails policy is active"
        )
        raise HTTPException(409, detail)
    try:
        outcome = await run_in_threadpool(engine.scan, request.text, response_id="scan")
    except OutputGuardrailsError as exc:
        raise HTTPException(500, FAILURE_DETAIL) from exc
    return ScanResponse(
        text=outcome.text,
        action=outcome.action,
        policy_hash=engine.policy.sha256,
        scanners=[hit.describe() for hit in outcome.hits],
        fail_open=[failure.describe() for failure in outcome.failures],
    )
