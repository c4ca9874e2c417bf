"""StorageReady (pure): where the engine's indexes live, and whether that allows the replicas
its spec asks for. The embedded index lives in each runtime process, so only a shared vector
database (``spec.storage.vectorDB``) lets replicas answer from the same documents."""

from __future__ import annotations

from typing import Any

from sentinel_operator import conditions, manifests

# The reason of StorageReady=False (and of its Event) when replicas are held at one.
SINGLE_REPLICA = "EmbeddedStoreSingleReplica"


def storage_condition(engine: manifests.Engine, generation: int | None) -> dict[str, Any]:
    problem = engine.storage_problem
    if problem is not None:
        return conditions.condition(
            conditions.STORAGE_READY, False, SINGLE_REPLICA, problem, generation
        )
    vector_db = engine.vector_db
    if vector_db is not None:
        message = (
            f"indexes in {vector_db.engine} at {vector_db.url} (collections "
            f"{engine.collection_prefix}__*), shared by {engine.replicas} replicas"
        )
        return conditions.condition(
            conditions.STORAGE_READY, True, "SharedVectorDB", message, generation
        )
    storage = engine.spec.storage
    volume = storage.persistent_volume if storage is not None else None
    where = f"persisted to {volume.persistent_volume_claim}" if volume else "in memory only"
    message = f"embedded index in the runtime process, {where}"
    return conditions.condition(
        conditions.STORAGE_READY, True, "EmbeddedStore", message, generation
    )
