"""Provider token kinds: one ``TokenSpec`` per kind in the data file, each with its documented
formats (templates, or a maker in code for the few whose body holds a JSON payload)."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

from .charsets import ALNUM, B64URL, b64, digits, rand
from .templates import FORMATS, WORDS, Maker, template


@dataclass(frozen=True)
class TokenSpec:
    kind: str
    label: str
    env: tuple[str, ...]
    formats: tuple[Maker, ...]
    header: str = "Authorization: Bearer {}"
    host: str = "api.example.org"

    def make(self, rng: random.Random, i: int) -> str:
        """Rotate through the kind's documented variants so each appears."""
        return self.formats[i % len(self.formats)](rng)


def _sentry_org(rng: random.Random) -> str:
    claims = {
        "iat": rng.randint(1_700_000_000, 1_760_000_000),
        "url": "https://sentry.io",
        "region_url": "https://us.sentry.io",
        "org": rng.choice(WORDS) + "-" + rng.choice(WORDS),
    }
    return (
        "sntrys_"
        + b64(json.dumps(claims, separators=(",", ":")).encode()).rstrip("=")
        + ("_" + rand(rng, B64URL, 43))
    )


def _grafana_cloud(rng: random.Random) -> str:
    claims = {"o": digits(rng, 6), "n": rng.choice(WORDS) + "-token", "k": rand(rng, ALNUM, 24)}
    claims["m"] = {"r": rng.choice(["prod-us-east-0", "prod-eu-west-2"])}  # type: ignore[assignment]
    return "glc_" + b64(json.dumps(claims, separators=(",", ":")).encode())


# Formats whose body is structured (a JSON payload inside the token), named by ``maker:``.
MAKERS: dict[str, Maker] = {"sentry-org": _sentry_org, "grafana-cloud": _grafana_cloud}


def _format(entry: str | dict[str, str]) -> Maker:
    if isinstance(entry, str):
        return template(entry)
    return MAKERS[entry["maker"]]


def _token_spec(entry: dict[str, Any]) -> TokenSpec:
    optional = {key: entry[key] for key in ("header", "host") if key in entry}
    return TokenSpec(
        kind=entry["kind"],
        label=entry["label"],
        env=tuple(entry["env"]),
        formats=tuple(_format(f) for f in entry["formats"]),
        **optional,
    )


TOKEN_SPECS: tuple[TokenSpec, ...] = tuple(_token_spec(entry) for entry in FORMATS["tokens"])
