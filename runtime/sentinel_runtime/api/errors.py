"""Errors on the wire: one table from the domain's exceptions to HTTP statuses, and one body.

Every error answer carries a string ``detail`` (what KAITO's clients read) and OpenAI's
``error`` object (``message``, ``type``, ``param``, ``code``: what OpenAI's clients read).
The routes raise nothing of their own for a turn that failed: the application layer's
exceptions (``answer.errors``) and those of the layers below arrive here, through the
handlers :func:`install` registers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from sentinel_runtime.answer.errors import (
    ContextWindowExceededError,
    InvalidRequestError,
    PolicyUnavailableError,
    TurnError,
    UnprocessableRequestError,
)
from sentinel_runtime.guardrails.engine import FAILURE_DETAIL, OutputGuardrailsError
from sentinel_runtime.index.base import IndexNotFound
from sentinel_runtime.llm.upstream import UpstreamError

_ERROR_TYPES = {401: "authentication_error", 403: "permission_error", 404: "not_found_error"}
_PARAM_SOURCES = {"body", "query", "path", "header", "cookie"}
# The application layer's refusals: status, and OpenAI's ``code`` when it has one.
TURN_ERRORS: dict[type[TurnError], tuple[int, str | None]] = {
    InvalidRequestError: (400, None),
    ContextWindowExceededError: (400, "context_length_exceeded"),
    UnprocessableRequestError: (422, None),
    PolicyUnavailableError: (503, "guardrails_unavailable"),
}


def error_body(
    status: int, message: str, *, param: str | None = None, code: str | None = None
) -> dict[str, Any]:
    """KAITO's string ``detail`` and OpenAI's ``error`` object, in one body."""
    if status in (502, 504):
        kind = "upstream_error"
    elif status >= 500:
        kind = "server_error"
    else:
        kind = _ERROR_TYPES.get(status, "invalid_request_error")
    error = {"message": message, "type": kind, "param": param, "code": code}
    return {"detail": message, "error": error}


def error_response(
    status: int, message: str, *, param: str | None = None, code: str | None = None
) -> JSONResponse:
    return JSONResponse(error_body(status, message, param=param, code=code), status_code=status)


def describe_validation(errors: Sequence[Any]) -> tuple[str, str | None, str | None]:
    """One sentence for pydantic's error list, the first field at fault and its error type:
    ``max_node_count: Input should be less than or equal to 300``."""
    sentences: list[str] = []
    fields: list[str] = []
    for error in errors:
        loc = [str(part) for part in error.get("loc", ())]
        if len(loc) > 1 and loc[0] in _PARAM_SOURCES:
            loc = loc[1:]
        field = ".".join(loc)
        message = str(error.get("msg", "invalid value")).removeprefix("Value error, ")
        sentences.append(message if not field or field in message else f"{field}: {message}")
        fields.append(field)
    first = errors[0] if errors else {}
    code = first.get("type") if isinstance(first, dict) else None
    return "; ".join(sentences) or "invalid request", (fields[0] if fields else None), code


async def _turn_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, TurnError)
    status, code = next(
        (entry for kind, entry in TURN_ERRORS.items() if isinstance(exc, kind)), (400, None)
    )
    return error_response(status, exc.message, param=exc.param, code=code)


async def _index_not_found(request: Request, exc: Exception) -> JSONResponse:
    return error_response(404, str(exc), param="index_name", code="index_not_found")


async def _upstream(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, UpstreamError)
    return error_response(exc.status_code, exc.detail, code=exc.reason)


async def _guardrails_failed(request: Request, exc: Exception) -> JSONResponse:
    # Fail closed: the answer that could not be scanned is not returned.
    return error_response(500, FAILURE_DETAIL, code="guardrails_error")


async def _http_exception(request: Request, exc: Exception) -> JSONResponse:
    # A route's own refusal (a missing resource, a state conflict), and Starlette's 404/405.
    assert isinstance(exc, HTTPException)
    response = error_response(exc.status_code, str(exc.detail))
    response.headers.update(exc.headers or {})
    return response


def install(app: FastAPI) -> None:
    """Register the table's handlers on ``app``."""
    app.add_exception_handler(HTTPException, _http_exception)
    app.add_exception_handler(TurnError, _turn_error)
    app.add_exception_handler(IndexNotFound, _index_not_found)
    app.add_exception_handler(UpstreamError, _upstream)
    app.add_exception_handler(OutputGuardrailsError, _guardrails_failed)
