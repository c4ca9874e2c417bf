"""The operator's few Kubernetes API calls, over the official client (I/O lives here only).

Owned objects are written with server-side apply under one field manager, so every field
the builders stop setting is removed too, and an unchanged spec is a no-op on the server.

Every call goes through one ``ApiClient`` (one connection pool: no TLS handshake per call)
and reads the answer as plain JSON (``_preload_content=False``): the callers want JSON, not
the client's typed models converted back. ``warm_up`` imports the client's API modules at
start, which it would otherwise do inside the first engine's create (docs/benchmarks.md,
"Operator on the local control plane").
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubernetes import client
from kubernetes.client.rest import ApiException

from sentinel_operator import crd

FIELD_MANAGER = "sentinel-operator"
APPLY = "application/apply-patch+yaml"
CONFLICT_RETRIES = 5
# A GET answered with the object's metadata only (PartialObjectMetadata): the operator learns
# whether a Secret exists, and its key names, without ever receiving its data. Without a
# fallback media type in the header, a server that could not answer so would refuse (406)
# rather than send the data.
METADATA_ONLY = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"


def namespace_terminating(exc: Exception) -> bool:
    """A write refused because its namespace is being deleted: the namespace controller is
    removing the engine's objects (and then the engine), so there is nothing to put back."""
    return (
        isinstance(exc, ApiException)
        and exc.status == 403
        and "NamespaceTerminating" in str(exc.body or "")
    )


