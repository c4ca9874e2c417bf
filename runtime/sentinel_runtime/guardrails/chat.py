"""Apply output guardrails to an OpenAI ``chat.completion`` body (plain dicts, no HTTP).

Every assistant message with text is scanned: string content, or the text parts of list content
(joined and scanned as one text, so a secret split across parts is still seen; the message then
carries the result as one string). Messages with only tool calls and no text are skipped, as the
output-guardrails contract states (docs/contracts.md). A block replaces the content with the
policy's ``blockMessage``, sets ``finish_reason`` to ``content_filter`` and drops the message's
tool calls: a model whose words were withheld must not act through a tool in the same breath."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sentinel_runtime.guardrails.engine import GuardrailsEngine, OutputGuardrailsError, ScanOutcome
from sentinel_runtime.observability import events, metrics
from sentinel_runtime.observability.logs import log_event

logger = logging.getLogger(__name__)


def _text_of(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        # Assistant content parts carry text as "text" or, for refusals, "refusal".
        texts = [
            value
            for part in content
            if isinstance(part, dict)
            for key in ("text", "refusal")
            if isinstance(value := part.get(key), str)
        ]
        return "".join(texts) if texts else None
    return None


@dataclass(frozen=True)
class ChoiceVerdict:
    index: int
    outcome: ScanOutcome

    def describe(self) -> dict[str, Any]:
        return {
            "choice": self.index,
            "action": self.outcome.action,
            "scanners": [hit.describe() for hit in self.outcome.hits],
            "failOpen": [f.describe() for f in self.outcome.failures],
        }


def _assistant_texts(
    response: dict[str, Any],
) -> Iterator[tuple[int, dict[str, Any], dict[str, Any], str]]:
    """Each choice whose assistant message has text: its position, the choice, the message
    and the text, as :func:`guard_chat_completion` scans them."""
    for position, choice in enumerate(response.get("choices") or []):
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict) or message.get("role", "assistant") != "assistant":
            continue
        text = _text_of(message.get("content"))
        if text:
            yield position, choice, message, text


def scanned_chars(response: dict[str, Any]) -> int:
    """How much text :func:`guard_chat_completion` would scan in ``response``."""
    return sum(len(text) for *_, text in _assistant_texts(response))


def guard_chat_completion(
    engine: GuardrailsEngine, response: dict[str, Any], response_id: str
) -> list[ChoiceVerdict]:
    """Scan and rewrite ``response`` in place; raises ``OutputGuardrailsError`` fail-closed."""
    verdicts: list[ChoiceVerdict] = []
    for position, choice, message, text in _assistant_texts(response):
        try:
            outcome = engine.scan(text, response_id=response_id)
        except OutputGuardrailsError:
            report_action(engine, ScanOutcome(text, None), response_id, failed=True)
            raise
        verdicts.append(ChoiceVerdict(choice.get("index", position), outcome))
        report_action(engine, outcome, response_id)
        if outcome.action is None:
            continue
        message["content"] = outcome.text
        if outcome.action == "block":
            choice["finish_reason"] = "content_filter"
            message.pop("tool_calls", None)
    return verdicts


def report_action(
    engine: GuardrailsEngine, outcome: ScanOutcome, response_id: str, *, failed: bool = False
) -> None:
    """Count and log one scanned message's final action (once per message, streamed or not).

    KAITO's ``ragengine_guardrails_response_actions_total`` counts every scanned message:
    ``allow`` when nothing fired, ``redact``, ``block``, or ``fail_closed`` (``failed``: a
    fail-closed scanner raised :class:`OutputGuardrailsError` and the message was withheld).
    ``output_guardrails_actions_total`` and the log event stay the contract's: redact and block.
    """
    final = "fail_closed" if failed else (outcome.action or "allow")
    metrics.GUARDRAILS_RESPONSE_ACTIONS.labels(final).inc()
    for hit in outcome.hits:
        metrics.GUARDRAILS_RESPONSE_SCANNER_HITS.labels(hit.type, hit.action).inc()
    if outcome.action is None:
        return
    metrics.ACTIONS.labels(outcome.action).inc()
    log_event(
        logger,
        events.TRIGGERED,
        action=outcome.action,
        response_id=response_id,
        scanners=[hit.describe() for hit in outcome.hits],
        policy_hash=engine.policy.sha256,
    )
