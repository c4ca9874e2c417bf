"""The keys file (``RUNTIME_KEYS_FILE``): named API keys, each with its scopes and limits.

A YAML mapping with one list, ``keys``; each entry (docs/keys-and-tenants.md)::

    - name: team-a            # shown in audit records, logs and metrics (never the key)
      key: <at least 16 characters>
      read: ["a*"]            # index globs the key may read (chat, /retrieve, /answer, ...)
      write: ["a*"]           # index globs it may write (index, update, delete, persist, load)
      audit: false            # GET /v1/audit
      policy: false           # GET /v1/guardrails/policy and /v1/governance/rulebase
      rpm: 60                 # requests per minute (absent: unlimited)
      tpm: 100000             # tokens per minute (absent: unlimited)

Globs are ``fnmatch``'s (``*``, ``?``, ``[abc]``, ``[!abc]``), matched case-sensitively like
index names. The key text is read once: the keyring keeps only its HMAC-SHA256 under a secret
drawn at process start, and a lookup compares the digest of the key presented with every
entry's in constant time. Errors name the entry and field, never a key's text (no input is
echoed, and a YAML error is reported by its line and column, not by quoting the line).
"""

from __future__ import annotations

import fnmatch
import hashlib
import hmac
import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

NAME_PATTERN = r"^[a-z0-9]([-a-z0-9_.]{0,61}[a-z0-9])?$"
GLOB_PATTERN = r"^[A-Za-z0-9._\-*?\[\]!]{1,127}$"
MIN_KEY_CHARS = 16
MAX_KEY_CHARS = 4096
MAX_FILE_BYTES = 1024 * 1024
# The names a request carries when no key of the file is the reason it passed: none is
# configured (anonymous), RUNTIME_API_KEY (runtime-api-key), or no valid key (unauthenticated).
ANONYMOUS = "anonymous"
RUNTIME_API_KEY_NAME = "runtime-api-key"
UNAUTHENTICATED = "unauthenticated"
RESERVED_NAMES = frozenset({ANONYMOUS, RUNTIME_API_KEY_NAME, UNAUTHENTICATED})
EVERYTHING = ("*",)

# Drawn once per process: a digest kept in memory is no help to guess a key elsewhere.
_DIGEST_SECRET = secrets.token_bytes(32)


class KeysFileError(ValueError):
    """The keys file cannot be used; the message names the file, the entry and the field."""


def digest(key: str) -> bytes:
    return hmac.new(_DIGEST_SECRET, key.encode("utf-8"), hashlib.sha256).digest()


@dataclass(frozen=True)
class Principal:
    """Who a request acts as: a key's name, its scopes and its limits (None: unlimited)."""

    name: str
    read: tuple[str, ...] = ()
    write: tuple[str, ...] = ()
    audit: bool = False
    policy: bool = False
    rpm: int | None = None
    tpm: int | None = None

    def may_read(self, index: str) -> bool:
        return _matches(self.read, index)

    def may_write(self, index: str) -> bool:
        return _matches(self.write, index)

    def readable(self, names: Iterable[str]) -> list[str]:
        """``names`` this principal may read, in their order."""
        return [name for name in names if self.may_read(name)]


def _matches(globs: tuple[str, ...], index: str) -> bool:
    # fnmatchcase: index names are case-sensitive, so globs are too (fnmatch would follow
    # the platform's case rules).
    return any(fnmatch.fnmatchcase(index, glob) for glob in globs)


def unrestricted(name: str) -> Principal:
    """Every scope and no limit: RUNTIME_API_KEY, or anyone when no key is configured."""
    return Principal(name, EVERYTHING, EVERYTHING, audit=True, policy=True)


