"""The benign families: texts that look like secrets to a careless detector (hashes, ids, data
URIs, public keys, placeholder credentials, code that reads a secret from elsewhere...)."""

from __future__ import annotations

import json
import random
from collections.abc import Callable

from .charsets import LOWER_ALNUM, b64, digits, hexs, rand, rbytes, ruuid, wrap
from .templates import LEXICONS, SERVICES, WORDS

SENTENCES = LEXICONS["sentences"]
COMMANDS = LEXICONS["commands"]
FILES = LEXICONS["files"]


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


SECRET_VARS = LEXICONS["secret_vars"]
PLACEHOLDERS = LEXICONS["placeholders"]
TOKEN_PLACEHOLDERS = LEXICONS["token_placeholders"]


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


PROSE_ABOUT_SECRETS = LEXICONS["prose_about_secrets"]


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
        body = "\n".join(wrap(b64(bytes.fromhex("3082010a0282010100") + rbytes(rng, 260)), 64))
        return (
            "Here is the public key to register:\n\n```\n-----BEGIN PUBLIC KEY-----\n"
            f"{body}\n-----END PUBLIC KEY-----\n```"
        )
    if v == 1:
        body = "\n".join(wrap(b64(bytes.fromhex("308203") + rbytes(rng, 800)), 64))
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
