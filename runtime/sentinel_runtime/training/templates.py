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


def rows(seed: int, path: Path = TEMPLATES) -> list[TrainingRow]:
    data = load(path)
    rng = random.Random(seed)
    limit = int(data["per_template"])
    slots = data["slots"]
    out: list[TrainingRow] = []
    for group in data["benign"].values():
        for template in group:
            out.extend(
                TrainingRow(text, "templates", 0, 0) for text in expand(template, slots, limit, rng)
            )
    named = data.get("harmful_categories") or {}
    for name, group in data["harmful"].items():
        category = named.get(name, name)
        for template in group:
            out.extend(
                TrainingRow(text, "templates", 1, 0, category)
                for text in expand(template, slots, limit, rng)
            )
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
