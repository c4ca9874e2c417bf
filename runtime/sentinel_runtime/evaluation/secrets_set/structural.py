"""Secrets with a structure rather than a provider prefix: webhook URLs, the Azure Storage
connection string, PEM private keys, JWTs and credentialed URLs."""

from __future__ import annotations

import json
import random

from .charsets import (
    ALNUM,
    B64URL,
    LOWER_ALNUM,
    UPPER_ALNUM,
    b64,
    b64url,
    digits,
    hexs,
    rand,
    rbytes,
    ruuid,
    url_password,
    wrap,
)
from .framing import url_framings
from .sample import PER_KIND, Sample
from .templates import SERVICES, WORDS


def webhook_samples(rng: random.Random) -> list[Sample]:
    out: list[Sample] = []
    for i in range(PER_KIND):
        team = "T" + rand(rng, UPPER_ALNUM, rng.choice((8, 10)))
        bot = "B" + rand(rng, UPPER_ALNUM, rng.choice((8, 10)))
        token = rand(rng, ALNUM, 24)
        url = f"https://hooks.slack.com/services/{team}/{bot}/{token}"
        name, text = url_framings(url, "SLACK_WEBHOOK_URL", rng)[i % 6]
        out.append(Sample(text, "slack-webhook", token, name))
    for i in range(PER_KIND):
        token = rand(rng, B64URL, 68)
        host = rng.choice(("discord.com", "discordapp.com", "ptb.discord.com"))
        url = f"https://{host}/api/webhooks/{digits(rng, 18)}/{token}"
        name, text = url_framings(url, "DISCORD_WEBHOOK_URL", rng)[i % 6]
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
        name, text = url_framings(url, "TEAMS_WEBHOOK_URL", rng)[i % 6]
        out.append(Sample(text, "teams-webhook", secret, name))
    return out


def azure_storage_samples(rng: random.Random) -> list[Sample]:
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


_RSA_PKCS1 = bytes.fromhex("308204a40201000282010100")
_EC_SEC1 = bytes.fromhex("30770201010420")
_EC_TAIL = bytes.fromhex("a00a06082a8648ce3d030107a144034200")
_PKCS8_RSA = bytes.fromhex("308204bd020100300d06092a864886f70d0101010500048204a7")
_PKCS8_ED25519 = bytes.fromhex("302e020100300506032b657004220420")
_PKCS8_ENCRYPTED = bytes.fromhex("3082050c304e06092a864886f70d01050d3041")


def _pem(rng: random.Random, i: int) -> tuple[str, list[str], list[str]]:
    """(label, header lines, body lines) of one private key."""
    variant = i % 6
    if variant == 0:
        return "RSA PRIVATE KEY", [], wrap(b64(_RSA_PKCS1 + rbytes(rng, 1180)), 64)
    if variant == 1:
        der = _EC_SEC1 + rbytes(rng, 32) + _EC_TAIL + b"\x04" + rbytes(rng, 64)
        return "EC PRIVATE KEY", [], wrap(b64(der), 64)
    if variant == 2:
        # OpenSSH's own format wraps at 70 columns.
        der = b"openssh-key-v1\x00\x00\x00\x00\x04none\x00\x00\x00\x04none" + rbytes(rng, 350)
        return "OPENSSH PRIVATE KEY", [], wrap(b64(der), 70)
    if variant == 3:
        return "PRIVATE KEY", [], wrap(b64(_PKCS8_RSA + rbytes(rng, 1191)), 64)
    if variant == 4:
        iv = hexs(rng, 32).upper()
        headers = ["Proc-Type: 4,ENCRYPTED", f"DEK-Info: AES-128-CBC,{iv}", ""]
        return "RSA PRIVATE KEY", headers, wrap(b64(rbytes(rng, 1192)), 64)
    if rng.random() < 0.5:
        return "PRIVATE KEY", [], wrap(b64(_PKCS8_ED25519 + rbytes(rng, 32)), 64)
    return "ENCRYPTED PRIVATE KEY", [], wrap(b64(_PKCS8_ENCRYPTED + rbytes(rng, 1230)), 64)


def pem_samples(rng: random.Random) -> list[Sample]:
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


def jwt_samples(rng: random.Random) -> list[Sample]:
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


def url_credential_samples(rng: random.Random) -> list[Sample]:
    out = []
    for i in range(PER_KIND + 4):
        password = url_password(rng)
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
