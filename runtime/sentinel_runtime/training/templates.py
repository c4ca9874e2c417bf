"""Expand ``data/templates.yaml`` into training rows, and wrap payloads in jailbreaks.

Pure and seeded: the same seed gives the same rows in the same order, so training is
reproducible. A template with several slots takes the product of their values, sampled
down to ``per_template`` prompts.
"""

from __future__ import annotations

import itertools
import random
import re
from pathlib import Path
from typing import Any

import yaml

from sentinel_runtime.training.sources import TrainingRow

TEMPLATES = Path(__file__).with_name("data") / "templates.yaml"
# French, German and Italian: the same kinds of request, written in those languages.
MULTILINGUAL = Path(__file__).with_name("data") / "templates_multilingual.yaml"
_SLOT = re.compile(r"\{(\w+)\}")


def load(path: Path = TEMPLATES) -> dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def expand(template: str, slots: dict[str, list[str]], limit: int, rng: random.Random) -> list[str]:
    names = list(dict.fromkeys(_SLOT.findall(template)))
    unknown = [name for name in names if name not in slots]
    if unknown:
        raise ValueError(f"template {template!r} uses unknown slots {unknown}")
    combos = list(itertools.product(*(slots[name] for name in names)))
    if len(combos) > limit:
        combos = rng.sample(combos, limit)
    texts = []
    for combo in combos:
        values = dict(zip(names, combo, strict=True))
        texts.append(_SLOT.sub(lambda m, v=values: v[m.group(1)], template))
    return texts


def rows(seed: int, path: Path = TEMPLATES, source: str = "templates") -> list[TrainingRow]:
    data = load(path)
    rng = random.Random(seed)
    limit = int(data["per_template"])
    slots = data["slots"]
    out: list[TrainingRow] = []
    for group in data["benign"].values():
        for template in group:
            out.extend(
                TrainingRow(text, source, 0, 0) for text in expand(template, slots, limit, rng)
            )
    documents = data.get("documents")
    if documents:
        doc_slots = {**slots, **documents["slots"], "request": documents["requests"]}
        for template in documents["templates"]:
            out.extend(
                TrainingRow(text, source, 0, 0)
                for text in expand(template, doc_slots, int(documents["per_template"]), rng)
            )
    named = data.get("harmful_categories") or {}
    for name, group in data["harmful"].items():
        category = named.get(name, name)
        for template in group:
            out.extend(
                TrainingRow(text, source, 1, 0, category)
                for text in expand(template, slots, limit, rng)
            )
    return out


_HOW_TO = re.compile(
    r"^(?:write|create|provide|give|generate|produce|develop|draft|outline|explain|describe|"
    r"teach|show|publish|post|offer|share|list|detail)\b[^.?!]{0,80}?\bhow\s+to\s+"
    r"(?P<rest>[^.?!]{6,160})[.?!]?\s*$",
    re.IGNORECASE,
)
_QUESTIONS = ("How do I {rest}?", "What is the best way to {rest}?", "How can someone {rest}?")


def as_questions(rows: list[TrainingRow], seed: int) -> list[TrainingRow]:
    """Harmful instructions as the questions people ask ("Write a tutorial on how to X"
    -> "How do I X?"): public harmful sets are almost all imperatives. Each question keeps
    its source, so leaving a source out leaves its questions out too."""
    rng = random.Random(seed)
    out = []
    for row in rows:
        match = _HOW_TO.match(row.text.strip()) if row.harm == 1 else None
        if match is None:
            continue
        rest = match.group("rest").strip()
        text = rng.choice(_QUESTIONS).replace("{rest}", rest[0].lower() + rest[1:])
        out.append(TrainingRow(text, row.source, 1, 0, row.category))
    return out


def wrap(
    templates: list[tuple[str, str, str]],
    payloads: list[TrainingRow],
    seed: int,
    per_template: int = 6,
) -> list[TrainingRow]:
    """Each jailbreak template around ``per_template`` payloads (harmful and benign ones):
    the wrapper is an injection whatever it carries; harm follows the payload."""
    rng = random.Random(seed)
    out = []
    for _name, family, template in templates:
        for payload in rng.sample(payloads, min(per_template, len(payloads))):
            text = template.replace("{{ prompt }}", payload.text)
            out.append(
                TrainingRow(text, "pyrit/jailbreak", payload.harm, 1, payload.category, family)
            )
    return out
