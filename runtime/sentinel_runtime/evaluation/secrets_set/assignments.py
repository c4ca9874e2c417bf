"""Secrets carried by a configuration file or an assignment: Docker, npm and pip configuration,
passwords, generic secrets and hex keys."""

from __future__ import annotations

import json
import random

from .charsets import ALNUM, B64URL, b64, hexs, rand, rb64, ruuid, url_password
from .sample import PER_KIND, Sample
from .templates import LEXICONS, SERVICES, WORDS

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


REGISTRIES = LEXICONS["registries"]


def docker_config_samples(rng: random.Random) -> list[Sample]:
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


def npmrc_samples(rng: random.Random) -> list[Sample]:
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


def pip_samples(rng: random.Random) -> list[Sample]:
    out = []
    for i in range(PER_KIND):
        variant = i % 5
        # A password inside a URL is URL-safe; .pypirc and poetry take any.
        secret = url_password(rng) if variant in (0, 1, 3) else human_password(rng)
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


def password_samples(rng: random.Random) -> list[Sample]:
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


def secret_assignment_samples(rng: random.Random) -> list[Sample]:
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


def hex_key_samples(rng: random.Random) -> list[Sample]:
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
