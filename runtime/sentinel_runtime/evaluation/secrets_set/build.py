"""The set for a seed: every kind's positives, then every benign family's negatives, each side
from its own ``random.Random`` so that adding a negative family leaves the positives unchanged.
The order of the calls below is the order of the random draws: keep it."""

from __future__ import annotations

import random

from .assignments import (
    docker_config_samples,
    hex_key_samples,
    npmrc_samples,
    password_samples,
    pip_samples,
    secret_assignment_samples,
)
from .framing import token_samples
from .negatives import NEGATIVE_FAMILIES
from .sample import BENIGN, Sample
from .structural import (
    azure_storage_samples,
    jwt_samples,
    pem_samples,
    url_credential_samples,
    webhook_samples,
)
from .tokens import TOKEN_SPECS

NEGATIVES_PER_FAMILY = 36

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


def positives(seed: int = 0) -> list[Sample]:
    rng = random.Random(f"secrets-set/positives/{seed}")
    out: list[Sample] = []
    for spec in TOKEN_SPECS:
        out += token_samples(rng, spec)
    out += azure_storage_samples(rng)
    out += webhook_samples(rng)
    for make in (
        pem_samples,
        jwt_samples,
        url_credential_samples,
        docker_config_samples,
        npmrc_samples,
        pip_samples,
        password_samples,
        secret_assignment_samples,
        hex_key_samples,
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
