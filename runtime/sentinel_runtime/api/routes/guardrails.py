"""``/v1/guardrails``: the active policy, and scanning a text with it."""

from __future__ import annotations

from functools import partial
from typing import Any

from fastapi import APIRouter, HTTPException

from sentinel_runtime.answer import policy
from sentinel_runtime.answer.offload import run_sized
from sentinel_runtime.api.deps import ServicesDep
from sentinel_runtime.api.protocol import ScanRequest, ScanResponse
from sentinel_runtime.api.scopes import PrincipalDep, check_policy

router = APIRouter(prefix="/v1/guardrails", tags=["guardrails"])


@router.get("/policy")
async def active_policy(services: ServicesDep, principal: PrincipalDep) -> dict[str, Any]:
    check_policy(principal)
    return policy.describe(services)


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
    outcome = await run_sized(
        len(request.text), partial(engine.scan, response_id="scan"), request.text
    )
    return ScanResponse(
        text=outcome.text,
        action=outcome.action,
        policy_hash=engine.policy.sha256,
        scanners=[hit.describe() for hit in outcome.hits],
        fail_open=[failure.describe() for failure in outcome.failures],
    )
