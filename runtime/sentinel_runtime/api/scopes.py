"""What the request's key may do, asked by the routes (``access.keys.Principal``'s scopes).

An index outside the key's read scope is answered exactly as a missing one: the route raises
the index layer's own ``IndexNotFound`` where a missing index would be reported, so the body
is the one a missing index gets, whatever exists. The check looks at the name only, never at
the store, so neither the answer nor its timing says whether such an index exists. A write,
or the audit log or the policy, outside the key's scope is 403.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, HTTPException, Request

from sentinel_runtime.access.keys import Principal
from sentinel_runtime.api.request_guard import PRINCIPAL
from sentinel_runtime.index.base import IndexNotFound


async def _principal(request: Request) -> Principal:
    principal = request.scope.get(PRINCIPAL)
    if not isinstance(principal, Principal):
        # Only the open probe paths pass the guard without one, and they ask nothing.
        raise HTTPException(401, "missing or invalid API key")
    return principal


PrincipalDep = Annotated[Principal, Depends(_principal)]


def check_read(principal: Principal, index: str | None) -> None:
    """``IndexNotFound`` for an index the key may not read (as if it did not exist)."""
    if index is not None and not principal.may_read(index):
        raise IndexNotFound(index)


def check_write(principal: Principal, index: str) -> None:
    if not principal.may_write(index):
        raise HTTPException(403, f"key {principal.name} may not write index {index!r}")


def check_audit(principal: Principal) -> None:
    if not principal.audit:
        raise HTTPException(403, f"key {principal.name} may not read the audit log")


def check_policy(principal: Principal) -> None:
    if not principal.policy:
        raise HTTPException(403, f"key {principal.name} may not read the policy")
