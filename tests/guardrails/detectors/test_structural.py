"""PEM blocks, JWTs and URL credentials: found whole, and only where they are."""

from __future__ import annotations

import base64
import json
import random

import pytest

from sentinel_runtime.guardrails.detectors import basic_auth, jwt, private_keys, url_credentials


def pem(label: str = "RSA PRIVATE KEY", size: int = 600, headers: str = "") -> str:
    body = base64.b64encode(random.Random(size).randbytes(size)).decode()
    lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    return f"-----BEGIN {label}-----\n{headers}{lines}\n-----END {label}-----"


def spans(found: object, text: str) -> list[str]:
    return [text[d.start : d.end] for d in found]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "block",
    [
        pem(),
        pem("EC PRIVATE KEY", 120),
        pem("OPENSSH PRIVATE KEY", 400),
        pem("PRIVATE KEY", 1200),
        pem("ENCRYPTED PRIVATE KEY", 700),
        pem("PGP PRIVATE KEY BLOCK", 300),
        pem(headers="Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0A1B2C3D4E5F6071\n\n"),
    ],
)
def test_a_block_is_found_from_begin_to_end(block: str) -> None:
    text = f"Here is the key:\n\n{block}\n\nKeep it safe."
    assert spans(private_keys.find(text), text) == [block]


def test_a_body_whose_begin_line_was_redacted_is_found_up_to_its_end_line() -> None:
    block = pem()
    text = "Key:\n" + block.replace("-----BEGIN RSA PRIVATE KEY-----", "[REDACTED]") + "\nok"
    found = spans(private_keys.find(text), text)
    assert found == [block.split("\n", 1)[1]]


def test_a_block_cut_short_is_found_to_the_end_of_its_body() -> None:
    block = pem()
    cut = block[: block.index("-----END")].rstrip("\n")
    text = f"{cut}\nThat is all I have."
    assert spans(private_keys.find(text), text) == [cut]


def test_a_block_inside_a_json_string_is_found() -> None:
    block = pem("PRIVATE KEY", 300)
    document = json.dumps({"type": "service_account", "private_key": block + "\n"})
    found = spans(private_keys.find(document), document)
    assert found == [json.dumps(block)[1:-1]]


def test_public_keys_and_certificates_are_not_private_keys() -> None:
    text = pem("PUBLIC KEY") + "\n" + pem("CERTIFICATE")
    assert not list(private_keys.find(text))


def _segment(value: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


TOKEN = ".".join(
    [
        _segment({"alg": "RS256", "kid": "k1"}),
        _segment({"sub": "system:serviceaccount:a:b"}),
        "c2ln" * 8,
    ]
)


@pytest.mark.parametrize(
    "template", ["{t}", "Bearer {t}", 'token: "{t}"', "kubectl --token={t} get"]
)
def test_a_jwt_is_found_whole(template: str) -> None:
    text = template.format(t=TOKEN)
    assert spans(jwt.find(text), text) == [TOKEN]


def test_base64_json_without_alg_is_not_a_jwt() -> None:
    fake = ".".join([_segment({"kind": "note"}), _segment({"a": 1}), "abc"])
    assert not list(jwt.find(f"data {fake}"))


@pytest.mark.parametrize(
    ("url", "password"),
    [
        ("postgres://app:Zq8vLm2xWp@db.internal:5432/app", "Zq8vLm2xWp"),
        ("mongodb+srv://root:pa55-w0rd@cluster0.mongodb.net", "pa55-w0rd"),
        (
            "https://oauth2:glpat-abc123def456ghi789jk@gitlab.com/x.git",
            "glpat-abc123def456ghi789jk",
        ),
    ],
)
def test_the_password_of_a_url_is_found(url: str, password: str) -> None:
    text = f"Connect with {url} today."
    assert spans(url_credentials.find(text), text) == [password]


@pytest.mark.parametrize(
    "url",
    [
        "postgres://user:password@localhost/db",
        "redis://default:<password>@cache:6379",
        "amqp://guest:${RABBIT_PASSWORD}@mq",
        "https://example.com/path?q=a:b@c",
        "ssh://git@github.com:22/org/repo",
    ],
)
def test_placeholders_and_urls_without_a_password_are_left(url: str) -> None:
    assert not list(url_credentials.find(f"See {url}."))


def _b64(value: str) -> str:
    return base64.b64encode(value.encode()).decode()


DOCKER = _b64("bot:Zq8vLm2xWp")


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (json.dumps({"auths": {"ghcr.io": {"auth": DOCKER}}}), DOCKER),
        (f"the registry auth is {_b64('ci:s3cr3t-Pass')}", _b64("ci:s3cr3t-Pass")),
        ("curl -u api:Zq8vLm2xWp0a1b https://api.example.net", "Zq8vLm2xWp0a1b"),
        ("poetry config http-basic.internal ci Zq8vLm2xWp", "Zq8vLm2xWp"),
    ],
)
def test_user_password_pairs_outside_urls_are_found(text: str, secret: str) -> None:
    assert spans(basic_auth.find(text), text) == [secret]


@pytest.mark.parametrize(
    "text",
    [
        "information about clusters",
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
        f"encoded {_b64('https://example.com')}",
        "curl -u user:password https://localhost",
    ],
)
def test_look_alikes_of_pairs_are_left(text: str) -> None:
    assert not list(basic_auth.find(text))


def test_base64_json_is_not_a_user_password_pair() -> None:
    assert not list(basic_auth.find(f"header {_segment({'alg': 'HS256', 'typ': 'JWT'})} ok"))
