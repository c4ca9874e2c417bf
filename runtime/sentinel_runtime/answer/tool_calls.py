"""Governed tool calls in a chat turn (docs/governed-tool-calls.md): the session's facts go
upstream with the request, and every tool call the model proposes is judged by its guard before
the client sees it; a blocked call is removed and the message says why.
"""

from __future__ import annotations

import logging
from typing import Any

from sentinel_runtime.answer.services import Services
from sentinel_runtime.governance.guard import Verdict
from sentinel_runtime.governance.service import RulebaseSnapshot
from sentinel_runtime.observability import events, metrics
from sentinel_runtime.observability.logs import log_event

logger = logging.getLogger(__name__)

SUMMARY_HEADING = (
    "Sentinel governance session {session}: what is established. Use only these values as "
    "tool arguments; ask the user for what is askable."
)


def governance_session(services: Services, session_id: str | None) -> str | None:
    """The request's governance session, checked before the upstream is asked (404 when
    unknown); None: the tool calls are checked in a fresh session kept nowhere."""
    if session_id is not None:
        services.governance.require_session(session_id)
    return session_id


def add_fact_summary(services: Services, session_id: str | None, body: dict[str, Any]) -> None:
    """With a session and an active rulebase, the session's summary goes upstream as a first
    system message of ``body`` (in place), so the model proposes calls with known values."""
    governance = services.governance
    if session_id is None or governance.rulebase is None:
        return
    text = SUMMARY_HEADING.format(session=session_id) + "\n" + governance.summary(session_id)
    body["messages"] = [{"role": "system", "content": text}, *body["messages"]]


async def check_tool_calls(
    services: Services,
    session_id: str | None,
    response: dict[str, Any],
    request_id: str,
    rules: RulebaseSnapshot,
) -> list[dict[str, Any]] | None:
    """Judge every tool call of ``response`` (an upstream chat.completion) by its guard, in
    place: an allowed call stays as it is; a blocked one leaves ``message.tool_calls`` and the
    message's content says why (a choice left with no call ends with ``finish_reason: stop``).
    Returns one description per call for ``sentinel.toolCalls``; None when there was none."""
    described: list[dict[str, Any]] = []
    for position, choice in enumerate(response.get("choices") or []):
        message = choice.get("message") if isinstance(choice, dict) else None
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        if not isinstance(message, dict) or not isinstance(calls, list) or not calls:
            continue
        verdicts = await _tool_verdicts(services, session_id, calls, rules)
        kept, refused = [], []
        for call, verdict in zip(calls, verdicts, strict=True):
            entry = _describe_call(call, verdict, choice.get("index", position))
            described.append(entry)
            verdict_label = "allowed" if verdict.allowed else "blocked"
            metrics.GOVERNANCE_TOOL_CALLS.labels("chat", verdict_label).inc()
            if verdict.allowed:
                kept.append(call)
                continue
            refused.append(entry)
            log_event(
                logger,
                events.GOVERNANCE_TOOL_CALL_BLOCKED,
                logging.WARNING,
                path="chat",
                request_id=request_id,
                session_id=session_id,
                call_id=entry["id"],
                tool=entry["name"],
            )
        if not refused:
            continue
        _explain(message, refused)
        if kept:
            message["tool_calls"] = kept
        else:
            del message["tool_calls"]
            choice["finish_reason"] = "stop"
    return described or None


async def _tool_verdicts(
    services: Services, session_id: str | None, calls: list[Any], rules: RulebaseSnapshot
) -> list[Verdict]:
    """Each call judged by the request's policy version's rulebase (``rules``)."""
    if rules.rulebase is not None:
        return await services.governance.check_tool_calls(
            session_id, [c if isinstance(c, dict) else {} for c in calls], rulebase=rules.rulebase
        )
    names = [_call_name(c) for c in calls]
    if rules.error is not None:  # fail closed: a rulebase was meant to govern these
        reason = (
            f"no rulebase is active: the policy's tools section is invalid ({rules.error.message})"
        )
        return [Verdict(False, name, {}, reason) for name in names]
    ungoverned = "ungoverned: the policy has no tools section"
    return [Verdict(True, name, {}, ungoverned) for name in names]


def _call_name(call: Any) -> str:
    function = call.get("function") if isinstance(call, dict) else None
    return str(function.get("name", "")) if isinstance(function, dict) else ""


def _describe_call(call: Any, verdict: Verdict, choice: int) -> dict[str, Any]:
    described = verdict.describe()
    entry: dict[str, Any] = {
        "id": call.get("id") if isinstance(call, dict) else None,
        "choice": choice,
        "name": verdict.tool or _call_name(call),
        "arguments": described["arguments"],
        "allowed": verdict.allowed,
        "reason": verdict.reason,
        "blockers": described.get("blockers", []),
    }
    for key in ("failedPrecondition", "strictViolations"):
        if key in described:
            entry[key] = described[key]
    return entry


def without_arguments(entry: dict[str, Any]) -> dict[str, Any]:
    """A call's description for the audit: the verdict and reasons, not the arguments."""
    return {k: v for k, v in entry.items() if k != "arguments"}


def _explain(message: dict[str, Any], refused: list[dict[str, Any]]) -> None:
    """Append why each refused call was not made to the message's content (string or parts),
    so the client, and the model on the next turn, read it."""
    lines = [f"The call {e['name']} was not made: {e['reason']}" for e in refused]
    questions = [b["question"] for e in refused for b in e["blockers"] if b.get("question")]
    lines.extend(f"Ask the user: {q}" for q in dict.fromkeys(questions))
    text = "\n".join(lines)
    content = message.get("content")
    if isinstance(content, list):
        message["content"] = [*content, {"type": "text", "text": "\n\n" + text}]
    elif isinstance(content, str) and content.strip():
        message["content"] = content + "\n\n" + text
    else:
        message["content"] = text
