"""SecretsReady (pure): do the Secrets the engine's pods read through ``secretKeyRef`` exist?

A missing one keeps every pod from starting (CreateContainerConfigError), which the Deployment
alone reports as replicas that are not ready; this condition names the Secret instead. The
operator learns only whether each Secret exists (a metadata-only GET, ``k8s.secret_exists``),
never its data, so a missing key inside an existing Secret is not seen here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sentinel_operator import conditions, crd

# Reasons of SecretsReady (Ready takes the first that is not True).
NONE_REFERENCED = "NoSecretsReferenced"
FOUND = "SecretsFound"
MISSING = "AccessSecretMissing"
UNCHECKED = "SecretsUnchecked"


def referenced(spec: crd.RAGEngineSpec) -> list[tuple[str, str]]:
    """(spec field, Secret name) for every accessSecret the spec sets, in spec order."""
    found: list[tuple[str, str]] = []
    inference = spec.inference_service
    if inference is not None and inference.access_secret:
        found.append(("inferenceService.accessSecret", inference.access_secret))
    remote = spec.embedding.remote if spec.embedding is not None else None
    if remote is not None and remote.access_secret:
        found.append(("embedding.remote.accessSecret", remote.access_secret))
    vector_db = spec.storage.vector_db if spec.storage is not None else None
    if vector_db is not None and vector_db.access_secret:
        found.append(("storage.vectorDB.accessSecret", vector_db.access_secret))
    return found


def secrets_condition(
    spec: crd.RAGEngineSpec,
    namespace: str,
    exists: Callable[[str, str], bool | None],
    generation: int | None,
) -> dict[str, Any]:
    """``exists(namespace, name)`` answers True, False, or None (the operator may not look)."""
    refs = referenced(spec)
    if not refs:
        return conditions.condition(
            conditions.SECRETS_READY, True, NONE_REFERENCED, "the spec names no Secret", generation
        )
    answers = {name: exists(namespace, name) for name in dict.fromkeys(n for _, n in refs)}
    missing = [f"{field}: Secret {name}" for field, name in refs if answers[name] is False]
    if missing:
        message = (
            f"{'; '.join(missing)} not found in namespace {namespace}: the runtime pods "
            "cannot start until it exists"
        )
        return conditions.condition(conditions.SECRETS_READY, False, MISSING, message, generation)
    unchecked = [name for name, answer in answers.items() if answer is None]
    if unchecked:
        message = (
            f"cannot check Secret {', '.join(unchecked)}: the operator may not get Secrets in "
            f"namespace {namespace} (RBAC)"
        )
        return conditions.condition(conditions.SECRETS_READY, None, UNCHECKED, message, generation)
    names = ", ".join(answers)
    return conditions.condition(
        conditions.SECRETS_READY, True, FOUND, f"Secret {names} exists", generation
    )
