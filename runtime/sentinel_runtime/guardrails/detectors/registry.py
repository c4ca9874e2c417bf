"""The detector families by name, and one set of them run together over a text."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from sentinel_runtime.guardrails.detectors import (
    assignments,
    basic_auth,
    jwt,
    private_keys,
    tokens,
    url_credentials,
)
from sentinel_runtime.guardrails.detectors.base import Detection


@dataclass(frozen=True)
class Family:
    name: str
    find: Callable[[str], Iterator[Detection]]
    hold: Callable[[str], int]
    names: Callable[[], tuple[str, ...]]
    summary: str


@functools.cache
def _token_detector() -> tokens.TokenDetector:
    return tokens.TokenDetector()


def _families() -> dict[str, Family]:
    table = _token_detector()
    return {
        "tokens": Family(
            "tokens",
            table.find,
            table.hold,
            table.names,
            f"{len(table.rules)} provider token formats (data/provider_tokens.yaml)",
        ),
        "private_keys": Family(
            "private_keys",
            private_keys.find,
            private_keys.hold,
            lambda: (private_keys.NAME,),
            "PEM private-key blocks, BEGIN to END",
        ),
        "jwt": Family(
            "jwt", jwt.find, jwt.hold, lambda: (jwt.NAME,), "JSON Web Tokens, all segments"
        ),
        "url_credentials": Family(
            "url_credentials",
            url_credentials.find,
            url_credentials.hold,
            lambda: (url_credentials.NAME,),
            "passwords in scheme://user:password@host",
        ),
        "basic_auth": Family(
            "basic_auth",
            basic_auth.find,
            basic_auth.hold,
            lambda: (basic_auth.NAME,),
            "user:password in base64 (Docker/npm auth, Basic) and on command lines",
        ),
        "assignments": Family(
            "assignments",
            assignments.find,
            assignments.hold,
            lambda: tuple(
                f"{assignments.NAME}/{kind}" for kind in ("password", "secret", "token", "key")
            ),
            "values of password/secret/token/key names (env, YAML, JSON, INI, flags, prose)",
        ),
    }


FAMILIES: tuple[str, ...] = (
    "tokens",
    "private_keys",
    "jwt",
    "url_credentials",
    "basic_auth",
    "assignments",
)


class DetectorSet:
    """The chosen families, run together: all detections, and the streaming hold."""

    def __init__(self, names: tuple[str, ...]) -> None:
        families = _families()
        unknown = sorted(set(names) - set(families))
        if unknown:
            raise ValueError(f"unknown detector families {unknown}; available: {list(FAMILIES)}")
        self.families = tuple(families[name] for name in FAMILIES if name in names)

    def find(self, text: str) -> list[Detection]:
        return [d for family in self.families for d in family.find(text)]

    def hold(self, text: str) -> int:
        return min((family.hold(text) for family in self.families), default=len(text))

    def describe(self) -> list[dict[str, object]]:
        return [
            {"family": f.name, "summary": f.summary, "detectors": list(f.names())}
            for f in self.families
        ]


@functools.cache
def detector_set(names: tuple[str, ...] = FAMILIES) -> DetectorSet:
    return DetectorSet(names)
