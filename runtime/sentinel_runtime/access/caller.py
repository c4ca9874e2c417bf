"""The request's caller, for the layers below the edge that record it.

The HTTP edge opens a :class:`Call` for each authenticated request (``begin``) and closes it
when the response is over (``end``); code running for that request (the route, the turn, a
stream's body, work handed to threads) reads the caller's name for its audit record and notes
the tokens its answer used, which the edge charges to the key's ``tpm`` afterwards. Outside a
request (the CLI, tests calling the application layer directly) the caller is anonymous.
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass

from sentinel_runtime.access import keys


@dataclass
class Call:
    principal: keys.Principal
    tokens: int = 0  # the answer's usage.total_tokens, once known


_current: contextvars.ContextVar[Call | None] = contextvars.ContextVar(
    "sentinel_call", default=None
)


def begin(principal: keys.Principal) -> tuple[Call, contextvars.Token[Call | None]]:
    call = Call(principal)
    return call, _current.set(call)


def end(token: contextvars.Token[Call | None]) -> None:
    _current.reset(token)


def name() -> str:
    """The name of the key the current request uses (``anonymous`` outside one)."""
    call = _current.get()
    return call.principal.name if call is not None else keys.ANONYMOUS


def may_read(index: str) -> bool:
    """Whether the current request's key may read ``index`` (outside a request: yes)."""
    call = _current.get()
    return call is None or call.principal.may_read(index)


def metered() -> bool:
    """Whether the current request's tokens are charged to a key (not without keys, where
    everyone is anonymous): a stream then counts its usage even if the client did not ask."""
    call = _current.get()
    return call is not None and call.principal.name != keys.ANONYMOUS


def note_tokens(total_tokens: int) -> None:
    """The current request's answer used ``total_tokens`` (its ``usage``). A turn computes its
    usage more than once (a stream reports it and audits it): the last figure is the one."""
    call = _current.get()
    if call is not None:
        call.tokens = max(0, total_tokens)
