"""The data file (``data/secrets_formats.yaml``): read once at import, its word lists, and the
compiler for its token format templates (``{CHARSET:N}``, ``{CHARSET:A-B}``, ``{digits:N}``...)."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from .charsets import CHARSETS, digits, rand, rb64

DATA = Path(__file__).parent.parent / "data" / "secrets_formats.yaml"
# Read once at import: the kinds and the negative families are module constants.
FORMATS: dict[str, Any] = yaml.safe_load(DATA.read_text(encoding="utf-8"))
LEXICONS: dict[str, tuple[str, ...]] = {
    name: tuple(words) for name, words in FORMATS["lexicons"].items()
}

WORDS = LEXICONS["words"]
SERVICES = LEXICONS["services"]

Maker = Callable[[random.Random], str]

# A field of a format template: ``{NAME:N}`` or ``{NAME:A-B}`` (see the data file).
_FIELD = re.compile(r"\{([^{}:]+):(\d+)(?:-(\d+))?\}")
_GENERATORS: dict[str, Callable[[random.Random, int], str]] = {
    "digits": digits,
    "base64": rb64,
    # ``{int:A-B}`` writes the number drawn for the length itself.
    "int": lambda rng, n: str(n),
}


def _generator(name: str) -> Callable[[random.Random, int], str]:
    if name in _GENERATORS:
        return _GENERATORS[name]
    base, _, extra = name.partition("+")
    if base not in CHARSETS:
        raise ValueError(f"unknown charset or generator {name!r} in {DATA.name}")
    alphabet = CHARSETS[base] + extra
    return lambda rng, n: rand(rng, alphabet, n)


_Field = tuple[Callable[[random.Random, int], str], int, int | None]


def template(fmt: str) -> Maker:
    """Compile a format template once; its fields are drawn left to right, a length range
    just before the field it sizes, as the hand-written makers did."""
    pieces: list[str | _Field] = []
    pos = 0
    for m in _FIELD.finditer(fmt):
        pieces.append(fmt[pos : m.start()])
        high = int(m.group(3)) if m.group(3) else None
        pieces.append((_generator(m.group(1)), int(m.group(2)), high))
        pos = m.end()
    pieces.append(fmt[pos:])
    if any(isinstance(p, str) and ("{" in p or "}" in p) for p in pieces):
        raise ValueError(f"malformed token format {fmt!r} in {DATA.name}")

    def make(rng: random.Random) -> str:
        out = []
        for piece in pieces:
            if isinstance(piece, str):
                out.append(piece)
            else:
                draw, low, high = piece
                out.append(draw(rng, low if high is None else rng.randint(low, high)))
        return "".join(out)

    return make
