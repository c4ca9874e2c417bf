"""Llama Guard 3 and 4: the plain conversation in, ``safe`` or ``unsafe`` + hazard codes out.

Format, from the meta-llama/Llama-Guard-3-8B, Llama-Guard-3-1B and Llama-Guard-4-12B model
cards: the model's own chat template wraps the conversation in its task, the hazard
taxonomy (S1-S14) and the output instructions, so the request is only the conversation on
``/chat/completions``: the user's turn, and to judge an answer the assistant's turn after it
(the template then asks about the last "Agent" message). The template accepts only ``user``
and ``assistant`` roles, alternating, so no system turn is sent. The model writes

    safe

or

    unsafe
    S1,S10

(the first line the verdict, the second a comma-separated list of the violated hazard
codes). The cards read the classifier score off the first token: P(unsafe) is the
probability of ``unsafe`` against ``safe`` there, so the request asks for its top
log-probabilities. The two generations share this grammar and their S1-S14 codes; only
the data file (``guard/data/llama-guard-{3,4}.yaml``) and the name differ.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sentinel_runtime.guard import types
from sentinel_runtime.guard.families import common, taxonomy

CODE = re.compile(r"S\d{1,2}")


@dataclass(frozen=True)
class LlamaGuard:
    name: str  # "llama-guard-3" or "llama-guard-4", also the data file's name
    # Room for "unsafe" and all 14 codes (about three tokens each): a reply cut short would
    # end in half a code. Generation stops at the end-of-turn token long before, as a rule.
    max_tokens: int = 48
    top_logprobs: int = 5

    def build(self, item: types.GuardInput) -> types.GuardRequest:
        params = {
            "temperature": 0,  # a classifier's verdict is read greedily, never sampled
            "max_tokens": self.max_tokens,
            "logprobs": True,
            "top_logprobs": self.top_logprobs,
        }
        return types.GuardRequest(messages=common.conversation(item), params=params)

    def parse(self, reply: types.GuardReply, item: types.GuardInput) -> types.GuardVerdict:
        lines = common.nonempty_lines(reply.text)
        verdict = lines[0].casefold() if lines else ""
        if verdict not in ("safe", "unsafe"):
            raise types.GuardFormatError(
                f"{self.name}: the first line of the reply is not 'safe' or 'unsafe'"
            )
        codes: list[str] = []
        if verdict == "unsafe" and len(lines) > 1:
            codes = [code.strip().upper() for code in lines[1].split(",") if code.strip()]
        if len(lines) > (2 if verdict == "unsafe" else 1) or not all(
            CODE.fullmatch(code) for code in codes
        ):
            raise types.GuardFormatError(
                f"{self.name}: after '{verdict}' the reply may hold only a line of "
                "comma-separated hazard codes (S1, S2, ...)"
            )
        probability = common.p_unsafe(reply.first_token_logprobs, ("unsafe",), ("safe",))
        return common.verdict(verdict == "unsafe", codes, taxonomy.load(self.name), probability)


LLAMA_GUARD_3 = LlamaGuard(name="llama-guard-3")
LLAMA_GUARD_4 = LlamaGuard(name="llama-guard-4")
