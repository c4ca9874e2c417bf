"""guard_chat_completion on plain chat.completion dicts."""

from __future__ import annotations

from typing import Any

from sentinel_runtime.guardrails.chat import guard_chat_completion
from sentinel_runtime.guardrails.engine import build_engine
from sentinel_runtime.guardrails.policy import parse_policy

ENGINE = build_engine(
    parse_policy(
        "action: block\nblockMessage: Withheld.\n"
        "scanners:\n  - type: ban_substrings\n    substrings: ['wire the money']\n"
    ),
    "test",
)
CALL = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "refund", "arguments": '{"booking_id": "B1"}'},
}


def completion(content: str | None) -> dict[str, Any]:
    message = {"role": "assistant", "content": content, "tool_calls": [dict(CALL)]}
    return {"choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}


def test_a_blocked_message_loses_its_tool_calls() -> None:
    response = completion("Sure, I will wire the money now.")
    (verdict,) = guard_chat_completion(ENGINE, response, "r1")
    choice = response["choices"][0]
    assert verdict.outcome.action == "block"
    assert choice["message"]["content"] == "Withheld."
    assert choice["finish_reason"] == "content_filter"
    assert "tool_calls" not in choice["message"]


def test_clean_text_keeps_its_tool_calls_and_tool_only_messages_are_not_scanned() -> None:
    clean = completion("Refunding your booking.")
    assert [v.outcome.action for v in guard_chat_completion(ENGINE, clean, "r2")] == [None]
    assert clean["choices"][0]["message"]["tool_calls"] == [CALL]
    tool_only = completion(None)
    assert guard_chat_completion(ENGINE, tool_only, "r3") == []
    assert tool_only["choices"][0]["message"]["tool_calls"] == [CALL]
