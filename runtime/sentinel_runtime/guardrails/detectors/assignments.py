"""Values assigned to secret-like names, in the forms answers write them:

``DB_PASSWORD=...`` (env, INI), ``password: "..."`` (YAML), ``"api_key": "..."`` (JSON),
``--token=...`` / ``--password ...`` (command lines), ``X-API-Key: ...`` (HTTP headers),
``login bob password ...`` (netrc), ``_authToken=...`` / ``"auth": "..."`` (npm and Docker
configs) and prose ("the admin password is ...", "the password for the db is ...").

Key names are found from a few keyword stems (one Aho-Corasick pass over the ASCII-lowered
text); the whole key around a stem must end with a secret noun and hold no word that makes
it about a secret rather than one (``data/assignment_words.yaml``). The value is then judged
by :mod:`values`; only the value is redacted, so the answer still says what was set.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

import ahocorasick
import regex

from sentinel_runtime.guardrails.detectors import values
from sentinel_runtime.guardrails.detectors.base import Detection, trailing_run_start

NAME = "assignments"
STEMS = ("pass", "pwd", "_pw", "secret", "token", "key", "auth", "credential")
_KEY_CHAR = re.compile(r"[A-Za-z0-9_.\-]")
MAX_KEY = 64
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_KEY_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
# "to": "set MASTER_KEY to ...", "change the password to ...".
_CONNECTOR = r"(?:is|was|are|to|=|:)"
_QUALIFIER = (
    r"[ \t]+(?:for|of|to)[ \t]+(?:the[ \t]+)?[\w.\-]{1,40}"
    r"(?:[ \t]+(?:account|user|server|database|db|instance|cluster|service|api|admin))?"
)
ASSIGNMENT = regex.compile(
    r"""(?P<close>["'`])?[ \t]{0,8}
    (?:(?P<op>:=|=>|==|=|:)|(?P<prose>(?:"""
    + _QUALIFIER
    + r""")?[ \t]+"""
    + _CONNECTOR
    + r"""[ \t]*:?))
    [ \t]{0,8}(?:(?:Basic|Bearer|Token|token|Digest|basic|bearer)[ \t]+)?
    (?:"(?P<v>[^"\n\\]{1,256})"|'(?P<v>[^'\n]{1,256})'|`(?P<v>[^`\n]{1,256})`
      |(?P<bare>[^\s'"`,;<>(){}\[\]]{1,256}))""",
    regex.VERBOSE | regex.VERSION0,
)
# ``--password hunter2`` and netrc's ``login bob password hunter2``: a space binds them.
SPACED = regex.compile(r"[ \t]{1,8}(?P<bare>[^\s'\"`,;<>(){}\[\]]{1,256})")
_NETRC = regex.compile(r"\blogin[ \t]+\S+[ \t]+\Z")
# A name used, not assigned: "${DB_PASSWORD:?set it}", "$API_KEY", "{{ .Values.token }}".
_EXPANSION = regex.compile(r"(?:\$\{?|\{\{[ \t]*|%\()\Z")
_PREVIOUS_WORD = regex.compile(r"([A-Za-z]+)[ \t]+[`'\"]?\Z")
# The longest assignment: a key, a qualifier, a connector and a value.
MAX_ASSIGNMENT = 512


def _ascii_lower(text: str) -> str:
    """``text`` with only A-Z lowered, so offsets stay put ("\u0130".lower() is two
    characters). An ASCII text is that already under ``str.lower``, which costs a tenth of
    ``translate``'s per-character table lookups."""
    return text.lower() if text.isascii() else text.translate(_ASCII_LOWER)


@functools.cache
def _automaton() -> ahocorasick.Automaton:
    automaton = ahocorasick.Automaton()
    for stem in STEMS:
        automaton.add_word(stem, len(stem))
    automaton.make_automaton()
    return automaton


def key_kind(key: str) -> str | None:
    """The kind of secret ``key`` names (password, secret, token, key), or None."""
    lowered = key.lower().lstrip("-_.")
    for kind, endings in values.words().key_endings.items():
        for ending in endings:
            bare = ending.lstrip("_-.")
            if lowered == bare:
                return kind
            if not lowered.endswith(ending):
                continue
            if ending != "key":
                # "db_password", "userPassword", "GITHUB_TOKEN", "npm _auth".
                return kind
            # "key" alone ends too many words ("monkey"): it needs a separator or a hump.
            before = key[-len(ending) - 1]
            if before in "_-." or (key[-len(ending)].isupper() and before.islower()):
                return kind
    return None


def about_a_secret(key: str) -> bool:
    """``password_policy``, ``secretName``, ``public_key``: names of things about secrets."""
    table = values.words()
    for word in _KEY_WORDS.findall(key):
        lowered = word.lower()
        if lowered in table.key_excludes or lowered.startswith(table.key_exclude_prefixes):
            return True
    return False


def _key_span(text: str, at: int, end: int) -> tuple[int, int]:
    start = at
    while start > 0 and at - start < MAX_KEY and _KEY_CHAR.match(text, start - 1):
        start -= 1
    while end < len(text) and end - at < MAX_KEY and _KEY_CHAR.match(text, end):
        end += 1
    return start, end


def _value(text: str, key: str, start: int, end: int) -> tuple[int, int, bool, bool] | None:
    """The value bound to the key at ``text[start:end]``: its span, quoted, prose."""
    m = ASSIGNMENT.match(text, end, min(len(text), end + MAX_ASSIGNMENT))
    if m is not None:
        group = "bare" if m.start("bare") >= 0 else "v"
        v_start, v_end = m.span(group)
        if group == "bare":
            while v_end > v_start and text[v_end - 1] in ".:!?" and m.group("prose"):
                v_end -= 1
        return v_start, v_end, group == "v", bool(m.group("prose"))
    spaced = key.startswith("-") or (
        key.lower() in {"password", "passwd"} and _NETRC.search(text, max(0, start - 200), start)
    )
    if spaced:
        m = SPACED.match(text, end, min(len(text), end + MAX_ASSIGNMENT))
        if m is not None:
            return m.start("bare"), m.end("bare"), False, False
    return None


def find(text: str) -> Iterator[Detection]:
    lowered = _ascii_lower(text)
    seen: set[tuple[int, int]] = set()
    for last, length in _automaton().iter(lowered):
        start, end = _key_span(text, last - length + 1, last + 1)
        if (start, end) in seen:
            continue
        seen.add((start, end))
        key = text[start:end]
        kind = key_kind(key)
        if kind is None or about_a_secret(key) or _EXPANSION.search(text, max(0, start - 3), start):
            continue
        found = _value(text, key, start, end)
        if found is None:
            continue
        v_start, v_end, quoted, prose = found
        # In prose the name's qualifier is the word before it: "the build cache key is ...".
        previous = _PREVIOUS_WORD.search(text, max(0, start - 40), start) if prose else None
        if previous is not None and about_a_secret(previous.group(1)):
            continue
        value = text[v_start:v_end]
        if values.is_secret_value(value, kind, quoted=quoted, prose=prose):
            yield Detection(f"{NAME}/{kind}", v_start, v_end)


def hold(text: str) -> int:
    """Assignments never cross a line: hold from the earliest key on the last line (within
    reach of the end) that a continuation could still bind a value to, and the last run of
    non-whitespace (a key still being written)."""
    hold_at = trailing_run_start(text, MAX_KEY)
    line_start = text.rfind("\n") + 1
    window = max(line_start, len(text) - MAX_ASSIGNMENT)
    lowered = _ascii_lower(text[window:])
    for last, length in _automaton().iter(lowered):
        start, _ = _key_span(text, window + last - length + 1, window + last + 1)
        hold_at = min(hold_at, start)
        break
    return hold_at
