"""``user:password`` pairs that are not in a URL: base64-encoded (a Docker or npm config's
``auth``, an HTTP ``Basic`` credential, wherever the answer puts it) and on command lines
(``curl -u user:password``, ``poetry config http-basic.REPO user password``).

Only the password part of a command line goes; an encoded pair goes whole, since its
base64 cannot be cut between user and password.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator

import regex

from sentinel_runtime.guardrails.detectors import values
from sentinel_runtime.guardrails.detectors.base import Detection, trailing_run_start

NAME = "basic_auth"
# Base64 of 6 to 256 bytes, standing alone (not part of a longer token or word). The ``re``
# module: this runs over the whole text, where it is four times faster than ``regex``.
ENCODED = re.compile(r"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/]{8,344}={0,2}(?![A-Za-z0-9+/=_\-])")
# Base64 of "user:password" has a capital or a digit; a plain lower-case word is not one.
_NOT_A_WORD = re.compile(r"[A-Z0-9+/=]")
# A user name as registries and HTTP servers accept them: base64 JSON ('{"alg":...') is
# not a pair.
PAIR = regex.compile(r"(?P<user>[A-Za-z0-9._@+\-]{1,64}):(?P<password>\S{3,128})")
COMMAND = regex.compile(
    r"""(?:(?<![\w-])(?:-u|--user)[ \t]+['"]?[^\s:'"]{1,64}:(?P<password>[^\s'"]{1,256})
    |http-basic\.[\w.\-]{1,64}[ \t]+['"]?[^\s'"]{1,64}['"]?[ \t]+['"]?
     (?P<password>[^\s'"]{1,256}))""",
    regex.VERBOSE | regex.VERSION0,
)
COMMAND_WORDS = ("-u ", "--user ", "http-basic.")
MAX_COMMAND = 512


def _decoded_pair(run: str) -> bool:
    """Whether ``run`` is base64 of printable ``user:password`` (a password, not a URL)."""
    if not _NOT_A_WORD.search(run):
        return False
    padded = run + "=" * (-len(run) % 4)
    try:
        decoded = base64.b64decode(padded, validate=True).decode("ascii")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    m = PAIR.fullmatch(decoded)
    if m is None or not decoded.isprintable():
        return False
    password = m.group("password")
    return not password.startswith("//") and not values.is_placeholder(password)


def find(text: str) -> Iterator[Detection]:
    for m in ENCODED.finditer(text):
        if _decoded_pair(m.group()):
            yield Detection(NAME, m.start(), m.end())
    for word in COMMAND_WORDS:
        at = text.find(word)
        while at != -1:
            m = COMMAND.match(text, at)
            if m is not None and not values.is_placeholder(m.group("password")):
                yield Detection(NAME, m.start("password"), m.end("password"))
            at = text.find(word, at + 1)


def hold(text: str) -> int:
    """Encoded pairs hold no whitespace (the last run of non-whitespace may still grow into
    one); a command line on the last line may still be getting its password."""
    hold_at = trailing_run_start(text, 344)
    window = max(text.rfind("\n") + 1, len(text) - MAX_COMMAND)
    for word in COMMAND_WORDS:
        at = text.find(word, window)
        if at != -1:
            hold_at = min(hold_at, at)
    return hold_at
