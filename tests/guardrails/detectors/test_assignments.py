"""Values assigned to secret-like names: found in every form, and left alone when the name
is about a secret or the value is a placeholder, a reference or an ordinary word."""

from __future__ import annotations

import pytest

from sentinel_runtime.guardrails.detectors import assignments
from sentinel_runtime.guardrails.detectors.assignments import about_a_secret, key_kind


def found(text: str) -> list[str]:
    return [text[d.start : d.end] for d in assignments.find(text)]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("DB_PASSWORD=Wq3rTy7uIo", "Wq3rTy7uIo"),
        ('export DB_PASSWORD="q w e r t y"', "q w e r t y"),
        ("password: 'n0tV3ryS3cret'", "n0tV3ryS3cret"),
        ('{"password": "plainwords"}', "plainwords"),
        ("[client]\npassword = letmein42", "letmein42"),
        ("spring.datasource.password=Zx9Cv8Bn7", "Zx9Cv8Bn7"),
        ("mysqldump --password=Zx9Cv8Bn7 db", "Zx9Cv8Bn7"),
        ("vault login --password Zx9Cv8Bn7", "Zx9Cv8Bn7"),
        ("machine ftp.host login alice password Zx9Cv8Bn7", "Zx9Cv8Bn7"),
        ("The admin password is Tr0ub4dor&3.", "Tr0ub4dor&3"),
        ("the password for the staging database is `hunter22`", "hunter22"),
        ("SECRET_KEY = 'django-insecure-4f9k2m8x7q1z'", "django-insecure-4f9k2m8x7q1z"),
        ("client_secret: 8f3kLm29xQpR7vWz", "8f3kLm29xQpR7vWz"),
        ("ENCRYPTION_KEY=" + "a1" * 32, "a1" * 32),
        ("aesKey: " + "0f" * 16, "0f" * 16),
        ('"auth": "dXNlcjpodW50ZXIy"', "dXNlcjpodW50ZXIy"),
        ("//npm.pkg.github.com/:_authToken=Ab12Cd34Ef56Gh78", "Ab12Cd34Ef56Gh78"),
        ("Authorization: Basic dXNlcjpodW50ZXIy", "dXNlcjpodW50ZXIy"),
        ("X-Api-Key: 3f9a8b7c6d5e4f3a2b1c", "3f9a8b7c6d5e4f3a2b1c"),
        (
            "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=Ab12+Cd34/Ef56==;",
            "Ab12+Cd34/Ef56==",
        ),
    ],
)
def test_a_secret_value_is_found(text: str, value: str) -> None:
    assert found(text) == [value]


@pytest.mark.parametrize(
    "text",
    [
        "Set the password policy to 12 characters.",
        "password_min_length: 12",
        "token_expiry: 3600",
        "Rotate the token every 90 days.",
        "The API key is stored in Vault.",
        "the password is stored in a secret manager",
        "The key is to rotate often.",
        'password = os.environ["DB_PASSWORD"]',
        "token = get_token()",
        "api_key=settings.API_KEY",
        "password: ${DB_PASSWORD}",
        "password: <your-password>",
        "password: '********'",
        "password: changeme",
        "secretName: db-credentials",
        "valueFrom:\n  secretKeyRef:\n    name: db\n    key: password",
        "public_key: AAAAC3NzaC1lZDI1NTE5AAAAIG",
        "cache_key = user_42_profile",
        "max_tokens: 512",
        "The monkey: Ab12Cd34Ef56",
        "password: required",
        "Password: minimum 12 characters",
        "token: true",
    ],
)
def test_talk_about_secrets_is_left_alone(text: str) -> None:
    assert found(text) == []


@pytest.mark.parametrize(
    ("key", "kind"),
    [
        ("DB_PASSWORD", "password"),
        ("userPassword", "password"),
        ("db_pass", "password"),
        ("GITHUB_TOKEN", "token"),
        ("_authToken", "token"),
        ("auth", "token"),
        ("client_secret", "secret"),
        ("AWS_SECRET_ACCESS_KEY", "key"),
        ("accountKey", "key"),
        ("monkey", None),
        ("tokens", None),
        ("oauth", None),
    ],
)
def test_key_kinds(key: str, kind: str | None) -> None:
    assert key_kind(key) == kind


def test_names_about_secrets() -> None:
    assert about_a_secret("password_policy") and about_a_secret("tokenExpiry")
    assert not about_a_secret("refresh_token") and not about_a_secret("oidc_client_secret")


def test_hold_waits_on_a_key_in_the_last_line_only() -> None:
    assert assignments.hold("done.\nthe password is ") == len("done.\nthe ")
    assert assignments.hold("password=abc\nall good ") == len("password=abc\nall good ")
