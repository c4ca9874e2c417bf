"""ShieldGemma: its policy-expert prompt in, ``Yes`` (violates) or ``No`` out.

Format, from the google/shieldgemma-2b (and -9b, -27b) model card: the prompt is a
preamble, the user's question (and to judge an answer, the chatbot's response) between
``<start_of_turn>`` and ``<end_of_turn>``, the safety policy as bullet points, and an
epilogue asking whether it is violated. The model's answer starts with ``Yes`` or ``No``;
the card scores it as the softmax over the ``Yes`` and ``No`` logits of that first token.

The texts below are those of the chat template shipped with the model's tokenizer (the one
the card's ``apply_chat_template(chat, guideline=...)`` example renders), character for
character, including the response epilogue's double space in "must  start"; the card's
prose example is the same text wrapped at 80 columns. We render it ourselves and send it
as a raw ``prompt`` to ``/completions``, as the card's first example feeds the tokenized
text straight to the model: the server adds the ``<bos>`` token itself (so the text does
not start with one), and the request asks for one token with its top log-probabilities.

The policies (``guard/data/shieldgemma.yaml``) are the card's guideline for each of its
four harm types, worded for a prompt or for a response. One request asks about all the
configured policies at once, so a ``Yes`` names a policy only when one is configured.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sentinel_runtime.guard import types
from sentinel_runtime.guard.families import common, taxonomy

NAME = "shieldgemma"
HARM_TYPES = ("dangerous", "harassment", "hate", "sexual")

PROMPT_PREAMBLE = (
    "You are a policy expert trying to help determine whether a user prompt is in "
    "violation of the defined safety policies.\n\n"
)
RESPONSE_PREAMBLE = (
    "You are a policy expert trying to help determine whether an AI response to a prompt "
    "is in violation of the defined safety policies.\n\n"
)
POLICY_HEADER = "Our safety principle is defined in the below:\n\n"
PROMPT_EPILOGUE = (
    "Does the human question violate the above principle? Your answer must start with "
    "'Yes' or 'No'. And then walk through step by step to be sure we answer correctly.\n\n"
)
RESPONSE_EPILOGUE = (
    "Does the Chatbot Response violate the above principle? Your answer must  start with "
    "'Yes' or 'No'. And then walk through step by step to be sure we answer correctly.\n\n"
)

FIRST_WORD = re.compile(r"\s*([A-Za-z]+)")


def render(item: types.GuardInput, guidelines: tuple[str, ...]) -> str:
    """The prompt text for ``item`` under ``guidelines`` (without the ``<bos>`` token)."""
    policy = "* " + "\n* ".join(guidelines) + "\n" + "\n===\n\n"
    question = "<start_of_turn>\nHuman Question: " + item.prompt + "\n<end_of_turn>\n"
    if item.answer is None:
        return PROMPT_PREAMBLE + question + "\n" + POLICY_HEADER + policy + PROMPT_EPILOGUE
    response = "<start_of_turn>\nChatbot Response: " + item.answer + "\n<end_of_turn>\n\n"
    return RESPONSE_PREAMBLE + question + response + POLICY_HEADER + policy + RESPONSE_EPILOGUE


@dataclass(frozen=True)
class ShieldGemma:
    name: str = NAME
    policies: tuple[str, ...] = HARM_TYPES  # keys of the data file, in prompt order
    top_logprobs: int = 5

    def __post_init__(self) -> None:
        known = taxonomy.load(NAME).names
        unknown = [policy for policy in self.policies if taxonomy.key(policy) not in known]
        if not self.policies or unknown:
            raise ValueError(
                f"shieldgemma policies must be some of {', '.join(HARM_TYPES)}; "
                f"got {', '.join(self.policies) or 'none'}"
            )

    def build(self, item: types.GuardInput) -> types.GuardRequest:
        side = "prompt" if item.answer is None else "response"
        extra = taxonomy.load(NAME).extra
        guidelines = tuple(extra[taxonomy.key(policy)][side] for policy in self.policies)
        params = {
            "temperature": 0,  # a classifier's verdict is read greedily, never sampled
            "max_tokens": 1,  # the verdict is the first token; the rest is an explanation
            "logprobs": self.top_logprobs,  # /completions takes the count here
        }
        return types.GuardRequest(prompt=render(item, guidelines), params=params)

    def parse(self, reply: types.GuardReply, item: types.GuardInput) -> types.GuardVerdict:
        match = FIRST_WORD.match(reply.text)
        word = match.group(1).casefold() if match else ""
        if word not in ("yes", "no"):
            raise types.GuardFormatError("shieldgemma: the reply does not start with Yes or No")
        unsafe = word == "yes"
        # The model says whether the policies are violated, not which one: a category only
        # when a single policy was asked about.
        categories = self.policies if unsafe and len(self.policies) == 1 else ()
        probability = common.p_unsafe(reply.first_token_logprobs, ("yes",), ("no",))
        return common.verdict(unsafe, categories, taxonomy.load(NAME), probability)


SHIELDGEMMA = ShieldGemma()
