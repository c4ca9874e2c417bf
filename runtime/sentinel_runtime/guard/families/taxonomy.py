"""A guard family's categories, read from its data file (``guard/data/<family>.yaml``).

Each family names harms in its own words ("S9", "Violent", "harm"); the data file says, for
each code, the name the model card gives it and the Sentinel risk categories
(``pipeline.signals.harm.CATEGORIES``) it covers. The adapters (``families.*``) map what a
model wrote through :meth:`Taxonomy.risks`; a code the file does not know maps to ``other``,
so a model that learns a new category degrades to a vaguer trace, never to an error.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import yaml

UNKNOWN = "other"


def key(code: str) -> str:
    """How codes are compared: case, surrounding and repeated spaces do not matter."""
    return re.sub(r"\s+", " ", code).strip().casefold()


@dataclass(frozen=True)
class Taxonomy:
    family: str
    names: Mapping[str, str]  # key(code) -> the name the model card gives it
    risk_map: Mapping[str, tuple[str, ...]]  # key(code) -> Sentinel risk categories
    # Anything else a family keeps per code (ShieldGemma's policy texts), by key(code).
    extra: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def risks(self, codes: Iterable[str]) -> tuple[str, ...]:
        """The Sentinel risk categories of ``codes``, in order, each once."""
        found: list[str] = []
        for code in codes:
            for risk in self.risk_map.get(key(code), (UNKNOWN,)):
                if risk not in found:
                    found.append(risk)
        return tuple(found)


@functools.cache
def load(family: str) -> Taxonomy:
    """The taxonomy of ``family`` from the package's data (read once per process)."""
    # Through the top package: guard/data is package data, not a package of its own.
    path = resources.files("sentinel_runtime") / "guard" / "data" / f"{family}.yaml"
    return parse(family, yaml.safe_load(path.read_text(encoding="utf-8")))


def parse(family: str, document: Any) -> Taxonomy:
    """A taxonomy from a data file's content; ValueError says what is wrong with it."""
    categories = document.get("categories") if isinstance(document, dict) else None
    if not isinstance(categories, dict) or not categories:
        raise ValueError(f"{family}: the data file needs a non-empty `categories` mapping")
    names: dict[str, str] = {}
    risks: dict[str, tuple[str, ...]] = {}
    extra: dict[str, dict[str, Any]] = {}
    for code, entry in categories.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("risk"), list):
            raise ValueError(f"{family}: category {code!r} needs a `risk` list")
        if not entry["risk"] or not all(isinstance(r, str) for r in entry["risk"]):
            raise ValueError(f"{family}: category {code!r} has an empty or non-text `risk`")
        names[key(str(code))] = str(entry.get("name", code))
        risks[key(str(code))] = tuple(entry["risk"])
        extra[key(str(code))] = {k: v for k, v in entry.items() if k not in ("name", "risk")}
    return Taxonomy(family=family, names=names, risk_map=risks, extra=extra)
