"""What can go wrong in a turn, as plain exceptions; ``api.app`` maps each to one response.

Errors raised by the layers below keep their own types and are mapped there too:
``index.manager.IndexNotFound`` (404), ``llm.upstream.UpstreamError`` (its ``status_code``),
``guardrails.engine.OutputGuardrailsError`` (500, nothing unscanned is returned) and
``governance.service.GovernanceError`` (its ``kind``).
"""

from __future__ import annotations


class TurnError(Exception):
    """A request this layer cannot serve; ``message`` is safe to show the client."""

    def __init__(self, message: str, *, param: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param  # the request field at fault, when there is one


class InvalidRequestError(TurnError):
    """The request is well-formed but cannot be answered as asked (400)."""


class UnprocessableRequestError(TurnError):
    """The request lacks what a turn needs, e.g. a user message with text (422)."""


class ContextWindowExceededError(TurnError):
    """The messages cannot fit the upstream model's context window (400)."""


class PolicyUnavailableError(TurnError):
    """Guardrails are enabled but no policy is active: nothing unscanned may leave (503)."""
