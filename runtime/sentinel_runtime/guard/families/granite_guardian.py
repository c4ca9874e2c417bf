"""IBM Granite Guardian 3.x: the plain conversation and a risk name in, ``Yes``/``No`` out.

Format, from the ibm-granite/granite-guardian-3.1-8b, granite-guardian-3.2-5b and
granite-guardian-3.3-8b model cards and the cookbooks of the ibm-granite/granite-guardian
repository: the model's chat template builds the judging prompt from the conversation and
a ``guardian_config`` whose ``risk_name`` picks the risk definition (``harm``, the umbrella
risk, or one of its sub-risks such as ``violence``). On vLLM's OpenAI server the config
reaches the template through ``chat_template_kwargs`` (3.3 names the key ``criteria_id``:
``config_key`` says which). The request is the user's turn, and
to judge an answer the assistant's turn after it (the template then judges the assistant
message under the same risk name). The model answers

    Yes        (3.0 / 3.1: risky)        No        (not risky)
    Yes\\n<confidence> High </confidence>          (3.2 adds its verbalised confidence)
    <score> yes </score>                           (3.3, after an optional <think> block)

The cards compute P(risk) as the softmax over the ``Yes``/``No`` log-probabilities of the
verdict token, so the request asks for the first token's top log-probabilities (3.3's
first token is ``<score>`` or ``<think>``: its probability is then unknown, None).
A verdict's category is the risk name that was asked about
(``guard/data/granite-guardian.yaml``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sentinel_runtime.guard import types
from sentinel_runtime.guard.families import common, taxonomy

NAME = "granite-guardian"

THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
SCORE = re.compile(r"<score>\s*(\w+)\s*</score>", re.IGNORECASE)
CONFIDENCE = re.compile(r"<confidence>\s*(high|low)\s*</confidence>", re.IGNORECASE)
FIRST_WORD = re.compile(r"\s*(\w+)")


def read_label(text: str) -> str | None:
    """``yes`` or ``no`` from any of the documented reply forms, else None."""
    rest = THINK.sub("", text).strip()
    score = SCORE.search(rest)
    if score:  # 3.3: the score tag is the whole verdict
        word = score.group(1).casefold()
        return word if word in ("yes", "no") and not SCORE.sub("", rest).strip() else None
    first = FIRST_WORD.match(rest)
    if first is None or first.group(1).casefold() not in ("yes", "no"):
        return None
    tail = rest[first.end() :].strip()
    # 3.0-3.2: the word alone, or (3.2) followed by its confidence tag.
    if tail and not CONFIDENCE.fullmatch(tail):
        return None
    return first.group(1).casefold()


@dataclass(frozen=True)
class GraniteGuardian:
    name: str = NAME
    risk_name: str = "harm"  # the risk a user prompt is judged for
    answer_risk_name: str = "harm"  # the risk an answer is judged for (same definitions)
    # 3.0-3.2 name the risk `risk_name`; 3.3's template reads `criteria_id` instead.
    config_key: str = "risk_name"
    max_tokens: int = 20  # "Yes\n<confidence> High </confidence>" is about ten tokens
    top_logprobs: int = 5

    def build(self, item: types.GuardInput) -> types.GuardRequest:
        params = {
            "temperature": 0,  # a classifier's verdict is read greedily, never sampled
            "max_tokens": self.max_tokens,
            "logprobs": True,
            "top_logprobs": self.top_logprobs,
            "chat_template_kwargs": {"guardian_config": {self.config_key: self.risk(item)}},
        }
        return types.GuardRequest(messages=common.conversation(item), params=params)

    def risk(self, item: types.GuardInput) -> str:
        return self.risk_name if item.answer is None else self.answer_risk_name

    def parse(self, reply: types.GuardReply, item: types.GuardInput) -> types.GuardVerdict:
        label = read_label(reply.text)
        if label is None:
            raise types.GuardFormatError(
                "granite-guardian: the reply is not Yes/No (3.0-3.2, with an optional "
                "<confidence> tag) nor <score> yes|no </score> (3.3)"
            )
        unsafe = label == "yes"
        probability = common.p_unsafe(reply.first_token_logprobs, ("yes",), ("no",))
        categories = (self.risk(item),) if unsafe else ()
        return common.verdict(unsafe, categories, taxonomy.load(NAME), probability)


GRANITE_GUARDIAN = GraniteGuardian()
