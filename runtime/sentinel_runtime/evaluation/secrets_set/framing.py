"""How a secret is framed as an answer: the data file's token framings (env file, shell, code,
prose...) around a provider token, and the framings shared by the URL-shaped secrets."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

from .sample import PER_KIND, Sample
from .templates import FORMATS, LEXICONS, SERVICES
from .tokens import TokenSpec


def _camel(var: str) -> str:
    head, *rest = var.lower().split("_")
    return head + "".join(p.capitalize() for p in rest)


TokenFraming = Callable[[random.Random, TokenSpec, str, str], str]


def _f_json(rng: random.Random, spec: TokenSpec, var: str, s: str) -> str:
    body = {"name": rng.choice(SERVICES), _camel(var): s, "retries": rng.randint(1, 5)}
    return (
        "The settings file should look like this:\n\n```json\n"
        + json.dumps(body, indent=2)
        + ("\n```")
    )


def _f_curl(rng: random.Random, spec: TokenSpec, var: str, s: str) -> str:
    header = spec.header.format(s)
    if header.startswith("-u "):
        return f"Test it with curl:\n\n```bash\ncurl {header} https://{spec.host}/v1/status\n```"
    return (
        f'Test the credential with curl:\n\n```bash\ncurl -sS -H "{header}" \\\n'
        f"  https://{spec.host}/v1/status\n```"
    )


# Framings that need code, named by ``render:``.
RENDERS: dict[str, TokenFraming] = {"json": _f_json, "curl": _f_curl}


def _framing(entry: dict[str, Any]) -> TokenFraming:
    if "render" in entry:
        return RENDERS[entry["render"]]
    # (name, options, whether the options are templates): a lexicon's words are used as written.
    draws = [
        (name, LEXICONS[options], False)
        if isinstance(options, str)
        else (name, tuple(options), True)
        for name, options in entry.get("draws", {}).items()
    ]
    choose: tuple[str, ...] = tuple(entry.get("choose", ()))
    text: str = entry.get("text", "")

    def frame(rng: random.Random, spec: TokenSpec, var: str, s: str) -> str:
        fields = {"s": s, "var": var, "key": var.lower(), "label": spec.label, "host": spec.host}
        for name, options, templated in draws:
            value = rng.choice(options)
            fields[name] = value.format(**fields) if templated else value
        return (rng.choice(choose) if choose else text).format(**fields)

    return frame


TOKEN_FRAMINGS: dict[str, TokenFraming] = {
    name: _framing(entry) for name, entry in FORMATS["token_framings"].items()
}


def token_samples(rng: random.Random, spec: TokenSpec) -> list[Sample]:
    framings = list(TOKEN_FRAMINGS)
    rng.shuffle(framings)
    out = []
    for i in range(PER_KIND):
        secret = spec.make(rng, i)
        name = framings[i % len(framings)]
        text = TOKEN_FRAMINGS[name](rng, spec, rng.choice(spec.env), secret)
        out.append(Sample(text, spec.kind, secret, name))
    return out


def url_framings(url: str, var: str, rng: random.Random) -> list[tuple[str, str]]:
    service = rng.choice(SERVICES)
    return [
        (
            "curl",
            f"```bash\ncurl -X POST -H 'Content-Type: application/json' \\\n"
            f'  -d \'{{"text": "deploy finished"}}\' \\\n  {url}\n```',
        ),
        ("env-file", f"```\n{var}={url}\n```"),
        ("yaml", f"```yaml\nnotifications:\n  {service}:\n    url: {url}\n```"),
        ("json", json.dumps({"channel": service, "webhook_url": url}, indent=2)),
        ("prose", f"Post the alerts to {url} so the on-call channel sees them."),
        ("python", f'```python\nrequests.post("{url}", json={{"text": "hi"}}, timeout=5)\n```'),
    ]
