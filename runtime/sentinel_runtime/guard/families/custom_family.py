"""A guard family the policy defines: a prompt template in, a reply read by regular expressions.

So a new guard model needs no release: the policy's ``guard`` section gives a template with
``{prompt}`` (the user's turn) and optionally ``{answer}`` (the assistant's turn, empty when
a prompt is judged) placeholders, sent as the single user message of a
``/chat/completions`` request, and patterns over the model's reply. A template without
``{answer}`` judges one text: an answer then takes the place of ``{prompt}``. A reply
matching ``unsafe_pattern`` is unsafe; ``categories_pattern``'s one group captures a
comma-separated list of the model's category names, and ``category_map`` maps them onto
Sentinel's risk categories (unknown names map to ``other``). With a ``safe_pattern``, a
reply matching neither pattern is a format error; without one, it is safe.

Everything is checked when the family is built (:func:`create`), where the policy is loaded:
a pattern that does not compile, or that matches an empty reply (it would call every reply
unsafe), is a ValueError naming the field.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from sentinel_runtime.guard import types
from sentinel_runtime.guard.families import taxonomy

NAME = "custom"
PLACEHOLDER = re.compile(r"(\{prompt\}|\{answer\})")


@dataclass(frozen=True)
class CustomFamily:
    template: str
    unsafe_pattern: re.Pattern[str]
    safe_pattern: re.Pattern[str] | None
    categories_pattern: re.Pattern[str] | None
    table: taxonomy.Taxonomy
    name: str = NAME
    max_tokens: int = 64

    def build(self, item: types.GuardInput) -> types.GuardRequest:
        values = {"{prompt}": item.prompt, "{answer}": item.answer or ""}
        if item.answer is not None and "{answer}" not in self.template:
            # A template with a place for one text only ("is this text unsafe? {prompt}")
            # judges an answer by putting it there: the judged text is always what it sees.
            values["{prompt}"] = item.answer
        # Split at the placeholders and joined around the texts: a prompt that itself holds
        # "{answer}" (or braces of any kind) is sent as written.
        parts = PLACEHOLDER.split(self.template)
        content = "".join(values.get(part, part) if i % 2 else part for i, part in enumerate(parts))
        params = {"temperature": 0, "max_tokens": self.max_tokens}
        return types.GuardRequest(messages=({"role": "user", "content": content},), params=params)

    def parse(self, reply: types.GuardReply, item: types.GuardInput) -> types.GuardVerdict:
        if self.unsafe_pattern.search(reply.text):
            found = self.categories_pattern.search(reply.text) if self.categories_pattern else None
            named = found.group(1).split(",") if found and found.group(1) else []
            categories = tuple(name.strip() for name in named if name.strip())
            risks = self.table.risks(categories) or (taxonomy.UNKNOWN,)
            return types.GuardVerdict(unsafe=True, categories=categories, risk_categories=risks)
        if self.safe_pattern is None or self.safe_pattern.search(reply.text):
            return types.GuardVerdict(unsafe=False)
        raise types.GuardFormatError(
            f"{self.name}: the reply matches neither unsafePattern nor safePattern"
        )


def compile_pattern(field: str, pattern: str, groups: int | None = None) -> re.Pattern[str]:
    """``pattern`` compiled; a verdict pattern (no ``groups``) must not match an empty reply."""
    try:
        compiled = re.compile(pattern)
    except re.error as error:
        raise ValueError(
            f"custom guard family: {field} is not a valid regular expression: {error}"
        ) from None
    if groups is None and compiled.search(""):
        raise ValueError(f"custom guard family: {field} matches an empty reply")
    if groups is not None and compiled.groups != groups:
        raise ValueError(
            f"custom guard family: {field} must have exactly {groups} capturing group "
            f"(it has {compiled.groups})"
        )
    return compiled


def create(
    template: str,
    unsafe_pattern: str,
    categories_pattern: str | None = None,
    *,
    safe_pattern: str | None = None,
    category_map: Mapping[str, str | Sequence[str]] | None = None,
    known_risks: Collection[str] | None = None,
    name: str = NAME,
    max_tokens: int = 64,
) -> CustomFamily:
    """A policy-defined family, checked. ``known_risks``, when given (Sentinel's
    ``pipeline.signals.harm.CATEGORIES``), is what ``category_map``'s values must be among."""
    if "{prompt}" not in template:
        raise ValueError("custom guard family: the template has no {prompt} placeholder")
    if max_tokens < 1:
        raise ValueError("custom guard family: maxTokens must be at least 1")
    risk_map: dict[str, tuple[str, ...]] = {}
    for code, value in (category_map or {}).items():
        risks = (value,) if isinstance(value, str) else tuple(value)
        bad = [r for r in risks if not isinstance(r, str) or not r]
        if known_risks is not None:
            bad += [r for r in risks if r not in known_risks and r not in bad]
        if not risks or bad:
            raise ValueError(
                f"custom guard family: category {code!r} maps to an unknown risk category"
                + (f" ({', '.join(map(str, bad))})" if bad else "")
            )
        risk_map[taxonomy.key(code)] = risks
    return CustomFamily(
        template=template,
        unsafe_pattern=compile_pattern("unsafePattern", unsafe_pattern),
        safe_pattern=compile_pattern("safePattern", safe_pattern) if safe_pattern else None,
        categories_pattern=(
            compile_pattern("categoriesPattern", categories_pattern, groups=1)
            if categories_pattern
            else None
        ),
        table=taxonomy.Taxonomy(family=name, names={}, risk_map=risk_map),
        name=name,
        max_tokens=max_tokens,
    )
