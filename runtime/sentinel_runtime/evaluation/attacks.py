"""Our own jailbreak wrappers by attack family, for measuring each family unseen.

``data/attack_wrappers.yaml`` holds a few wrappers per family (role play, forced prefix,
narrative camouflage, instruction override, refusal suppression), written for this
measurement and never trained on. ``wrapped`` puts one payload in one wrapper of a
family, chosen by a seeded draw, so a measurement is reproducible.
"""

from __future__ import annotations

import random
from functools import cache
from pathlib import Path

import yaml

WRAPPERS = Path(__file__).with_name("data") / "attack_wrappers.yaml"


@cache
def families() -> dict[str, tuple[str, ...]]:
    data = yaml.safe_load(WRAPPERS.read_text(encoding="utf-8"))
    return {name: tuple(texts) for name, texts in data.items()}


def wrapped(payload: str, family: str, seed: int) -> str:
    choices = families()[family]
    template = random.Random(f"{family}:{seed}:{payload}").choice(choices)
    return template.replace("{payload}", payload.strip())
