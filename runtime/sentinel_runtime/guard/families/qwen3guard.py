"""Qwen3Guard-Gen: the plain conversation in, ``Safety:`` / ``Categories:`` lines out.

Format, from the Qwen/Qwen3Guard-Gen-0.6B, -4B and -8B model cards and the
QwenLM/Qwen3Guard README (whose vLLM example sends plain ``messages`` to
``/chat/completions``): the model's chat template holds the task and the policy, so the
request is the user's turn, and to judge an answer the assistant's turn after it. The model
writes, for a prompt

    Safety: Unsafe
    Categories: Violent

and for a response a third line saying whether the assistant refused

    Safety: Safe
    Categories: None
    Refusal: Yes

``Safety`` is one of Safe, Unsafe, Controversial; ``Categories`` one or more of Violent,
Non-violent Illegal Acts, Sexual Content or Sexual Acts, PII, Suicide & Self-Harm, Unethical
Acts, Politically Sensitive Topics, Copyright Violation, Jailbreak (prompts only), or None.
The card describes two ways to read Controversial: strict (unsafe) and loose (safe);
``controversial_unsafe`` picks one, strict by default, as a guardrail should. The verdict
is in words, not in a first token, so no probability is asked for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sentinel_runtime.guard import types
from sentinel_runtime.guard.families import common, taxonomy

NAME = "qwen3guard"

LINE = re.compile(r"(Safety|Categories|Refusal):\s*(.*)", re.IGNORECASE)
LEVELS = ("safe", "unsafe", "controversial")


@dataclass(frozen=True)
class Qwen3Guard:
    name: str = NAME
    controversial_unsafe: bool = True  # the card's "strict" reading
    max_tokens: int = 64  # three short lines; several categories fit too

    def build(self, item: types.GuardInput) -> types.GuardRequest:
        params = {"temperature": 0, "max_tokens": self.max_tokens}
        return types.GuardRequest(messages=common.conversation(item), params=params)

    def parse(self, reply: types.GuardReply, item: types.GuardInput) -> types.GuardVerdict:
        fields: dict[str, str] = {}
        for line in common.nonempty_lines(reply.text):
            match = LINE.fullmatch(line)
            if match is None or match.group(1).casefold() in fields:
                raise types.GuardFormatError(
                    "qwen3guard: every reply line must be one 'Safety:', 'Categories:' "
                    "or 'Refusal:' line"
                )
            fields[match.group(1).casefold()] = match.group(2).strip()
        level = fields.get("safety", "").casefold()
        if level not in LEVELS:
            raise types.GuardFormatError(
                "qwen3guard: the reply has no 'Safety: Safe|Unsafe|Controversial' line"
            )
        if fields.get("refusal", "yes").casefold() not in ("yes", "no"):
            raise types.GuardFormatError("qwen3guard: 'Refusal:' must be Yes or No")
        named = [name.strip() for name in fields.get("categories", "").split(",")]
        categories = [name for name in named if name and name.casefold() != "none"]
        unsafe = level == "unsafe" or (level == "controversial" and self.controversial_unsafe)
        return common.verdict(unsafe, categories, taxonomy.load(NAME))


QWEN3GUARD = Qwen3Guard()
