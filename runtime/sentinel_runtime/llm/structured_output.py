"""Schema-constrained output across OpenAI-compatible servers, and what each upstream accepts.

Servers spell "reply with JSON that follows this schema" differently (issue 15 measured it):
OpenAI takes ``{"type": "json_schema", "json_schema": {"name", "schema", "strict"}}``;
llama.cpp's server and vLLM take ``{"type": "json_object", "schema": ...}``, and llama.cpp
answers the OpenAI form with HTTP 500. So the generator tries the forms in order, remembers
the one that worked for its upstream, and skips a refused one for a while (a refusal may have
been a passing fault, so it is retried later rather than never).
"""

from __future__ import annotations

import time
from typing import Any, Literal

Form = Literal["json_schema", "json_object"]
FORMS: tuple[Form, ...] = ("json_schema", "json_object")
# How an upstream refuses a request form it does not know: a validation error (400, 422),
# "not implemented" (501), or llama.cpp's 500.
REFUSAL_STATUSES = frozenset({400, 422, 500, 501})
FORGET_REFUSAL_SECONDS = 600.0


def response_format(form: Form, schema: dict[str, Any]) -> dict[str, Any]:
    if form == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": "answer", "schema": schema, "strict": True},
        }
    return {"type": "json_object", "schema": schema}


def refused_form(upstream_status: int | None) -> bool:
    return upstream_status in REFUSAL_STATUSES


class Preference:
    """Which forms to try, best first: the last one accepted, then the others not refused
    within :data:`FORGET_REFUSAL_SECONDS`."""

    def __init__(self, clock: Any = time.monotonic) -> None:
        self._clock = clock
        self._accepted: Form | None = None
        self._refused_at: dict[Form, float] = {}

    def forms(self) -> list[Form]:
        now = self._clock()
        usable = [
            f
            for f in FORMS
            if now - self._refused_at.get(f, -FORGET_REFUSAL_SECONDS) >= FORGET_REFUSAL_SECONDS
        ]
        if self._accepted in usable:
            usable.remove(self._accepted)
            usable.insert(0, self._accepted)
        return usable

    def accepted(self, form: Form) -> None:
        self._accepted = form
        self._refused_at.pop(form, None)

    def refused(self, form: Form) -> None:
        self._refused_at[form] = self._clock()
        if self._accepted == form:
            self._accepted = None
