"""A small JSON path syntax for reading a tool's result (pure).

``$`` is the whole result; ``.name`` or ``["any key"]`` reads a key; ``[0]`` reads a list item
(``[-1]`` the last); ``[*]`` fans out over every item of a list (or every value of a mapping).
Examples: ``$.status``, ``$.booking.flight_id``, ``$.bookings[*]``, ``$["flight no"]``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_KEY = re.compile(r"\.([A-Za-z_][A-Za-z0-9_\-]*)")
_INDEX = re.compile(r"\[(-?\d+)\]")
_QUOTED = re.compile(r"\[(\"(?:\\.|[^\"\\])*\")\]")
_STAR = re.compile(r"\[\*\]")

WILDCARD = object()


class PathError(ValueError):
    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.offset = offset  # 0-based position in the path text


@dataclass(frozen=True)
class JsonPath:
    text: str
    steps: tuple[Any, ...]  # str keys, int indexes, WILDCARD

    @property
    def fans_out(self) -> bool:
        return any(step is WILDCARD for step in self.steps)

    def select(self, document: Any) -> list[Any]:
        """Every value the path reaches (one at most without ``[*]``); missing parts give none."""
        values = [document]
        for step in self.steps:
            following: list[Any] = []
            for value in values:
                if step is WILDCARD:
                    if isinstance(value, list):
                        following.extend(value)
                    elif isinstance(value, dict):
                        following.extend(value.values())
                elif isinstance(step, str):
                    if isinstance(value, dict) and step in value:
                        following.append(value[step])
                elif isinstance(value, list) and -len(value) <= step < len(value):
                    following.append(value[step])
            values = following
        return values

    def __str__(self) -> str:
        return self.text


def compile_path(text: str) -> JsonPath:
    if not text.startswith("$"):
        raise PathError("a path starts with '$' (the tool's whole result)", 0)
    steps: list[Any] = []
    pos = 1
    while pos < len(text):
        for pattern in (_KEY, _INDEX, _QUOTED, _STAR):
            match = pattern.match(text, pos)
            if match is None:
                continue
            if pattern is _KEY:
                steps.append(match.group(1))
            elif pattern is _INDEX:
                steps.append(int(match.group(1)))
            elif pattern is _QUOTED:
                steps.append(json.loads(match.group(1)))
            else:
                steps.append(WILDCARD)
            pos = match.end()
            break
        else:
            raise PathError(
                f"expected '.name', '[index]', '[\"key\"]' or '[*]' at {text[pos:]!r}", pos
            )
    return JsonPath(text, tuple(steps))
