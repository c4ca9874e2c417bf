"""``GET /v1/audit``: the most recent audit records, newest first, filtered."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from sentinel_runtime.api.deps import ServicesDep
from sentinel_runtime.api.scopes import PrincipalDep, check_audit

router = APIRouter(prefix="/v1", tags=["audit"])


@router.get("/audit")
async def audit(
    services: ServicesDep,
    principal: PrincipalDep,
    *,
    request_id: str | None = None,
    decision: Literal["answer", "summary", "refuse", "block"] | None = None,
    gate_action: Literal["retrieve", "restrict", "no_retrieve"] | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    check_audit(principal)  # a key's audit scope: every record, every key's
    records = services.audit.query(
        request_id=request_id, decision=decision, gate_action=gate_action, limit=limit
    )
    return {
        "records": records,
        "count": len(records),
        "path": str(services.audit.path) if services.audit.path else None,
    }
