"""What the family adapters share: the plain conversation, P(unsafe) from the first token's
log-probabilities, and a verdict whose categories are mapped through the family's taxonomy.

The adapters beside this module (``llama_guard``, ``shieldgemma``, ...) each hold one
family's request format and reply grammar; this module holds no family's format.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from sentinel_runtime.guard import types
from sentinel_runtime.guard.families import taxonomy


def conversation(item: types.GuardInput) -> tuple[dict[str, str], ...]:
    """The user's turn, and for an answer the assistant's turn after it: what the families
    whose chat template holds the instructions (Llama Guard, Granite Guardian, Qwen3Guard)
    are sent. No system turn: those templates refuse one or ignore it."""
    turns = [{"role": "user", "content": item.prompt}]
    if item.answer is not None:
        turns.append({"role": "assistant", "content": item.answer})
    return tuple(turns)


def token_word(token: str) -> str:
    """A token as a word: tokenizers mark a leading space ("▁Yes" in SentencePiece, "ĠYes"
    in byte-level BPE, " Yes" once decoded), and case does not change the answer."""
    return token.strip().lstrip("▁Ġ").strip().casefold()


def p_unsafe(
    logprobs: Mapping[str, float] | None, unsafe: Iterable[str], safe: Iterable[str]
) -> float | None:
    """P(unsafe) from the first generated token's top log-probabilities: the probability
    mass on the unsafe-like words over that on unsafe- and safe-like words (the softmax over
    the two that the model cards use). When only one side is among the top tokens, the
    other side's mass is taken as absent: P is that side's own probability (or one minus
    it), within [0, 1]. None when the server returned no log-probabilities or neither side
    is among them (the first token was something else, e.g. ``<score>``)."""
    if not logprobs:
        return None
    unsafe_words = {word.casefold() for word in unsafe}
    safe_words = {word.casefold() for word in safe}
    yes = no = 0.0
    seen_yes = seen_no = False
    for token, logprob in logprobs.items():
        word = token_word(token)
        # Variants of one word ("Yes", "▁Yes") are alternatives: their masses add up.
        if word in unsafe_words:
            yes += math.exp(logprob)
            seen_yes = True
        elif word in safe_words:
            no += math.exp(logprob)
            seen_no = True
    if seen_yes and seen_no:
        return yes / (yes + no) if yes + no > 0 else None
    if seen_yes:
        return min(1.0, max(0.0, yes))
    if seen_no:
        return min(1.0, max(0.0, 1.0 - no))
    return None


def verdict(
    unsafe: bool,
    categories: Iterable[str],
    family: taxonomy.Taxonomy,
    probability: float | None = None,
) -> types.GuardVerdict:
    """A verdict with ``categories`` mapped onto Sentinel's risk categories. An unsafe
    verdict always carries at least one risk category (``other`` when the model named
    none), so a caller never has to guess what an empty tuple means."""
    codes = tuple(categories)
    risks = family.risks(codes)
    if unsafe and not risks:
        risks = (taxonomy.UNKNOWN,)
    return types.GuardVerdict(
        unsafe=unsafe, categories=codes, risk_categories=risks, probability=probability
    )


def nonempty_lines(text: str) -> list[str]:
    """The reply's lines, stripped, without blank ones (servers differ in the newlines they
    leave around a generation: vLLM may keep the template's leading "\\n\\n")."""
    return [line.strip() for line in text.strip().splitlines() if line.strip()]
