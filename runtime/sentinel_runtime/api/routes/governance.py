"""``/v1/governance``: governed tool calls (docs/contracts.md) over HTTP.

Sessions, symbolic queries, facts, context rebinding (a focus shift), the user's answers to
askable questions, guarded invocation, the tools' OpenAI function schemas and the rulebase's
state. Every operation is a call on :class:`~sentinel_runtime.governance.service.Governance`;
its refusals (:class:`GovernanceError`) become ``{"detail": ...}`` with the status of
:data:`STATUS`, through :func:`governance_error`, which the app registers.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, Response

from sentinel_runtime.api.deps import ServicesDep
from sentinel_runtime.api.errors import error_body
from sentinel_runtime.api.protocol import (
    SESSION_ID_CHARS,
    AnswerFactRequest,
    ContextRequest,
    InvokeRequest,
    OpenSessionRequest,
    QueryRequest,
)
from sentinel_runtime.api.scopes import PrincipalDep, check_policy
from sentinel_runtime.governance.service import GovernanceError
from sentinel_runtime.observability import events, metrics
from sentinel_runtime.observability.logs import log_event

logger = logging.getLogger(__name__)
router = APIRouter(prefix="/v1/governance", tags=["governance"])

STATUS = {
    "unavailable": 409,  # no rulebase is active (none in the policy, or an invalid one)
    "session_exists": 409,
    "unknown_session": 404,
    "unknown_context": 404,
    "unknown_tool": 404,
    "invalid_goal": 422,
    "invalid_fact": 422,
    "invalid_value": 422,
    "not_established": 403,  # strict mode: a value no fact establishes
}


async def governance_error(request: Request, exc: Exception) -> JSONResponse:
    """The app's one error shape for a refused governance request; ``kind`` names the
    refusal, ``column`` points into a goal that does not parse."""
    assert isinstance(exc, GovernanceError)
    status = STATUS.get(exc.kind, 400)
    body: dict[str, Any] = {**error_body(status, str(exc), code=exc.kind), "kind": exc.kind}
    if exc.column is not None:
        body["column"] = exc.column
    return JSONResponse(body, status_code=status)


@router.get("/rulebase")
async def rulebase(services: ServicesDep, principal: PrincipalDep) -> dict[str, Any]:
    """The active rulebase and, while a rejected tools section is ignored, its problems
    (the policy's tools section: a key needs the policy scope)."""
    check_policy(principal)
    governance = services.governance
    active = governance.rulebase
    return {
        **governance.status(),
        "rulebase": active.describe() if active is not None else None,
    }


@router.get("/tools")
async def tools(services: ServicesDep) -> dict[str, Any]:
    """The declared tools as OpenAI function schemas (pass them as ``tools``)."""
    active = services.governance.active()
    return {"tools": active.tool_schemas(), "strict": active.strict}


@router.post("/sessions", status_code=201)
async def open_session(request: OpenSessionRequest, services: ServicesDep) -> dict[str, Any]:
    return services.governance.open_session(
        request.session_id, contexts=request.contexts, facts=request.facts
    )


@router.delete("/sessions/{session_id}", status_code=204)
async def close_session(session_id: str, services: ServicesDep) -> Response:
    services.governance.close_session(session_id)
    return Response(status_code=204)


@router.post("/query")
async def query(request: QueryRequest, services: ServicesDep) -> dict[str, Any]:
    result = await services.governance.query(
        request.session_id, request.goal, max_answers=request.max_answers
    )
    return {"sessionId": request.session_id, **result.describe()}


@router.get("/facts")
async def facts(
    services: ServicesDep,
    session_id: str = Query(min_length=1, max_length=SESSION_ID_CHARS),
) -> dict[str, Any]:
    return {"sessionId": session_id, **services.governance.facts(session_id)}


@router.post("/context")
async def rebind(request: ContextRequest, services: ServicesDep) -> dict[str, Any]:
    bound = services.governance.bind(request.session_id, request.name, request.value)
    return {"sessionId": request.session_id, **bound}


@router.post("/answer")
async def answer(request: AnswerFactRequest, services: ServicesDep) -> dict[str, Any]:
    governance = services.governance
    fact = governance.answer(request.session_id, request.fact)
    return {"sessionId": request.session_id, "fact": fact.describe(governance.sessions.clock())}


@router.post("/invoke", response_model=None)
async def invoke(request: InvokeRequest, services: ServicesDep) -> dict[str, Any] | JSONResponse:
    """Guarded invocation: 403 with the reason when the guard refuses, the tool's result when
    it allows; 502 (504 on a timeout) when an allowed call fails."""
    done = await services.governance.invoke(request.session_id, request.tool, request.arguments)
    verdict = done.verdict
    label = "allowed" if verdict.allowed else "blocked"
    metrics.GOVERNANCE_TOOL_CALLS.labels("invoke", label).inc()
    described = done.describe()
    if not verdict.allowed:
        log_event(
            logger,
            events.GOVERNANCE_TOOL_CALL_BLOCKED,
            logging.WARNING,
            path="invoke",
            session_id=request.session_id,
            tool=request.tool,
        )
        detail = f"the guard of {request.tool} refused the call: {verdict.reason}"
        return JSONResponse({"detail": detail, **described}, status_code=403)
    if done.error is not None:
        status = 504 if done.error.kind == "timeout" else 502
        detail = f"{request.tool} was allowed but failed: {done.error}"
        return JSONResponse({"detail": detail, **described}, status_code=status)
    return {"sessionId": request.session_id, **described}
