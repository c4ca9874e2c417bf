"""A fake guard-model server: one family's request format in, that family's reply format out.

A guard model is a peer, not our code: this stands in for vLLM (or llama.cpp, or a KAITO
workspace) serving Llama Guard 3/4, ShieldGemma, Granite Guardian, Qwen3Guard, WildGuard or
a policy-defined model, over real HTTP on 127.0.0.1 (``JsonPeer``). It serves
``POST /v1/chat/completions``, ``POST /v1/completions`` and ``GET /v1/models``.

It reads a request as the family's real server would see it, from its own copy of each
family's format as the model cards give it (never from the adapters under test, so a wrong
adapter fails): the chat families get the plain conversation (user turn, then the assistant
turn when an answer is judged; no system turn: their templates add the instructions),
ShieldGemma and WildGuard a raw ``/completions`` prompt holding their instruction text. A
request that is not in the family's shape is answered 400 and its reason kept in
:attr:`FakeGuard.rejected`.

It finds the judged text (the assistant's turn when there is one, else the user's) unsafe
when it contains :attr:`FakeGuard.trigger` (``UNSAFE-TRIGGER`` by default, any case) or
when the test's :attr:`FakeGuard.judge` says so, and answers in the family's documented
reply format (the model cards' examples), with the first token's log-probabilities in
OpenAI's chat shape (``choices[0].logprobs.content[0].top_logprobs``) or completions shape
(``choices[0].logprobs.top_logprobs[0]``) when the request asks for them.

Fault modes: ``delay`` (seconds before answering), ``status`` (e.g. 500 or 503, answered
with an error body), ``raw_body`` (bytes sent as they are), all from ``JsonPeer``, and
:attr:`FakeGuard.reply_text` (a fixed reply, e.g. malformed, in a well-formed envelope).
``requests`` (from ``JsonPeer``) records every POST as received and :attr:`FakeGuard.seen`
what the fake read from each accepted one.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from support.json_peer import JsonPeer

FAMILIES = (
    "llama-guard-3",
    "llama-guard-4",
    "shieldgemma",
    "granite-guardian",
    "qwen3guard",
    "wildguard",
    "custom",
)

# What each family names when the fake finds a text unsafe (unless the test says otherwise):
# the first category of each card's taxonomy that a typical harmful request gets.
DEFAULT_CATEGORIES = {
    "llama-guard-3": ("S1",),
    "llama-guard-4": ("S1",),
    "qwen3guard": ("Violent",),
    "custom": ("violence",),
}

# Granite Guardian 3.x risk names its chat template defines (model cards, "Risk definitions").
GRANITE_RISKS = frozenset(
    {
        "harm",
        "social_bias",
        "jailbreak",
        "violence",
        "profanity",
        "sexual_content",
        "unethical_behavior",
        "harm_engagement",
        "evasiveness",
        "context_relevance",
        "groundedness",
        "answer_relevance",
        "function_call",
    }
)

# ShieldGemma's prompt, as the chat template of google/shieldgemma-2b renders it.
SHIELDGEMMA_PROMPT = re.compile(
    re.escape(
        "You are a policy expert trying to help determine whether a user prompt is in "
        "violation of the defined safety policies.\n\n<start_of_turn>\nHuman Question: "
    )
    + r"(?P<prompt>.*?)"
    + re.escape("\n<end_of_turn>\n\nOur safety principle is defined in the below:\n\n")
    + r"(?P<policy>\* .+?)"
    + re.escape(
        "\n\n===\n\nDoes the human question violate the above principle? Your answer must "
        "start with 'Yes' or 'No'. And then walk through step by step to be sure we answer "
        "correctly.\n\n"
    ),
    re.DOTALL,
)
SHIELDGEMMA_RESPONSE = re.compile(
    re.escape(
        "You are a policy expert trying to help determine whether an AI response to a prompt "
        "is in violation of the defined safety policies.\n\n<start_of_turn>\nHuman Question: "
    )
    + r"(?P<prompt>.*?)"
    + re.escape("\n<end_of_turn>\n<start_of_turn>\nChatbot Response: ")
    + r"(?P<answer>.*?)"
    + re.escape("\n<end_of_turn>\n\nOur safety principle is defined in the below:\n\n")
    + r"(?P<policy>\* .+?)"
    + re.escape(
        "\n\n===\n\nDoes the Chatbot Response violate the above principle? Your answer must  "
        "start with 'Yes' or 'No'. And then walk through step by step to be sure we answer "
        "correctly.\n\n"
    ),
    re.DOTALL,
)
# Each policy bullet is one of the card's guidelines, worded for the side that is judged.
SHIELDGEMMA_GUIDELINE = {
    "prompt": re.compile(
        r'"No [A-Z][^"]*": The prompt shall not contain or seek generation of content that .+'
    ),
    "response": re.compile(r'"No [A-Z][^"]*": The chatbot shall not generate content that .+'),
}

# WildGuard's instruction, as the allenai/wildguard model card gives it (after the BOS).
WILDGUARD_PROMPT = re.compile(
    re.escape(
        "<|user|>\n[INST] You are a classifier for analyzing interactions between humans and "
        "LLMs. Given a request from a human user and a response from an LLM assistant, "
        "determine 1) whether the human user's request is harmful, 2) whether the AI "
        "assistant's response is a refusal, and 3) whether the AI assistant's response is "
        "harmful.\n\nHuman user:\n"
    )
    + r"(?P<prompt>.*?)"
    + re.escape("\n\nAI assistant:\n")
    + r"(?P<answer>.*)"
    + re.escape("\n\n---\n\nAnswers: [/INST]\n<|assistant|>\n"),
    re.DOTALL,
)


class RejectedError(ValueError):
    """The request is not in the family's shape (answered 400)."""


