"""A labelled evaluation set for the ``secrets`` output scanner, written the way secrets show up
in real assistant answers: a sentence, an env file, a YAML/JSON/INI/TOML block, a shell export,
a ``curl`` header, a Kubernetes manifest, a Markdown table, each around one secret.

Positives carry ``kind`` (one id per provider token format or structural shape), ``secret`` (the
exact string that must not stay visible) and ``text``. Provider tokens are generated from each
provider's documented format (prefix, alphabet, length) with random bodies. The formats, the
framings that carry a token and the word lists live in ``data/secrets_formats.yaml``; this module
reads them and holds the code: charsets by name, the few formats that need code (a JSON body
inside a token), and the structural kinds and negatives. The formats were written from the
providers' own documentation, independently of the scanner's detector table, so the set checks
the detectors rather than mirroring them. Nothing is copied from a public secrets data set:
every body is drawn from ``random.Random(seed)``.

For a webhook the secret is the capability part of the URL (Slack's and Discord's token, Teams'
hex id and connector id, a Workflows ``sig``); for a PEM key it is the key body between BEGIN and
END (as it appears in the text, line breaks included); for a credentialed URL, a Docker/npm/pip
configuration or an assignment it is the value.

Negatives are benign texts that look like secrets to a careless detector: commit hashes,
checksums, UUIDs, image data URIs, pod names, image digests, URLs, public keys and certificates,
lock-file integrity hashes, code that reads a secret from elsewhere, prose about passwords, and
**placeholder credentials** (``postgres://user:password@localhost``, ``<password>``,
``changeme``, ``your-api-key-here``, ``${DB_PASSWORD}``), which we count as benign: redacting them
hides nothing and damages the answer. Negatives hold no e-mail address, phone number, card number
or IP address (the default policy's ``sensitive`` scanner redacts those on purpose); bare 12-digit
AWS account ids do appear, and the bench says which scanner changed a negative.

``generate(seed)`` is pure and deterministic; ``python -m sentinel_runtime.evaluation.secrets_set
--out FILE.jsonl`` writes the set.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import re
import string
import sys
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

BENIGN = "benign"
PER_KIND = 12
NEGATIVES_PER_FAMILY = 36

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = LOWER + DIGITS
UPPER_ALNUM = UPPER + DIGITS
HEX = "0123456789abcdef"
B64URL = ALNUM + "-_"
BASE32 = UPPER + "234567"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
# The names the data file's token formats use for an alphabet.
CHARSETS: dict[str, str] = {
    "UPPER": UPPER,
    "LOWER": LOWER,
    "LETTERS": string.ascii_letters,
    "DIGITS": DIGITS,
    "ALNUM": ALNUM,
    "LOWER_ALNUM": LOWER_ALNUM,
    "UPPER_ALNUM": UPPER_ALNUM,
    "HEX": HEX,
    "UPPER_HEX": HEX.upper(),
    "B64URL": B64URL,
    "BASE32": BASE32,
    "BECH32": BECH32,
}
# Long digit runs read as phone or card numbers to the ``sensitive`` scanner; real hex bodies
# have them rarely, and a set that is about secrets should not depend on that scanner.
_LONG_DIGIT_RUN = re.compile(r"\d{9,}")

DATA = Path(__file__).with_name("data") / "secrets_formats.yaml"
# Read once at import: the kinds and the negative families are module constants.
_DATA: dict[str, Any] = yaml.safe_load(DATA.read_text(encoding="utf-8"))
_LEXICONS: dict[str, tuple[str, ...]] = {
    name: tuple(words) for name, words in _DATA["lexicons"].items()
}


@dataclass(frozen=True)
class Sample:
    """One labelled answer. ``kind`` is a secret kind id, or ``benign`` for a negative;
    ``secret`` is empty for a negative; ``framing`` is how the text carries it (for a negative,
    its family)."""

    text: str
    kind: str
    secret: str
    framing: str

    @property
    def positive(self) -> bool:
        return self.kind != BENIGN

    def to_json(self) -> dict[str, str]:
        return asdict(self)


# --------------------------------------------------------------------------- random pieces


def rand(rng: random.Random, alphabet: str, n: int) -> str:
    while True:
        value = "".join(rng.choice(alphabet) for _ in range(n))
        if not _LONG_DIGIT_RUN.search(value):
            return value


def hexs(rng: random.Random, n: int) -> str:
    return rand(rng, HEX, n)


def digits(rng: random.Random, n: int) -> str:
    return rng.choice("123456789") + "".join(rng.choice(DIGITS) for _ in range(n - 1))


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def rbytes(rng: random.Random, n: int) -> bytes:
    return bytes(rng.getrandbits(8) for _ in range(n))


def rb64(rng: random.Random, n: int) -> str:
    """Standard base64 of random bytes, ``n`` characters before padding."""
    while True:
        value = b64(rbytes(rng, (n * 3 + 3) // 4))[:n]
        if not _LONG_DIGIT_RUN.search(value):
            return value


def ruuid(rng: random.Random) -> str:
    while True:
        value = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        if not _LONG_DIGIT_RUN.search(value.replace("-", "")):
            return value


WORDS = _LEXICONS["words"]
SYMBOLS = "!#$%&*+-=?@^_~"


def human_password(rng: random.Random) -> str:
    """A password the way people and password managers write them."""
    style = rng.randrange(4)
    if style == 0:
        a, b = rng.sample(WORDS, 2)
        return f"{a.capitalize()}{rng.choice(SYMBOLS)}{b.capitalize()}{rng.randint(10, 9999)}"
    if style == 1:
        word = rng.choice(WORDS)
        leet = word.translate(str.maketrans("aeios", "43105"))
        return f"{leet.capitalize()}{rng.choice(SYMBOLS)}{rand(rng, ALNUM, 6)}"
    if style == 2:
        return rand(rng, ALNUM + "!#%*-_", rng.randint(16, 28))
    parts = [rng.choice(WORDS) for _ in range(4)]
    return "-".join(parts) + str(rng.randint(1, 99))


# --------------------------------------------------------------------------- provider formats

Maker = Callable[[random.Random], str]


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


def _template(fmt: str) -> Maker:
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
        return _template(entry)
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


TOKEN_SPECS: tuple[TokenSpec, ...] = tuple(_token_spec(entry) for entry in _DATA["tokens"])

# --------------------------------------------------------------------------- token framings

SERVICES = _LEXICONS["services"]
COMMANDS = _LEXICONS["commands"]


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
        (name, _LEXICONS[options], False)
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
    name: _framing(entry) for name, entry in _DATA["token_framings"].items()
}


def _token_samples(rng: random.Random, spec: TokenSpec) -> list[Sample]:
    framings = list(TOKEN_FRAMINGS)
    rng.shuffle(framings)
    out = []
    for i in range(PER_KIND):
        secret = spec.make(rng, i)
        name = framings[i % len(framings)]
        text = TOKEN_FRAMINGS[name](rng, spec, rng.choice(spec.env), secret)
        out.append(Sample(text, spec.kind, secret, name))
    return out


# --------------------------------------------------------------------------- URL-shaped secrets


def _url_framings(url: str, var: str, rng: random.Random) -> list[tuple[str, str]]:
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


def _webhook_samples(rng: random.Random) -> list[Sample]:
    out: list[Sample] = []
    for i in range(PER_KIND):
        team = "T" + rand(rng, UPPER_ALNUM, rng.choice((8, 10)))
        bot = "B" + rand(rng, UPPER_ALNUM, rng.choice((8, 10)))
        token = rand(rng, ALNUM, 24)
        url = f"https://hooks.slack.com/services/{team}/{bot}/{token}"
        name, text = _url_framings(url, "SLACK_WEBHOOK_URL", rng)[i % 6]
        out.append(Sample(text, "slack-webhook", token, name))
    for i in range(PER_KIND):
        token = rand(rng, B64URL, 68)
        host = rng.choice(("discord.com", "discordapp.com", "ptb.discord.com"))
        url = f"https://{host}/api/webhooks/{digits(rng, 18)}/{token}"
        name, text = _url_framings(url, "DISCORD_WEBHOOK_URL", rng)[i % 6]
        out.append(Sample(text, "discord-webhook", token, name))
    for i in range(PER_KIND):
        if i % 2 == 0:
            secret = f"{hexs(rng, 32)}/{ruuid(rng)}"
            tail = f"/V2{rand(rng, B64URL, 45)}" if i % 4 == 0 else ""
            url = (
                f"https://{rng.choice(WORDS)}.webhook.office.com/webhookb2/"
                f"{ruuid(rng)}@{ruuid(rng)}/IncomingWebhook/{secret}{tail}"
            )
        else:
            secret = rand(rng, B64URL, 43)
            url = (
                f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/"
                f"{hexs(rng, 32)}/triggers/manual/paths/invoke?api-version=2016-06-01"
                f"&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={secret}"
            )
        name, text = _url_framings(url, "TEAMS_WEBHOOK_URL", rng)[i % 6]
        out.append(Sample(text, "teams-webhook", secret, name))
    return out


def _azure_storage_samples(rng: random.Random) -> list[Sample]:
    out = []
    for i in range(PER_KIND):
        key = b64(rbytes(rng, 64))
        account = rng.choice(WORDS) + rand(rng, LOWER_ALNUM, 6)
        conn = (
            f"DefaultEndpointsProtocol=https;AccountName={account};AccountKey={key};"
            "EndpointSuffix=core.windows.net"
        )
        framings = [
            ("env-file", f'```\nAZURE_STORAGE_CONNECTION_STRING="{conn}"\n```'),
            ("json", json.dumps({"Values": {"AzureWebJobsStorage": conn}}, indent=2)),
            ("prose", f"Use this connection string in the function app: {conn}"),
            ("csharp", f'```csharp\nvar client = new BlobServiceClient("{conn}");\n```'),
            ("yaml", f'```yaml\nstorage:\n  connection_string: "{conn}"\n```'),
            ("cli", f"```bash\naz storage blob list --connection-string '{conn}' -c logs\n```"),
        ]
        name, text = framings[i % len(framings)]
        out.append(Sample(text, "azure-storage-connection-string", key, name))
    return out


# --------------------------------------------------------------------------- structural kinds

_RSA_PKCS1 = bytes.fromhex("308204a40201000282010100")
_EC_SEC1 = bytes.fromhex("30770201010420")
_EC_TAIL = bytes.fromhex("a00a06082a8648ce3d030107a144034200")
_PKCS8_RSA = bytes.fromhex("308204bd020100300d06092a864886f70d0101010500048204a7")
_PKCS8_ED25519 = bytes.fromhex("302e020100300506032b657004220420")
_PKCS8_ENCRYPTED = bytes.fromhex("3082050c304e06092a864886f70d01050d3041")


def _wrap(body: str, width: int) -> list[str]:
    return [body[i : i + width] for i in range(0, len(body), width)]


def _pem(rng: random.Random, i: int) -> tuple[str, list[str], list[str]]:
    """(label, header lines, body lines) of one private key."""
    variant = i % 6
    if variant == 0:
        return "RSA PRIVATE KEY", [], _wrap(b64(_RSA_PKCS1 + rbytes(rng, 1180)), 64)
    if variant == 1:
        der = _EC_SEC1 + rbytes(rng, 32) + _EC_TAIL + b"\x04" + rbytes(rng, 64)
        return "EC PRIVATE KEY", [], _wrap(b64(der), 64)
    if variant == 2:
        # OpenSSH's own format wraps at 70 columns.
        der = b"openssh-key-v1\x00\x00\x00\x00\x04none\x00\x00\x00\x04none" + rbytes(rng, 350)
        return "OPENSSH PRIVATE KEY", [], _wrap(b64(der), 70)
    if variant == 3:
        return "PRIVATE KEY", [], _wrap(b64(_PKCS8_RSA + rbytes(rng, 1191)), 64)
    if variant == 4:
        iv = hexs(rng, 32).upper()
        headers = ["Proc-Type: 4,ENCRYPTED", f"DEK-Info: AES-128-CBC,{iv}", ""]
        return "RSA PRIVATE KEY", headers, _wrap(b64(rbytes(rng, 1192)), 64)
    if rng.random() < 0.5:
        return "PRIVATE KEY", [], _wrap(b64(_PKCS8_ED25519 + rbytes(rng, 32)), 64)
    return "ENCRYPTED PRIVATE KEY", [], _wrap(b64(_PKCS8_ENCRYPTED + rbytes(rng, 1230)), 64)


def _pem_samples(rng: random.Random) -> list[Sample]:
    out = []
    for i in range(PER_KIND * 2):
        label, headers, body = _pem(rng, i)
        begin, end = f"-----BEGIN {label}-----", f"-----END {label}-----"
        style = i % 4
        if style == 0:
            secret = "\n".join(body)
            block = "\n".join([begin, *headers, secret, end])
            text = f"Save this as `deploy_key` and `chmod 600` it:\n\n```\n{block}\n```"
            framing = "code-fence"
        elif style == 1:
            secret = "\n".join(body)
            block = "\n".join([begin, *headers, secret, end])
            text = f"The key in the repository is:\n{block}\nDelete it from the history."
            framing = "prose"
        elif style == 2:
            secret = "\n    ".join(body)
            lines = "\n    ".join([begin, *headers, secret, end])
            text = f"```yaml\ntls:\n  private_key: |\n    {lines}\n```"
            framing = "yaml-block"
        else:
            secret = "\\n".join(body)
            block = "\\n".join([begin, *headers, secret, end]) + "\\n"
            text = (
                '```json\n{\n  "type": "service_account",\n'
                f'  "project_id": "{rng.choice(WORDS)}-{rand(rng, LOWER_ALNUM, 6)}",\n'
                f'  "private_key_id": "{hexs(rng, 40)}",\n'
                f'  "private_key": "{block}"\n}}\n```'
            )
            framing = "json-escaped"
        out.append(Sample(text, "private-key-pem", secret, framing))
    return out


def _jwt(rng: random.Random, i: int) -> str:
    now = rng.randint(1_700_000_000, 1_760_000_000)
    variant = i % 4
    if variant == 0:
        header = {"alg": "HS256", "typ": "JWT"}
        payload: dict[str, object] = {
            "sub": ruuid(rng),
            "name": rng.choice(WORDS).capitalize(),
            "role": rng.choice(("admin", "editor", "viewer")),
            "iat": now,
            "exp": now + 3600,
        }
        signature = rbytes(rng, 32)
    elif variant == 1:
        header = {"alg": "RS256", "typ": "JWT", "kid": rand(rng, B64URL, 43)}
        payload = {
            "iss": f"https://auth.{rng.choice(WORDS)}.example",
            "aud": "api",
            "scope": "read write",
            "sub": ruuid(rng),
            "iat": now,
            "exp": now + 900,
        }
        signature = rbytes(rng, 256)
    elif variant == 2:
        # A bound Kubernetes service-account token (projected volume).
        header = {"alg": "RS256", "kid": rand(rng, B64URL, 43)}
        ns, sa = rng.choice(("default", "monitoring", "ci")), rng.choice(("default", "deployer"))
        payload = {
            "aud": ["https://kubernetes.default.svc.cluster.local"],
            "exp": now + 31_536_000,
            "iat": now,
            "iss": "https://kubernetes.default.svc.cluster.local",
            "kubernetes.io": {
                "namespace": ns,
                "pod": {
                    "name": f"{rng.choice(SERVICES)}-{rand(rng, LOWER_ALNUM, 5)}",
                    "uid": ruuid(rng),
                },
                "serviceaccount": {"name": sa, "uid": ruuid(rng)},
                "warnafter": now + 3607,
            },
            "nbf": now,
            "sub": f"system:serviceaccount:{ns}:{sa}",
        }
        signature = rbytes(rng, 256)
    else:
        header = {"alg": "ES256", "typ": "JWT"}
        payload = {"sub": rand(rng, ALNUM, 12), "tenant": rng.choice(WORDS), "iat": now}
        signature = rbytes(rng, 64)

    def seg(obj: object) -> str:
        return b64url(json.dumps(obj, separators=(",", ":")).encode())

    return f"{seg(header)}.{seg(payload)}.{b64url(signature)}"


def _jwt_samples(rng: random.Random) -> list[Sample]:
    out = []
    for i in range(PER_KIND + 4):
        token = _jwt(rng, i)
        framings = [
            (
                "curl-bearer",
                f'```bash\ncurl -H "Authorization: Bearer {token}" '
                "https://api.internal.example/v1/me\n```",
            ),
            ("prose", f"The session token in that request is {token}; it is still valid."),
            ("kubeconfig", f"```yaml\nusers:\n- name: ci\n  user:\n    token: {token}\n```"),
            (
                "json",
                json.dumps(
                    {"access_token": token, "token_type": "Bearer", "expires_in": 3600}, indent=2
                ),
            ),
            ("cookie", f"Cookie: session={token}; Path=/; HttpOnly"),
            ("header-bare", f"Send it as `Authorization: Bearer {token}` on every call."),
        ]
        name, text = framings[i % len(framings)]
        out.append(Sample(text, "jwt", token, name))
    return out


def _url_password(rng: random.Random) -> str:
    return (
        rand(rng, ALNUM, rng.randint(14, 24))
        + rng.choice(("", "%40", "%21", "-"))
        + rand(rng, ALNUM, 4)
    )


def _url_credential_samples(rng: random.Random) -> list[Sample]:
    out = []
    for i in range(PER_KIND + 4):
        password = _url_password(rng)
        user = rng.choice(("app", "svc_reports", "admin", "deploy", "readonly", "analytics"))
        db = rng.choice(SERVICES)
        variant = i % 8
        url = [
            f"postgres://{user}:{password}@db.{db}.internal:5432/{db}",
            f"postgresql://{user}:{password}@{db}-primary.prod.svc:5432/{db}?sslmode=require",
            f"mongodb+srv://{user}:{password}@cluster0.{rand(rng, LOWER_ALNUM, 5)}.mongodb.net/"
            f"{db}?retryWrites=true&w=majority",
            f"redis://default:{password}@cache.{db}.internal:6379/0",
            f"amqp://{user}:{password}@rabbitmq.{db}.internal:5672/%2F",
            f"https://{user}:{password}@git.{db}.example/platform/infra.git",
            f"mysql://{user}:{password}@mysql.{db}.internal:3306/{db}",
            f"rediss://:{password}@redis.{db}.cache.example:6380",
        ][variant]
        framings = [
            ("env-file", f"```\nDATABASE_URL={url}\n```"),
            ("prose", f"Connect with `{url}` from the bastion host."),
            ("yaml", f"```yaml\nspring:\n  datasource:\n    url: {url}\n```"),
            ("python", f'```python\nengine = create_engine("{url}")\n```'),
            ("shell", f"```bash\npsql '{url}' -c 'select 1'\n```"),
            ("json", json.dumps({"connection": url}, indent=2)),
        ]
        name, text = framings[i % len(framings)]
        out.append(Sample(text, "url-credentials", password, name))
    return out


REGISTRIES = _LEXICONS["registries"]


def _docker_config_samples(rng: random.Random) -> list[Sample]:
    out = []
    for i in range(PER_KIND):
        user = rng.choice(("deploy", "ci-bot", "acme", "builder", "_json_key"))
        auth = b64(f"{user}:{human_password(rng)}{rand(rng, ALNUM, 8)}".encode())
        registry = REGISTRIES[i % len(REGISTRIES)]
        config = {"auths": {registry: {"auth": auth}}}
        if i % 3 == 0:
            config["credsStore"] = "desktop"  # type: ignore[assignment]
        style = i % 3
        if style == 0:
            block = json.dumps(config, indent=2 if i % 2 else 4)
            intro = rng.choice(
                (
                    "Your `~/.docker/config.json` should contain:",
                    "After `docker login` the file `~/.docker/config.json` looks like this:",
                    "Mount this config into the build container:",
                )
            )
            text, framing = f"{intro}\n\n```json\n{block}\n```", "config-json"
        elif style == 1:
            inline = json.dumps(config, separators=(",", ":"))
            text = (
                "```yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: regcred\n"
                "type: kubernetes.io/dockerconfigjson\nstringData:\n"
                f"  .dockerconfigjson: '{inline}'\n```"
            )
            framing = "k8s-dockerconfigjson"
        else:
            text = (
                f'The `auth` field for {registry} in your Docker config is "{auth}"; '
                "it is only base64, so anyone can read the password from it."
            )
            framing = "prose"
        out.append(Sample(text, "docker-config-auth", auth, framing))
    return out


NPMRC_FORMS = ("authtoken-npmjs", "authtoken-private", "auth-basic", "password")


def _npmrc_samples(rng: random.Random) -> list[Sample]:
    out = []
    for i in range(PER_KIND):
        variant = i % 4
        if variant == 0:
            secret = ruuid(rng)  # npm's legacy tokens are UUIDs
            line = f"//registry.npmjs.org/:_authToken={secret}"
        elif variant == 1:
            secret = rand(rng, B64URL, rng.choice((40, 52, 64)))
            line = f"//npm.{rng.choice(WORDS)}.example/repository/npm-private/:_authToken={secret}"
        elif variant == 2:
            secret = b64(f"{rng.choice(('deploy', 'ci'))}:{human_password(rng)}".encode())
            line = f"registry=https://nexus.{rng.choice(WORDS)}.example/repository/npm/\n_auth={secret}"
        else:
            secret = b64(human_password(rng).encode())
            line = (
                f"//artifactory.{rng.choice(WORDS)}.example/api/npm/npm/:username=ci\n"
                f"//artifactory.{rng.choice(WORDS)}.example/api/npm/npm/:_password={secret}"
            )
        intro = rng.choice(
            (
                "Put this in the project's `.npmrc`:",
                "Your `~/.npmrc` needs these lines:",
                "Add to `.npmrc` (and never commit it):",
            )
        )
        out.append(
            Sample(
                f"{intro}\n\n```ini\n{line}\nalways-auth=true\n```",
                "npmrc-auth",
                secret,
                NPMRC_FORMS[variant],
            )
        )
    return out


def _pip_samples(rng: random.Random) -> list[Sample]:
    out = []
    for i in range(PER_KIND):
        variant = i % 5
        # A password inside a URL is URL-safe; .pypirc and poetry take any.
        secret = _url_password(rng) if variant in (0, 1, 3) else human_password(rng)
        host = f"pypi.{rng.choice(WORDS)}.example"
        if variant == 0:
            text = (
                "Configure pip in `~/.config/pip/pip.conf`:\n\n```ini\n[global]\n"
                f"index-url = https://ci:{secret}@{host}/simple\n```"
            )
        elif variant == 1:
            text = f"```bash\nexport PIP_EXTRA_INDEX_URL=https://__token__:{secret}@{host}/simple/\n```"
        elif variant == 2:
            text = (
                "Your `~/.pypirc`:\n\n```ini\n[distutils]\nindex-servers = internal\n\n"
                f"[internal]\nrepository = https://{host}/\nusername = ci\npassword = {secret}\n```"
            )
        elif variant == 3:
            text = f"In `requirements.txt`:\n\n```\n--extra-index-url https://deploy:{secret}@{host}/simple\nrequests==2.32.3\n```"
        else:
            text = (
                "```bash\npoetry config http-basic.internal ci "
                f"{secret}\n# or\nexport POETRY_HTTP_BASIC_INTERNAL_PASSWORD='{secret}'\n```"
            )
        out.append(Sample(text, "pip-config", secret, f"pip-{variant}"))
    return out


def _password_samples(rng: random.Random) -> list[Sample]:
    out = []
    for i in range(PER_KIND + 6):
        p = human_password(rng)
        svc = rng.choice(SERVICES)
        framings = [
            ("env", f"```\nPASSWORD={p}\n```"),
            ("env-quoted", f'Set the database password in `.env`:\n\n```\nDB_PASSWORD="{p}"\n```'),
            ("yaml", f'```yaml\ndatabase:\n  user: {svc}\n  password: "{p}"\n```'),
            ("json", json.dumps({"username": svc, "password": p}, indent=2)),
            ("ini", f"```ini\n[database]\nuser = {svc}\npassword = {p}\n```"),
            ("prose", f"The admin password is {p} — change it after your first login."),
            ("prose-2", f"For the staging box, log in as root; the password is {p}."),
            (
                "compose",
                f"```yaml\nservices:\n  db:\n    image: postgres:16\n    environment:\n"
                f"      POSTGRES_PASSWORD: {p}\n```",
            ),
            (
                "python",
                f"```python\nDATABASES = {{'default': {{'USER': '{svc}', "
                f"'PASSWORD': '{p}'}}}}\n```",
            ),
            ("dotnet", f"Server=sql.{svc}.internal;Database={svc};User Id=sa;Password={p};"),
            ("cli", f"```bash\nmysql -u root --password='{p}' {svc}\n```"),
            ("k8s", f"```yaml\nstringData:\n  MYSQL_ROOT_PASSWORD: '{p}'\n```"),
        ]
        name, text = framings[i % len(framings)]
        out.append(Sample(text, "password-assignment", p, name))
    return out


def _secret_assignment_samples(rng: random.Random) -> list[Sample]:
    out = []
    for i in range(PER_KIND + 4):
        variant = i % 8
        if variant == 0:
            s = rand(rng, ALNUM + "!@#%^*(-_=+)", 50)
            text = f"```python\n# settings.py\nSECRET_KEY = '{s}'\nDEBUG = False\n```"
        elif variant == 1:
            s = rand(rng, ALNUM + "~._-", 40)
            text = f"```yaml\noauth:\n  client_id: {ruuid(rng)}\n  client_secret: {s}\n```"
        elif variant == 2:
            s = rand(rng, ALNUM, 32)
            text = f"```ini\n[weather]\napi_key = {s}\n```"
        elif variant == 3:
            s = rand(rng, B64URL, 40)
            text = f"```yaml\nregistry:\n  token: {s}\n```"
        elif variant == 4:
            s = rb64(rng, 43) + "="
            text = f"```\nNEXTAUTH_SECRET={s}\n```"
        elif variant == 5:
            s = hexs(rng, 48)
            text = f'```python\napp.secret_key = "{s}"\n```'
        elif variant == 6:
            s = rand(rng, ALNUM, 36)
            text = f"```\nJWT_SECRET={s}\nJWT_TTL=3600\n```"
        else:
            s = rand(rng, ALNUM, 32)
            text = f"The API key for the weather service is {s}, pass it as `?appid=`."
        out.append(Sample(text, "secret-assignment", s, f"secret-{variant}"))
    return out


def _hex_key_samples(rng: random.Random) -> list[Sample]:
    out = []
    for i in range(PER_KIND):
        variant = i % 4
        if variant == 0:
            s = hexs(rng, 64)
            text = f"```\nENCRYPTION_KEY={s}\n```"
        elif variant == 1:
            s = hexs(rng, 32)
            text = f"```yaml\ncrypto:\n  aes_key: {s}\n```"
        elif variant == 2:
            s = hexs(rng, 64)
            text = json.dumps({"hmac_key": s, "algorithm": "sha256"}, indent=2)
        else:
            s = hexs(rng, 64).upper()
            text = f"Set `MASTER_KEY` to {s} on every node before the restore."
        out.append(Sample(text, "hex-key-assignment", s, f"hex-{variant}"))
    return out


STRUCTURAL_KINDS = (
    "private-key-pem",
    "jwt",
    "url-credentials",
    "docker-config-auth",
    "npmrc-auth",
    "pip-config",
    "password-assignment",
    "secret-assignment",
    "hex-key-assignment",
)
URL_KINDS = ("azure-storage-connection-string", "slack-webhook", "discord-webhook", "teams-webhook")
KINDS: tuple[str, ...] = tuple(spec.kind for spec in TOKEN_SPECS) + URL_KINDS + STRUCTURAL_KINDS


# --------------------------------------------------------------------------- negatives

SENTENCES = _LEXICONS["sentences"]
FILES = _LEXICONS["files"]


def _neg_commit(rng: random.Random, i: int) -> str:
    full, short = hexs(rng, 40), hexs(rng, 7)
    v = i % 4
    if v == 0:
        return f"The regression came in with commit {full}; reverting it fixes the test."
    if v == 1:
        lines = [f"{hexs(rng, 7)} {rng.choice(SENTENCES)[:-1].lower()}" for _ in range(5)]
        return "```\n$ git log --oneline -5\n" + "\n".join(lines) + "\n```"
    if v == 2:
        return f"```bash\ngit cherry-pick {full}\ngit push origin release/1.4\n```"
    return f"Fixed in {short} (merged as {full}), released in v2.3.1."


def _neg_checksum(rng: random.Random, i: int) -> str:
    v = i % 4
    if v == 0:
        return (
            "```\n$ sha256sum "
            + " ".join(FILES[:2])
            + "\n"
            + "\n".join(f"{hexs(rng, 64)}  {f}" for f in FILES[:2])
            + "\n```"
        )
    if v == 1:
        return (
            f"```\n$ md5sum {FILES[i % len(FILES)]}\n{hexs(rng, 32)}  {FILES[i % len(FILES)]}\n```"
        )
    if v == 2:
        return f"Verify the download: the SHA-256 checksum should be {hexs(rng, 64)}."
    return (
        "```\nrequests==2.32.3 \\\n"
        f"    --hash=sha256:{hexs(rng, 64)} \\\n    --hash=sha256:{hexs(rng, 64)}\n```"
    )


def _neg_uuid(rng: random.Random, i: int) -> str:
    v = i % 4
    if v == 0:
        return f"The failing request has id {ruuid(rng)}; search the logs for it."
    if v == 1:
        return (
            f'```yaml\nmetadata:\n  name: web\n  uid: {ruuid(rng)}\n  resourceVersion: "48213"\n```'
        )
    if v == 2:
        return json.dumps(
            {"tenant_id": ruuid(rng), "project_id": ruuid(rng), "plan": "team"}, indent=2
        )
    return f"Subscription `{ruuid(rng)}` holds the staging resource group."


def _neg_data_uri(rng: random.Random, i: int) -> str:
    kind, magic = [
        ("png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"),
        ("gif", b"GIF89a"),
        ("jpeg", b"\xff\xd8\xff\xe0\x00\x10JFIF\x00"),
    ][i % 3]
    payload = b64(magic + rbytes(rng, rng.randint(120, 420)))
    if i % 2:
        return (
            f"Inline the icon so it works offline:\n\n![logo](data:image/{kind};base64,{payload})"
        )
    return f'```html\n<img alt="status" src="data:image/{kind};base64,{payload}">\n```'


def _pod(rng: random.Random) -> str:
    alphabet = "bcdfghjklmnpqrstvwxz2456789"  # Kubernetes' safe-encode alphabet
    return f"{rng.choice(SERVICES)}-{rand(rng, alphabet, 10)}-{rand(rng, alphabet, 5)}"


def _neg_pods(rng: random.Random, i: int) -> str:
    if i % 2:
        return f"The pod `{_pod(rng)}` is in CrashLoopBackOff; check its previous logs."
    rows = "\n".join(
        f"{_pod(rng):<36}1/1     Running   {rng.randint(0, 3)}          {rng.randint(2, 59)}m"
        for _ in range(4)
    )
    head = f"{'NAME':<36}READY   STATUS    RESTARTS   AGE"
    return f"```\n$ kubectl get pods\n{head}\n{rows}\n```"


def _neg_digest(rng: random.Random, i: int) -> str:
    d = hexs(rng, 64)
    v = i % 3
    if v == 0:
        return f"Pin the image by digest: `ghcr.io/acme/{rng.choice(SERVICES)}@sha256:{d}`."
    if v == 1:
        return (
            f"```\nlatest: Pulling from library/nginx\nDigest: sha256:{d}\n"
            "Status: Downloaded newer image for nginx:1.27\n```"
        )
    return (
        "```yaml\ncontainers:\n  - name: app\n"
        f"    image: registry.gitlab.com/acme/app@sha256:{d}\n```"
    )


def _neg_url(rng: random.Random, i: int) -> str:
    w = rng.choice(WORDS)
    return rng.choice(
        (
            f"See https://docs.{w}.example/guides/{rng.choice(SERVICES)}"
            f"?page={rng.randint(2, 9)}#setup for the steps.",
            f"The chart lives at https://charts.{w}.example/stable and the source at "
            f"https://github.com/acme/{w}.",
            f"Open https://grafana.{w}.example/d/{rand(rng, LOWER_ALNUM, 9)}/latency"
            "?orgId=1&from=now-6h to see it.",
            f"```bash\ncurl -sSL https://get.{w}.example/install.sh | bash\n```",
        )
    )


SECRET_VARS = _LEXICONS["secret_vars"]
PLACEHOLDERS = _LEXICONS["placeholders"]
TOKEN_PLACEHOLDERS = _LEXICONS["token_placeholders"]


def _neg_placeholder(rng: random.Random, i: int) -> str:
    """Credentials that only show where a real one goes: counted as benign (module doc)."""
    pw, tok = rng.choice(PLACEHOLDERS), rng.choice(TOKEN_PLACEHOLDERS)
    db, port = rng.choice(SERVICES), rng.choice((5432, 3306, 6379, 5672, 27017))
    user = rng.choice(("user", "USER", "<username>", "admin", "guest", "postgres", "root"))
    host = rng.choice(("localhost", "db", "<host>", "HOST", "postgres", "mydb"))
    scheme = rng.choice(("postgres", "postgresql", "mysql", "redis", "amqp", "mongodb"))
    var = rng.choice(SECRET_VARS)
    v = i % 8
    if v == 0:
        return f"```\nDATABASE_URL={scheme}://{user}:{pw}@{host}:{port}/{db}\n```"
    if v == 1:
        return (
            f"Replace `<password>` in `mongodb+srv://<username>:<password>@<cluster-host>/{db}` "
            "with your own before connecting."
        )
    if v == 2:
        return f"The default login for local testing is {scheme}://{user}:{pw}@{host}:{port}/."
    if v == 3:
        return f"```\n{var}={tok}\nLOG_LEVEL=debug\n```"
    if v == 4:
        return f"```\n{var}={pw}\nADMIN_PASSWORD={rng.choice(PLACEHOLDERS)}\n```"
    if v == 5:
        return f'```yaml\n{db}:\n  token: "{tok}"\n  password: "{pw}"\n```'
    if v == 6:
        return f"Set `{var}={tok}` (your own value) before running `{rng.choice(COMMANDS)}`."
    return f"Use `https://{user}:{tok}@<git-host>/acme/{db}.git` with your own token."


def _neg_code(rng: random.Random, i: int) -> str:
    var = rng.choice(SECRET_VARS)
    low = var.lower()
    name = rng.choice(("password", "token", "api_key", "secret", "client_secret", "secret_key"))
    return (
        f'```python\n{name} = os.environ["{var}"]\n```',
        f"```python\n{name} = get_{name}()\n"
        f'headers = {{"Authorization": f"Bearer {{{name}}}"}}\n```',
        f"```python\nclient = Client({name}=settings.{var})\n```",
        f"```yaml\nenv:\n  - name: {var}\n    valueFrom:\n      secretKeyRef:\n"
        f"        name: {rng.choice(SERVICES)}\n        key: {name}\n```",
        f'```bash\nexport {var}="${{{var}:?set it first}}"\n```',
        f"```javascript\nconst {name} = process.env.{var};\n```",
        f'```go\n{name} := os.Getenv("{var}")\n```',
        f"```yaml\nsteps:\n  - run: {rng.choice(COMMANDS)}\n    env:\n"
        f"      {var}: ${{{{ secrets.{var} }}}}\n```",
        f'```hcl\n{name} = var.{low}\ntoken = data.vault_generic_secret.ci.data["{name}"]\n```',
        f'```python\n{name} = load_secret("{rng.choice(SERVICES)}/{low}")\n```',
        f"```bash\nvault kv get -field={name} secret/data/prod/{rng.choice(SERVICES)}\n```",
        f'```java\nString {name} = System.getenv("{var}");\n```',
    )[i % 12]


PROSE_ABOUT_SECRETS = _LEXICONS["prose_about_secrets"]


def _neg_prose(rng: random.Random, i: int) -> str:
    picked = rng.sample(PROSE_ABOUT_SECRETS, k=rng.randint(1, 3))
    text = " ".join(
        t.format(n=rng.randint(10, 16), d=rng.choice((30, 60, 90)), svc=rng.choice(SERVICES))
        for t in picked
    )
    return text if rng.random() < 0.5 else f"{text} {rng.choice(SENTENCES)}"


def _neg_config(rng: random.Random, i: int) -> str:
    return (
        f"```yaml\nauth:\n  token_expiry: {rng.choice((900, 3600, 86400))}\n"
        "  refresh_enabled: true\n```",
        f"```yaml\npassword_min_length: {rng.randint(10, 16)}\npassword_require_symbol: true\n```",
        f'```json\n{{"max_tokens": {rng.choice((256, 1024, 4096))}, "temperature": 0.2}}\n```',
        f"```ini\n[security]\nsecret_rotation_days = {rng.choice((30, 60, 90))}\n"
        f"key_length = {rng.choice((128, 256))}\n```",
        f"```\nTOKEN_TTL_SECONDS={rng.choice((600, 3600))}\nPASSWORD_HASHER=argon2\n```",
        "```yaml\napi_key_header: X-Api-Key\n"
        f"api_key_required: {rng.choice(('true', 'false'))}\n```",
    )[i % 6] + ("" if rng.random() < 0.5 else "\n\n" + rng.choice(SENTENCES))


def _neg_semver(rng: random.Random, i: int) -> str:
    a, b, c = rng.randint(0, 3), rng.randint(0, 30), rng.randint(0, 20)
    return rng.choice(
        (
            f"Upgrade from v{a}.{b}.{c} to v{a}.{b + 1}.0; the "
            f"2.0.0-rc.1+build.{rng.randint(1, 99)} tag is a release candidate.",
            f"```\nkubernetes==v1.{rng.randint(24, 31)}.{c}\nhelm==3.{b}.{c}\n```",
            f"Pinned `fastapi>={a}.{b}.{c},<{a + 1}.0.0` in the lockfile.",
        )
    )


def _neg_arn(rng: random.Random, i: int) -> str:
    account = digits(rng, 12)
    return rng.choice(
        (
            f"Attach the policy to `arn:aws:iam::{account}:role/{rng.choice(SERVICES)}-deployer`.",
            f"The bucket ARN is arn:aws:s3:::{rng.choice(WORDS)}-artifacts and the account id "
            f"is {account}.",
            f'```json\n{{"Effect": "Allow", "Action": "sqs:SendMessage", '
            f'"Resource": "arn:aws:sqs:eu-west-1:{account}:{rng.choice(SERVICES)}"}}\n```',
        )
    )


def _neg_english(rng: random.Random, i: int) -> str:
    return " ".join(rng.sample(SENTENCES, k=rng.randint(2, 5)))


def _neg_json(rng: random.Random, i: int) -> str:
    body = {
        "service": rng.choice(SERVICES),
        "replicas": rng.randint(1, 6),
        "image": f"ghcr.io/acme/{rng.choice(SERVICES)}:1.{rng.randint(0, 9)}.{rng.randint(0, 9)}",
        "labels": {"team": rng.choice(WORDS), "tier": rng.choice(("web", "worker"))},
        "healthy": rng.random() < 0.8,
    }
    return "```json\n" + json.dumps(body, indent=2) + "\n```"


def _neg_public_keys(rng: random.Random, i: int) -> str:
    v = i % 3
    if v == 0:
        body = "\n".join(_wrap(b64(bytes.fromhex("3082010a0282010100") + rbytes(rng, 260)), 64))
        return (
            "Here is the public key to register:\n\n```\n-----BEGIN PUBLIC KEY-----\n"
            f"{body}\n-----END PUBLIC KEY-----\n```"
        )
    if v == 1:
        body = "\n".join(_wrap(b64(bytes.fromhex("308203") + rbytes(rng, 800)), 64))
        return (
            "The CA certificate:\n\n```\n-----BEGIN CERTIFICATE-----\n"
            f"{body}\n-----END CERTIFICATE-----\n```"
        )
    key = b64(b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20" + rbytes(rng, 32))
    return f"Add this deploy key to the repository: `ssh-ed25519 {key} ci-deploy`"


def _neg_integrity(rng: random.Random, i: int) -> str:
    v = i % 2
    if v == 0:
        return (
            '```json\n"node_modules/lodash": {\n  "version": "4.17.21",\n'
            f'  "integrity": "sha512-{b64(rbytes(rng, 64))}"\n}}\n```'
        )
    return (
        f'```toml\n[[package]]\nname = "idna"\nfiles = [{{hash = "sha256:{hexs(rng, 64)}"}}]\n```'
    )


def _neg_logs(rng: random.Random, i: int) -> str:
    return (
        f'```\nlevel=info msg="request done" trace_id={hexs(rng, 32)} span_id={hexs(rng, 16)} '
        f"status=200 duration_ms={rng.randint(3, 900)}\n```"
    )


def _neg_identifiers(rng: random.Random, i: int) -> str:
    a, b = (w.capitalize() for w in rng.sample(WORDS, 2))
    return rng.choice(
        (
            f"The test `Test{a}TokenRefreshReturnsUnauthorizedWhen{b}SessionExpired` is flaky.",
            f"Colours: primary `#{hexs(rng, 6)}`, accent `#{hexs(rng, 6)}`.",
            f"Edit `src/main/java/com/{a.lower()}/security/PasswordPolicyValidator.java` "
            f"line {rng.randint(10, 400)}.",
            f"The build cache key is `linux-node20-{hexs(rng, 12)}` for this branch.",
            f"Run `python -m {b.lower()}_secrets_rotation.cli --dry-run --all-namespaces` first.",
        )
    )


NEGATIVE_FAMILIES: dict[str, Callable[[random.Random, int], str]] = {
    "git-commit": _neg_commit,
    "checksum": _neg_checksum,
    "uuid": _neg_uuid,
    "data-uri": _neg_data_uri,
    "k8s-names": _neg_pods,
    "image-digest": _neg_digest,
    "url": _neg_url,
    "placeholder-credentials": _neg_placeholder,
    "code-without-secrets": _neg_code,
    "prose-about-secrets": _neg_prose,
    "config-numbers": _neg_config,
    "semver": _neg_semver,
    "aws-arn": _neg_arn,
    "english": _neg_english,
    "json": _neg_json,
    "public-keys": _neg_public_keys,
    "lockfile-integrity": _neg_integrity,
    "log-ids": _neg_logs,
    "identifiers": _neg_identifiers,
}


# --------------------------------------------------------------------------- the set


def positives(seed: int = 0) -> list[Sample]:
    rng = random.Random(f"secrets-set/positives/{seed}")
    out: list[Sample] = []
    for spec in TOKEN_SPECS:
        out += _token_samples(rng, spec)
    out += _azure_storage_samples(rng)
    out += _webhook_samples(rng)
    for make in (
        _pem_samples,
        _jwt_samples,
        _url_credential_samples,
        _docker_config_samples,
        _npmrc_samples,
        _pip_samples,
        _password_samples,
        _secret_assignment_samples,
        _hex_key_samples,
    ):
        out += make(rng)
    return out


def negatives(seed: int = 0) -> list[Sample]:
    rng = random.Random(f"secrets-set/negatives/{seed}")
    return [
        Sample(make(rng, i), BENIGN, "", family)
        for family, make in NEGATIVE_FAMILIES.items()
        for i in range(NEGATIVES_PER_FAMILY)
    ]


def generate(seed: int = 0) -> list[Sample]:
    """Every positive, then every negative; the same seed gives the same list."""
    return positives(seed) + negatives(seed)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="JSON Lines file to write")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    samples = generate(args.seed)
    with args.out.open("w", encoding="utf-8") as handle:
        for sample in samples:
            handle.write(json.dumps(sample.to_json(), ensure_ascii=False) + "\n")
    n_pos = sum(s.positive for s in samples)
    print(
        f"wrote {len(samples)} samples ({n_pos} positive, {len(samples) - n_pos} negative) "
        f"to {args.out}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
