"""SecretsReady (pure): do the Secrets the engine's pods read (through ``secretKeyRef``, or
the keys file's Secret volume) exist, with the key each one is read by?

A missing Secret or key keeps every pod from starting (CreateContainerConfigError, or a
volume that cannot be mounted), which the Deployment alone reports as replicas that are not
ready; this condition names the Secret and the key instead. The operator learns each Secret
by a metadata-only GET (``k8s.secret_seen``), never its data: whether it exists, and its
data keys as its ``managedFields`` record them. A key is reported missing only when those
records name the Secret's keys and not this one; when they name none, the key is not judged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from sentinel_operator import conditions, crd, manifests

if TYPE_CHECKING:  # the I/O module, for the type of what it saw
    from sentinel_operator import k8s

# Reasons of SecretsReady (Ready takes the first that is not True).
NONE_REFERENCED = "NoSecretsReferenced"
FOUND = "SecretsFound"
MISSING = "AccessSecretMissing"
KEY_MISSING = "AccessSecretKeyMissing"
UNCHECKED = "SecretsUnchecked"


class Reference(NamedTuple):
    """One Secret of the runtime pod: the spec field naming the Secret, the Secret, and the
    key the runtime reads from it."""

    field: str
    name: str
    key: str


def referenced(spec: crd.RAGEngineSpec) -> list[Reference]:
    """Every Secret the spec names (each accessSecret, auth.keysSecret), in spec order."""
    found: list[Reference] = []
    inference = spec.inference_service
    if inference is not None and inference.access_secret:
        found.append(
            Reference(
                "inferenceService.accessSecret", inference.access_secret, manifests.LLM_SECRET_KEY
            )
        )
    remote = spec.embedding.remote if spec.embedding is not None else None
    if remote is not None and remote.access_secret:
        found.append(
            Reference(
                "embedding.remote.accessSecret",
                remote.access_secret,
                manifests.EMBEDDING_SECRET_KEY,
            )
        )
    vector_db = spec.storage.vector_db if spec.storage is not None else None
    if vector_db is not None and vector_db.access_secret:
        found.append(
            Reference(
                "storage.vectorDB.accessSecret",
                vector_db.access_secret,
                manifests.VECTOR_DB_SECRET_KEY,
            )
        )
    guard = spec.guard
    if guard is not None and guard.access_secret:
        found.append(
            Reference("guard.accessSecret", guard.access_secret, manifests.GUARD_SECRET_KEY)
        )
    auth = spec.auth
    if auth is not None and auth.keys_secret is not None:
        keys_secret = auth.keys_secret
        found.append(Reference("auth.keysSecret", keys_secret.name, keys_secret.key))
    return found


def secrets_condition(
    spec: crd.RAGEngineSpec,
    namespace: str,
    look: Callable[[str, str], k8s.SecretSeen],
    generation: int | None,
) -> dict[str, Any]:
    """``look(namespace, name)`` is what a metadata-only GET saw of that Secret."""
    refs = referenced(spec)
    if not refs:
        return conditions.condition(
            conditions.SECRETS_READY, True, NONE_REFERENCED, "the spec names no Secret", generation
        )
    seen = {name: look(namespace, name) for name in dict.fromkeys(ref.name for ref in refs)}
    missing = [f"{ref.field}: Secret {ref.name}" for ref in refs if seen[ref.name].found is False]
    # The Secret's other key names stay out of the message: status is read more widely.
    keyless = [
        f"{ref.field}: Secret {ref.name} has no key {ref.key}"
        for ref in refs
        if seen[ref.name].found
        and (keys := seen[ref.name].keys) is not None
        and ref.key not in keys
    ]
    if missing or keyless:
        problems = [f"{'; '.join(missing)} not found in namespace {namespace}"] if missing else []
        problems += keyless
        until = (
            "it exists"
            if not keyless
            else "the key is added"
            if not missing
            else "each Secret exists with its key"
        )
        message = f"{'; '.join(problems)}: the runtime pods cannot start until {until}"
        reason = MISSING if missing else KEY_MISSING
        return conditions.condition(conditions.SECRETS_READY, False, reason, message, generation)
    unchecked = [name for name, answer in seen.items() if answer.found is None]
    if unchecked:
        message = (
            f"cannot check Secret {', '.join(unchecked)}: the operator may not get Secrets in "
            f"namespace {namespace} (RBAC)"
        )
        return conditions.condition(conditions.SECRETS_READY, None, UNCHECKED, message, generation)
    names = ", ".join(seen)
    return conditions.condition(
        conditions.SECRETS_READY, True, FOUND, f"Secret {names} exists", generation
    )