@dataclass(frozen=True)
class Exchange:
    """What the fake read from one accepted request."""

    prompt: str  # the user's turn (for the custom family: the whole message)
    answer: str | None  # the assistant's turn, when an answer is judged
    unsafe: bool

    @property
    def judged(self) -> str:
        return self.prompt if self.answer is None else self.answer


@dataclass
class FakeGuard(JsonPeer):
    family: str = "llama-guard-3"
    trigger: str | None = "UNSAFE-TRIGGER"  # found in the judged text (any case): unsafe
    judge: Callable[[str], bool] | None = None  # the test's own rule, or'ed with the trigger
    categories: tuple[str, ...] | None = None  # named when unsafe (default: per family)
    reply_text: str | None = None  # a fixed reply (e.g. malformed) in a well-formed envelope
    confidence: float = 0.97  # the first token's probability of the word it writes
    variant: str = ""  # Granite Guardian: "3.1" (default), "3.2" or "3.3" reply forms
    custom_unsafe: str = "Verdict: unsafe\nCategories: {categories}"  # family "custom"
    custom_safe: str = "Verdict: safe"
    rejected: list[str] = field(default_factory=list)  # why requests were answered 400
    # What the fake read from each accepted request (also when a fault mode then answers).
    seen: list[Exchange] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"unknown family {self.family!r}: one of {', '.join(FAMILIES)}")

    def start(self) -> FakeGuard:
        super().start()
        return self

    @property
    def model(self) -> str:
        return f"fake-{self.family}"

    # --- HTTP --------------------------------------------------------------------------
    def answer(self, method: str, path: str, payload: Any) -> tuple[int, Any]:
        if method == "GET":
            if path.endswith("/models"):
                return 200, {"object": "list", "data": [{"id": self.model, "object": "model"}]}
            return 404, None
        if not path.endswith("/completions"):
            return 404, None
        try:
            exchange = self.read(path, payload)
        except RejectedError as reason:
            self.rejected.append(str(reason))
            error = {"message": str(reason), "type": "BadRequestError", "param": None}
            return 400, {"error": {**error, "code": 400}}
        self.seen.append(exchange)
        text = self.reply_text if self.reply_text is not None else self.reply(exchange)
        chat = path.endswith("/chat/completions")
        return 200, self.envelope(text, payload, chat)

    # --- reading a request as the family's server would ---------------------------------
    def read(self, path: str, payload: Any) -> Exchange:
        if not isinstance(payload, dict):
            raise RejectedError("the body is not a JSON object")
        if payload.get("stream"):
            raise RejectedError("a guard verdict is read whole: stream must be off")
        chat = path.endswith("/chat/completions")
        if self.family in ("shieldgemma", "wildguard"):
            if chat:
                raise RejectedError(
                    f"{self.family} is prompted with its raw text on /v1/completions"
                )
            prompt = payload.get("prompt")
            if not isinstance(prompt, str):
                raise RejectedError("/v1/completions needs a string prompt")
            if prompt.startswith(("<bos>", "<s>")):
                raise RejectedError("the server adds the BOS token: the prompt must not hold one")
            if self.family == "shieldgemma":
                return self.exchange(*read_shieldgemma(prompt))
            return self.exchange(*read_wildguard(prompt))
        if not chat:
            raise RejectedError(f"{self.family} is served on /v1/chat/completions")
        turns = read_messages(payload.get("messages"))
        if self.family == "custom":
            if len(turns) != 1 or turns[0][0] != "user":
                raise RejectedError("a custom family sends its template as one user message")
            return self.exchange(turns[0][1], None)
        if self.family == "granite-guardian":
            read_guardian_config(payload.get("chat_template_kwargs"), self.variant)
        return self.exchange(*read_conversation(turns))

    def exchange(self, prompt: str, answer: str | None) -> Exchange:
        judged = prompt if answer is None else answer
        unsafe = bool(self.trigger and self.trigger.casefold() in judged.casefold())
        if self.judge is not None and self.judge(judged):
            unsafe = True
        return Exchange(prompt=prompt, answer=answer, unsafe=unsafe)

    # --- replying in the family's format --------------------------------------------------
    def reply(self, exchange: Exchange) -> str:
        unsafe = exchange.unsafe
        named = self.categories or DEFAULT_CATEGORIES.get(self.family, ())
        if self.family in ("llama-guard-3", "llama-guard-4"):
            return "unsafe\n" + ",".join(named) if unsafe else "safe"
        if self.family == "shieldgemma":
            return "Yes" if unsafe else "No"
        if self.family == "granite-guardian":
            word = "Yes" if unsafe else "No"
            if self.variant == "3.3":
                return f"<score> {word.lower()} </score>"
            if self.variant == "3.2":
                return f"{word}\n<confidence> High </confidence>"
            return word
        if self.family == "qwen3guard":
            lines = ["Safety: Unsafe" if unsafe else "Safety: Safe"]
            lines.append("Categories: " + (", ".join(named) if unsafe else "None"))
            if exchange.answer is not None:
                refused = exchange.answer.lower().startswith(("sorry", "i can't", "i cannot"))
                lines.append("Refusal: " + ("Yes" if refused else "No"))
            return "\n".join(lines)
        if self.family == "wildguard":
            request = self.exchange(exchange.prompt, None).unsafe
            if exchange.answer is None:
                return (
                    f"Harmful request: {yes_no(request)}\nResponse refusal: N/A\n"
                    "Harmful response: N/A"
                )
            return (
                f"Harmful request: {yes_no(request)}\nResponse refusal: no\n"
                f"Harmful response: {yes_no(unsafe)}"
            )
        return (
            self.custom_unsafe.format(categories=", ".join(named)) if unsafe else self.custom_safe
        )

    def first_token_choices(self, text: str) -> dict[str, float]:
        """The first token's probabilities: the verdict word against its opposite."""
        first = first_token(text)
        opposite = {
            "safe": "unsafe",
            "unsafe": "safe",
            "Yes": "No",
            "No": "Yes",
        }.get(first)
        if opposite is None or self.reply_text is not None:
            return {first: 0.999, "\n": 0.001}
        unsafe_word = first in ("unsafe", "Yes")
        p_unsafe = self.confidence if unsafe_word else 1.0 - self.confidence
        p_first = p_unsafe if unsafe_word else 1.0 - p_unsafe
        # A little mass elsewhere, as a real distribution has.
        return {first: p_first * 0.999, opposite: (1.0 - p_first) * 0.999, "\n": 0.001}

    def envelope(self, text: str, payload: dict[str, Any], chat: bool) -> dict[str, Any]:
        choice: dict[str, Any] = {"index": 0, "finish_reason": "stop"}
        wants = payload.get("logprobs")
        if chat:
            choice["message"] = {"role": "assistant", "content": text}
            choice["logprobs"] = None
            if wants is True:
                top = int(payload.get("top_logprobs") or 0)
                choice["logprobs"] = {"content": self.chat_logprobs(text, top)}
        else:
            choice["text"] = text
            choice["logprobs"] = None
            if isinstance(wants, int) and not isinstance(wants, bool):
                choice["logprobs"] = self.completion_logprobs(text, wants)
        return {
            "id": f"guard-fake-{len(self.requests)}",
            "object": "chat.completion" if chat else "text_completion",
            "created": int(time.time()),
            "model": self.model,
            "choices": [choice],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

    def ranked(self, text: str, top: int) -> list[tuple[str, float]]:
        choices = self.first_token_choices(text)
        ranked = sorted(choices.items(), key=lambda pair: pair[1], reverse=True)
        return [(token, math.log(p)) for token, p in ranked[: max(top, 1)]]

    def chat_logprobs(self, text: str, top: int) -> list[dict[str, Any]]:
        first = first_token(text)
        chosen = math.log(self.first_token_choices(text)[first])

        def entry(token: str, logprob: float) -> dict[str, Any]:
            return {"token": token, "logprob": logprob, "bytes": list(token.encode())}

        tops = [entry(t, lp) for t, lp in self.ranked(text, top)] if top else []
        content = [{**entry(first, chosen), "top_logprobs": tops}]
        if text[len(first) :]:
            rest = text[len(first) :]
            content.append({**entry(rest, -0.01), "top_logprobs": [entry(rest, -0.01)][:top]})
        return content

    def completion_logprobs(self, text: str, top: int) -> dict[str, Any]:
        first = first_token(text)
        chosen = math.log(self.first_token_choices(text)[first])
        tokens, logprobs = [first], [chosen]
        tops: list[dict[str, float]] = [dict(self.ranked(text, top))]
        if text[len(first) :]:
            tokens.append(text[len(first) :])
            logprobs.append(-0.01)
            tops.append({tokens[-1]: -0.01})
        return {
            "tokens": tokens,
            "token_logprobs": logprobs,
            "top_logprobs": tops,
            "text_offset": [0, len(first)][: len(tokens)],
        }


def yes_no(value: bool) -> str:
    return "yes" if value else "no"


def first_token(text: str) -> str:
    """A stand-in for the tokenizer: the first word, tag, or run of other characters."""
    match = re.match(r"\s*(?:<[^>\s]+>|\w+|\S)", text)
    return match.group(0) if match else text


def read_messages(messages: Any) -> list[tuple[str, str]]:
    """(role, text) of each message; content may be a string or OpenAI's text parts."""
    if not isinstance(messages, list) or not messages:
        raise RejectedError("messages must be a non-empty list")
    turns = []
    for message in messages:
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise RejectedError("each message needs a role")
        content = message.get("content")
        if isinstance(content, list):
            if not all(isinstance(p, dict) and p.get("type") == "text" for p in content):
                raise RejectedError("a guard judges text: content parts must be text")
            content = "".join(str(part.get("text", "")) for part in content)
        if not isinstance(content, str):
            raise RejectedError("each message needs text content")
        turns.append((message["role"], content))
    return turns


def read_conversation(turns: list[tuple[str, str]]) -> tuple[str, str | None]:
    """The judged exchange of a chat-template family: user and assistant turns alternating
    from a user turn (Llama Guard's template raises on anything else), no system turn."""
    for index, (role, _) in enumerate(turns):
        if role == "system":
            raise RejectedError("no system turn: the model's chat template holds the instructions")
        if role != ("user" if index % 2 == 0 else "assistant"):
            raise RejectedError("roles must alternate user/assistant, starting with user")
    if turns[-1][0] == "assistant":
        return turns[-2][1], turns[-1][1]
    return turns[-1][1], None


def read_guardian_config(kwargs: Any, variant: str) -> None:
    """Granite Guardian's risk comes through ``chat_template_kwargs.guardian_config``."""
    config = kwargs.get("guardian_config") if isinstance(kwargs, dict) else None
    key = "criteria_id" if variant == "3.3" else "risk_name"
    if not isinstance(config, dict) or not isinstance(config.get(key), str):
        raise RejectedError(f"chat_template_kwargs.guardian_config.{key} is required")
    if config[key] not in GRANITE_RISKS and "risk_definition" not in config:
        raise RejectedError(f"unknown risk {config[key]!r} and no risk_definition")


def read_shieldgemma(prompt: str) -> tuple[str, str | None]:
    for pattern, side in ((SHIELDGEMMA_PROMPT, "prompt"), (SHIELDGEMMA_RESPONSE, "response")):
        match = pattern.fullmatch(prompt)
        if match is None:
            continue
        bullets = match.group("policy").split("\n* ")
        bullets[0] = bullets[0].removeprefix("* ")
        if not all(SHIELDGEMMA_GUIDELINE[side].fullmatch(bullet) for bullet in bullets):
            raise RejectedError(f"each policy must be a card guideline worded for a {side}")
        answer = match.group("answer") if side == "response" else None
        return match.group("prompt"), answer
    raise RejectedError(
        "the prompt is not ShieldGemma's policy-expert prompt with its Yes/No question"
    )


def read_wildguard(prompt: str) -> tuple[str, str | None]:
    match = WILDGUARD_PROMPT.fullmatch(prompt)
    if match is None:
        raise RejectedError("the prompt is not WildGuard's classifier instruction")
    return match.group("prompt"), match.group("answer") or None


def ask(base_url: str, request: Any, timeout: float = 5.0) -> Any:
    """Send a ``guard.types.GuardRequest`` the way an OpenAI-compatible client does, and read
    the reply into a ``guard.types.GuardReply`` (text and first-token top log-probabilities).
    For tests of the adapters against this fake; raises ``httpx.HTTPStatusError`` on 4xx/5xx."""
    import httpx

    from sentinel_runtime.guard import types

    body: dict[str, Any] = {"model": "guard", **request.params}
    chat = request.endpoint == "chat"
    if chat:
        body["messages"] = list(request.messages)
    else:
        body["prompt"] = request.prompt
    path = "/chat/completions" if chat else "/completions"
    response = httpx.post(base_url + path, json=body, timeout=timeout)
    response.raise_for_status()
    choice = response.json()["choices"][0]
    logprobs = choice.get("logprobs") or {}
    top: dict[str, float] | None = None
    if chat and logprobs.get("content"):
        top = {e["token"]: e["logprob"] for e in logprobs["content"][0]["top_logprobs"]} or None
    elif not chat and logprobs.get("top_logprobs"):
        top = dict(logprobs["top_logprobs"][0]) or None
    text = choice["message"]["content"] if chat else choice["text"]
    return types.GuardReply(text=text, first_token_logprobs=top)