class _Shared:
    """One ``ApiClient`` for the process, made again when the client configuration changes
    (kopf logs in again with new credentials, a test loads another kubeconfig)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: tuple[Any, ...] | None = None
        self._client: client.ApiClient | None = None

    def get(self) -> client.ApiClient:
        configuration = client.Configuration.get_default_copy()
        key = (
            configuration.host,
            tuple(sorted(configuration.api_key.items())),
            configuration.cert_file,
            configuration.key_file,
            configuration.ssl_ca_cert,
        )
        with self._lock:
            if self._client is None or key != self._key:
                self._client, self._key = client.ApiClient(configuration), key
            return self._client


_SHARED = _Shared()
RAW = {"_preload_content": False}  # the answer as bytes: parsed here, never into models


def core() -> client.CoreV1Api:
    return client.CoreV1Api(_SHARED.get())


def apps() -> client.AppsV1Api:
    return client.AppsV1Api(_SHARED.get())


def custom() -> client.CustomObjectsApi:
    return client.CustomObjectsApi(_SHARED.get())


def warm_up() -> None:
    """Import the client's API modules now: the client imports each on first use, about
    0.4 s apiece for the core and apps groups, which the first engine after a start would
    otherwise wait for inside its create (docs/benchmarks.md, "Operator")."""
    core(), apps(), custom()


def _json(response: Any) -> Any:
    """The JSON body of a raw (``_preload_content=False``) answer."""
    try:
        return json.loads(response.data or b"null")
    finally:
        response.release_conn()


def apply(obj: dict[str, Any]) -> dict[str, Any]:
    """Server-side apply of a Deployment or Service built by ``manifests``."""
    meta = obj["metadata"]
    kwargs = {"field_manager": FIELD_MANAGER, "force": True, "_content_type": APPLY, **RAW}
    if obj["kind"] == "Deployment":
        result = apps().patch_namespaced_deployment(meta["name"], meta["namespace"], obj, **kwargs)
    elif obj["kind"] == "Service":
        result = core().patch_namespaced_service(meta["name"], meta["namespace"], obj, **kwargs)
    else:  # pragma: no cover - the builders make only these two kinds
        raise ValueError(f"cannot apply {obj['kind']}")
    return dict(_json(result))


def _found(read: Callable[[], Any]) -> dict[str, Any] | None:
    """The object as plain JSON (``read`` asks for a raw answer), or None when it does not
    exist."""
    try:
        return dict(_json(read()))
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


def read_config_map(namespace: str, name: str) -> dict[str, Any] | None:
    return _found(lambda: core().read_namespaced_config_map(name, namespace, **RAW))


def create_config_map(
    namespace: str, name: str, data: dict[str, str], labels: dict[str, str]
) -> bool:
    """Create unless it exists; True when created. Never updates an existing ConfigMap."""
    body = {"metadata": {"name": name, "namespace": namespace, "labels": labels}, "data": data}
    try:
        _json(core().create_namespaced_config_map(namespace, body, **RAW))
    except ApiException as exc:
        if exc.status == 409:
            return False
        raise
    return True


@dataclass(frozen=True)
class SecretSeen:
    """What a metadata-only GET tells about one Secret: whether it exists (None: the operator
    may not ``get`` Secrets there) and, where its ``managedFields`` say so, its data keys."""

    found: bool | None
    keys: frozenset[str] | None = None  # None: cannot tell


def secret_seen(namespace: str, name: str) -> SecretSeen:
    """The Secret by a metadata-only GET: never its data. A 403 is "may not look", so that
    status can say "cannot check" instead of failing."""
    try:
        response = core().read_namespaced_secret(
            name, namespace, _headers={"Accept": METADATA_ONLY}, **RAW
        )
    except ApiException as exc:
        if exc.status == 404:
            return SecretSeen(False)
        if exc.status == 403:
            return SecretSeen(None)
        raise
    body = _json(response) or {}  # the metadata only
    return SecretSeen(True, data_keys(body.get("metadata") or {}))


def data_keys(metadata: dict[str, Any]) -> frozenset[str] | None:
    """A Secret's data keys as its ``managedFields`` name them, without its data.

    Since Kubernetes 1.18 the server records which fields each writer set: ``f:data`` with
    ``f:KEY`` under it (also for ``stringData`` written by create, update or client-side
    apply: the server stores it as ``data``), ``f:stringData`` for a server-side apply of
    ``stringData``; a key an update removes leaves its record. None when no record names a
    data key (a Secret created without data, older than field tracking, or with its
    managedFields stripped): the caller cannot tell, and judges no key.
    """
    keys: set[str] = set()
    named = False
    for entry in metadata.get("managedFields") or []:
        fields = entry.get("fieldsV1") or {}
        for section in ("f:data", "f:stringData"):
            if section in fields:
                named = True
                keys.update(k[2:] for k in fields[section] or {} if k.startswith("f:"))
    return frozenset(keys) if named else None


def read_service(namespace: str, name: str) -> dict[str, Any] | None:
    return _found(lambda: core().read_namespaced_service(name, namespace, **RAW))


def read_deployment(namespace: str, name: str) -> dict[str, Any] | None:
    return _found(lambda: apps().read_namespaced_deployment(name, namespace, **RAW))


def list_services(namespace: str, label_selector: str) -> list[dict[str, Any]]:
    result = _json(core().list_namespaced_service(namespace, label_selector=label_selector, **RAW))
    return list(result.get("items") or [])


def delete_service(namespace: str, name: str) -> None:
    """Delete unless already gone."""
    try:
        # Unparsed: an apiserver may answer a Service delete with a Status object, which
        # the client would fail to read as a V1Service after the delete succeeded.
        _json(core().delete_namespaced_service(name, namespace, **RAW))
    except ApiException as exc:
        if exc.status != 404:
            raise


def read_engine(namespace: str, name: str) -> dict[str, Any] | None:
    return _found(
        lambda: custom().get_namespaced_custom_object(
            crd.GROUP, crd.VERSION, namespace, crd.PLURAL, name, **RAW
        )
    )


def list_engines(namespace: str) -> list[dict[str, Any]]:
    result = custom().list_namespaced_custom_object(crd.GROUP, crd.VERSION, namespace, crd.PLURAL)
    return list(result.get("items", []))


def update_status(
    namespace: str, name: str, mutate: Callable[[dict[str, Any]], dict[str, Any]]
) -> dict[str, Any] | None:
    """Read the engine, compute its new status with ``mutate(old_status)`` and write it.

    The write carries the resourceVersion it read, so two writers never lose each other's
    conditions: a conflict re-reads and retries. None when the engine is gone.
    """
    api = custom()
    for attempt in range(CONFLICT_RETRIES):
        try:
            engine = api.get_namespaced_custom_object(
                crd.GROUP, crd.VERSION, namespace, crd.PLURAL, name
            )
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise
        # A full replace of the status subresource: keys the new status drops are gone,
        # which a merge patch would keep; the resourceVersion in the body guards the write.
        old = dict(engine.get("status") or {})
        new = mutate(old)
        if new == old:
            return engine  # nothing to say: no write, no new resourceVersion, no watch event
        engine["status"] = new
        try:
            return api.replace_namespaced_custom_object_status(
                crd.GROUP, crd.VERSION, namespace, crd.PLURAL, name, engine
            )
        except ApiException as exc:
            if exc.status != 409 or attempt == CONFLICT_RETRIES - 1:
                raise
            time.sleep(0.05 * (attempt + 1))
    return None
