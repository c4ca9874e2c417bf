"""The value rule: whether a string assigned to a secret-like name is a secret.

A value is not one when it is a placeholder (``<password>``, ``${DB_PASSWORD}``,
``changeme``, ``****``), a reference in code (``os.environ[...]``, ``settings.API_KEY``,
``db_password``), a small number (``3600``) or, after a prose connector ("the token is
stored in Vault"), an ordinary word. Passwords may be anything else of four or more
characters; tokens, secrets and keys must also look random (letters and digits, or mixed
case, or long hex/base64), since those names are also given to identifiers.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

import yaml

WORDS_FILE = "assignment_words.yaml"
_IDENTIFIER_PATH = re.compile(r"[A-Za-z_][A-Za-z_]*(?:\.[A-Za-z_][A-Za-z_]*)+")
_SNAKE_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z]*(?:_[A-Za-z]+)+")
_SMALL_NUMBER = re.compile(r"[0-9]{1,7}(?:\.[0-9]+)?")
_REPEATED = re.compile(r"(.)\1*")
_HEX = re.compile(r"[0-9a-fA-F]{16,}")
_BASE64 = re.compile(r"[A-Za-z0-9+/_\-]{16,}={0,2}")
_CODE_CHARS = frozenset("()[]{}")
MIN_PASSWORD = 4
MIN_PROSE_PASSWORD = 6
MIN_TOKEN = 8


@dataclass(frozen=True)
class Words:
    key_endings: dict[str, tuple[str, ...]]
    key_excludes: frozenset[str]
    key_exclude_prefixes: tuple[str, ...]
    placeholders: frozenset[str]
    placeholder_prefixes: tuple[str, ...]
    prose_words: frozenset[str]


@functools.cache
def words() -> Words:
    text = resources.files(__package__).joinpath("data", WORDS_FILE).read_text(encoding="utf-8")
    data: dict[str, Any] = yaml.safe_load(text)
    excludes = [str(w) for w in data["key_excludes"]]
    return Words(
        key_endings={k: tuple(str(e) for e in v) for k, v in data["key_endings"].items()},
        key_excludes=frozenset(w for w in excludes if not w.endswith("*")),
        key_exclude_prefixes=tuple(w[:-1] for w in excludes if w.endswith("*")),
        placeholders=frozenset(str(w) for w in data["placeholders"]),
        placeholder_prefixes=tuple(str(w) for w in data["placeholder_prefixes"]),
        prose_words=frozenset(str(w) for w in data["prose_words"]),
    )


def is_placeholder(value: str) -> bool:
    lowered = value.strip().lower()
    table = words()
    if not lowered or lowered in table.placeholders:
        return True
    if lowered.startswith(table.placeholder_prefixes) or lowered.endswith(">"):
        return True
    if lowered.startswith("$") and lowered[1:2].isalpha():  # $DB_PASSWORD, $token
        return True
    # "****", "xxxxxxxx", "........", "…": one character repeated.
    if _REPEATED.fullmatch(lowered) or "..." in lowered or "…" in lowered:
        return True
    return "example" in lowered or "placeholder" in lowered or lowered.startswith("your")


def is_reference(value: str) -> bool:
    """Code that names a secret rather than holding it (only unquoted values are code)."""
    if _CODE_CHARS & set(value):
        return True
    if _IDENTIFIER_PATH.fullmatch(value) or _SNAKE_IDENTIFIER.fullmatch(value):
        return True
    # An environment variable's name: DB_PASSWORD, API_KEY (no digits, all capitals).
    return value.isupper() and "_" in value and not any(c.isdigit() for c in value)


def character_classes(value: str) -> int:
    return sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
            any(not c.isalnum() for c in value),
        )
    )


def looks_random(value: str) -> bool:
    """Token-like: long enough, and more than one kind of character (or long hex/base64)."""
    if len(value) < MIN_TOKEN or " " in value:
        return False
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    if has_digit and has_alpha:
        return True
    if _HEX.fullmatch(value) and has_digit:
        return True
    mixed_case = any(c.islower() for c in value) and any(c.isupper() for c in value)
    return bool(mixed_case and len(value) >= 12 and _BASE64.fullmatch(value))


def is_secret_value(value: str, kind: str, *, quoted: bool, prose: bool) -> bool:
    """Whether ``value``, assigned to a name of ``kind`` (password, secret, token, key), is
    a secret; ``quoted`` when it was a string literal, ``prose`` when a connector word
    ("is", "was") rather than ``=`` or ``:`` bound it."""
    value = value.strip()
    if is_placeholder(value) or (not quoted and is_reference(value)):
        return False
    if _SMALL_NUMBER.fullmatch(value) or value.startswith(("/", "./", "~/", "http://", "https://")):
        return False
    lowered = value.lower()
    if prose and lowered in words().prose_words:
        return False
    if kind == "password":
        if prose and not quoted:
            return len(value) >= MIN_PROSE_PASSWORD and character_classes(value) >= 2
        return len(value) >= MIN_PASSWORD and lowered not in words().prose_words
    return looks_random(value)
