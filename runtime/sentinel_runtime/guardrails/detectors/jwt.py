"""JSON Web Tokens (and Kubernetes service-account tokens, which are JWTs), redacted whole.

A JWT is three base64url segments (five for an encrypted one); it is one when its header
decodes to a JSON object naming an ``alg``. The whole token goes: a visible signature or
payload is part of a usable credential.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator

import regex

from sentinel_runtime.guardrails.detectors.base import Detection, trailing_run_start

NAME = "jwt"
# Headers are JSON objects, so every JWT starts with "eyJ" ('{"' in base64url).
TOKEN = regex.compile(
    r"(?<![A-Za-z0-9_\-])eyJ[A-Za-z0-9_\-]{8,}={0,2}\.[A-Za-z0-9_\-]{2,}={0,2}\."
    r"[A-Za-z0-9_\-]*={0,2}(?:\.[A-Za-z0-9_\-]+={0,2}){0,2}"
)
MAX_TOKEN = 16 * 1024


def _header(segment: str) -> object:
    padded = segment.rstrip("=") + "=" * (-len(segment.rstrip("=")) % 4)
    try:
        return json.loads(base64.urlsafe_b64decode(padded))
    except (binascii.Error, ValueError):
        return None


def find(text: str) -> Iterator[Detection]:
    at = text.find("eyJ")
    while at != -1:
        m = TOKEN.match(text, at, min(len(text), at + MAX_TOKEN))
        if m is not None:
            header = _header(m.group().split(".", 1)[0])
            if isinstance(header, dict) and "alg" in header:
                yield Detection(NAME, m.start(), m.end())
                at = text.find("eyJ", m.end())
                continue
        at = text.find("eyJ", at + 3)


def hold(text: str) -> int:
    """A JWT holds no whitespace: only the last run of non-whitespace can grow into one."""
    return trailing_run_start(text, MAX_TOKEN)