class KeyEntry(BaseModel):
    """One entry of the keys file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=NAME_PATTERN)
    key: SecretStr
    read: list[str] = Field(default_factory=list)
    write: list[str] = Field(default_factory=list)
    audit: bool = False
    policy: bool = False
    rpm: int | None = Field(default=None, ge=1)
    tpm: int | None = Field(default=None, ge=1)

    @field_validator("name")
    @classmethod
    def _not_reserved(cls, value: str) -> str:
        if value in RESERVED_NAMES:
            raise ValueError(f"{value!r} is reserved ({', '.join(sorted(RESERVED_NAMES))})")
        return value

    @field_validator("key")
    @classmethod
    def _usable_key(cls, value: SecretStr) -> SecretStr:
        text = value.get_secret_value()
        if not MIN_KEY_CHARS <= len(text) <= MAX_KEY_CHARS:
            raise ValueError(f"a key has {MIN_KEY_CHARS} to {MAX_KEY_CHARS} characters")
        if not text.isascii() or not text.isprintable() or " " in text:
            raise ValueError("a key is printable ASCII without spaces (it travels in a header)")
        return value

    @field_validator("read", "write")
    @classmethod
    def _globs(cls, value: list[str]) -> list[str]:
        for position, glob in enumerate(value):
            if not isinstance(glob, str) or not re.fullmatch(GLOB_PATTERN, glob):
                raise ValueError(
                    f"item {position} is not an index glob (index-name characters and "
                    "* ? [ ] !, at most 127)"
                )
        return value


class KeysFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    keys: list[KeyEntry]


@dataclass(frozen=True)
class Keyring:
    """The keys in force: each key's digest beside its principal."""

    entries: tuple[tuple[bytes, Principal], ...] = ()

    def find(self, key: str) -> Principal | None:
        """The principal whose key is ``key``. Every entry is compared (no early exit), with
        ``hmac.compare_digest``, so the time taken says nothing about which entry matched."""
        presented = digest(key)
        found = None
        for stored, principal in self.entries:
            if hmac.compare_digest(stored, presented):
                found = principal
        return found

    def names(self) -> list[str]:
        return [principal.name for _, principal in self.entries]


def parse(text: str, source: str) -> Keyring:
    """The keyring of a keys file's text; :class:`KeysFileError` says what is wrong."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise KeysFileError(f"{source}: not valid YAML: {_yaml_problem(exc)}") from None
    if not isinstance(data, dict):
        raise KeysFileError(f"{source}: expected a mapping with a 'keys' list")
    try:
        parsed = KeysFile.model_validate(data)
    except ValidationError as exc:
        raise KeysFileError(f"{source}: {_describe(exc, data)}") from None
    seen_names: set[str] = set()
    seen_keys: dict[bytes, str] = {}
    entries: list[tuple[bytes, Principal]] = []
    for entry in parsed.keys:
        if entry.name in seen_names:
            raise KeysFileError(f"{source}: two keys are named {entry.name!r}")
        seen_names.add(entry.name)
        hashed = digest(entry.key.get_secret_value())
        if hashed in seen_keys:
            raise KeysFileError(
                f"{source}: keys {seen_keys[hashed]!r} and {entry.name!r} have the same key text"
            )
        seen_keys[hashed] = entry.name
        principal = Principal(
            name=entry.name,
            read=tuple(entry.read),
            write=tuple(entry.write),
            audit=entry.audit,
            policy=entry.policy,
            rpm=entry.rpm,
            tpm=entry.tpm,
        )
        entries.append((hashed, principal))
    return Keyring(tuple(entries))


def _yaml_problem(exc: yaml.YAMLError) -> str:
    # PyYAML's own message quotes the offending line, which may hold a key: only the
    # problem and where it is.
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or type(exc).__name__
    if mark is None:
        return str(problem)
    return f"{problem} (line {mark.line + 1}, column {mark.column + 1})"


def _describe(exc: ValidationError, data: dict[str, Any]) -> str:
    """pydantic's errors as ``keys[2] (team-b).rpm: ...``, without the input values."""
    parts = []
    for error in exc.errors(include_input=False, include_url=False, include_context=False):
        loc = list(error["loc"])
        where = ""
        if len(loc) >= 2 and loc[0] == "keys" and isinstance(loc[1], int):
            where = f"keys[{loc[1]}]"
            name = _entry_name(data, loc[1])
            if name:
                where += f" ({name})"
            loc = loc[2:]
        else:
            where = str(loc.pop(0)) if loc else ""
        if loc:
            where += "." + ".".join(str(part) for part in loc)
        message = str(error["msg"]).removeprefix("Value error, ")
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)


def _entry_name(data: dict[str, Any], position: int) -> str | None:
    keys = data.get("keys")
    if isinstance(keys, list) and position < len(keys) and isinstance(keys[position], dict):
        name = keys[position].get("name")
        if isinstance(name, str) and len(name) <= 63:
            return name
    return None


def read_file(path: str) -> tuple[Keyring, str]:
    """The keyring of the file at ``path`` and the SHA-256 of its bytes (to tell an unchanged
    file on reload; it is not shown anywhere)."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise KeysFileError(f"{path}: cannot be read ({reason})") from None
    if len(raw) > MAX_FILE_BYTES:
        raise KeysFileError(f"{path}: larger than {MAX_FILE_BYTES} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise KeysFileError(f"{path}: not UTF-8 text") from None
    return parse(text, path), hashlib.sha256(raw).hexdigest()
