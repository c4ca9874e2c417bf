"""kopf handlers: thin wiring from Kubernetes events to ``reconcile``, plus the watches that
keep the engine's objects and status honest.

- RAGEngines: create, resume and spec updates share one reconcile.
- Owned Deployments and Services (label-selected): a deletion or a hand edit is repaired at
  once (``reconcile.repair_*``), and the Deployment's status gives DeploymentReady.
- Policy ConfigMaps that engines use (``sentinel_policy_users`` indexes them; other
  ConfigMaps never reach a handler): an edit is judged again, a deleted copy is made again.

No timer and no daemon: kopf puts a finalizer on every object a timer or daemon serves, and
that finalizer outlives the operator (an engine could not be deleted after ``helm
uninstall``). Nothing here needs one either: owned objects go by garbage collection and the
copied policy ConfigMap stays. kopf removes its finalizer from engines an older operator
left one on. What no watch reports (a Secret, which the operator may get but not watch; the
policy template in its own namespace; a repair that failed) is checked again every
RESYNC_SECONDS for the engines whose status waits on it, by one task of this process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator
from typing import Any, NamedTuple

import kopf
from kubernetes.client.rest import ApiException
from pydantic import ValidationError

from sentinel_operator import crd, k8s, manifests, metrics, reconcile
from sentinel_operator.config import OperatorSettings

SETTINGS = OperatorSettings()
RESOURCE = (crd.GROUP, crd.VERSION, crd.PLURAL)
OWNED = {"app.kubernetes.io/managed-by": "sentinel-operator"}
LOG = logging.getLogger(__name__)


class _Recheck:
    """The periodic re-check (``_recheck_forever``): one task per process, started by the first
    engine event (so that it posts Events the way handlers do), stopped at cleanup."""

    def __init__(self) -> None:
        self._task: asyncio.Task[None] | None = None

    def ensure_running(self, waiting: kopf.Index) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(_recheck_forever(waiting))

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None


_RECHECK = _Recheck()


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    # Keep kopf's bookkeeping in annotations: the status schema has no field for it.
    prefix = crd.GROUP
    settings.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix=prefix)
    settings.persistence.diffbase_storage = kopf.AnnotationsDiffBaseStorage(prefix=prefix)
    settings.posting.level = logging.WARNING
    settings.watching.server_timeout = 270
    SETTINGS.operator_namespace()  # fail at start, not at the first engine
    k8s.warm_up()  # the client's first-use costs belong to the start, not to a create


@kopf.on.cleanup()
async def stop_rechecks(**_: Any) -> None:
    _RECHECK.stop()


def _post(body: dict[str, Any], notices: list[reconcile.Notice]) -> None:
    for notice in notices:
        kopf.event(body, type=notice.type, reason=notice.reason, message=notice.message)


@kopf.index(*RESOURCE)
def sentinel_engine_readiness(name: str, namespace: str, status: kopf.Status, **_: Any) -> dict:
    ready = next(
        (c.get("status") for c in status.get("conditions") or [] if c.get("type") == "Ready"),
        "Unknown",
    )
    return {ready: (namespace, name)}


@kopf.index(*RESOURCE)
def sentinel_engine_rechecks(
    name: str, namespace: str, status: kopf.Status, **_: Any
) -> dict[tuple[str, str], bool]:
    """Engines whose status waits on something no watch reports (``reconcile.RECHECK_REASONS``)."""
    return {(namespace, name): True} if reconcile.needs_recheck(dict(status)) else {}


@kopf.on.resume(*RESOURCE)
@kopf.on.create(*RESOURCE)
@kopf.on.update(*RESOURCE, field="spec")
def sentinel_ragengine_reconcile(body: kopf.Body, reason: kopf.Reason, **_: Any) -> None:
    _post(dict(body), reconcile.reconcile(dict(body), SETTINGS, trigger=str(reason.value)))


@kopf.on.event(*RESOURCE)
async def sentinel_engine_seen(
    sentinel_engine_readiness: kopf.Index, sentinel_engine_rechecks: kopf.Index, **_: Any
) -> None:
    """Every engine event (status writes included): the readiness gauge, and the re-check task,
    started here so that it inherits kopf's Event posting from a handler's context."""
    for ready in ("True", "False", "Unknown"):
        metrics.ENGINES.labels(ready).set(len(sentinel_engine_readiness.get(ready, [])))
    _RECHECK.ensure_running(sentinel_engine_rechecks)


async def _recheck_forever(waiting: kopf.Index) -> None:
    while True:
        await asyncio.sleep(SETTINGS.RESYNC_SECONDS)
        for namespace, name in list(waiting):
            try:
                await asyncio.to_thread(_recheck, namespace, name)
            except Exception:  # the next round tries again; one engine never stops the rest
                LOG.exception("re-checking RAGEngine %s/%s failed", namespace, name)


def _recheck(namespace: str, name: str) -> None:
    engine = k8s.read_engine(namespace, name)
    if engine is not None:
        with _unless_namespace_terminates():
            _post(engine, reconcile.reconcile(engine, SETTINGS, trigger="recheck"))


class Owner(NamedTuple):
    name: str
    uid: str


def _owner(body: kopf.Body) -> Owner | None:
    for reference in body["metadata"].get("ownerReferences") or []:
        if reference.get("kind") == crd.KIND and reference.get("controller"):
            return Owner(str(reference["name"]), str(reference.get("uid", "")))
    return None


def _owning_engine(body: kopf.Body) -> dict[str, Any] | None:
    """The live engine that owns ``body`` and has been reconciled once, or None."""
    owner = _owner(body)
    if owner is None:
        return None
    engine = k8s.read_engine(body["metadata"]["namespace"], owner.name)
    if engine is None or engine["metadata"].get("uid") != owner.uid:
        return None  # gone, or a new engine of the same name: the collector takes the old one
    if (engine.get("status") or {}).get("observedGeneration") is None:
        return None  # its first reconcile is under way and applies everything itself
    return engine


@contextlib.contextmanager
def _unless_namespace_terminates() -> Iterator[None]:
    """A namespace being deleted takes the engine's objects before the engine: their DELETED
    events are no drift, and putting them back is refused anyway."""
    try:
        yield
    except ApiException as exc:
        if not k8s.namespace_terminating(exc):
            raise


def _live(event: dict[str, Any], body: kopf.Body) -> dict[str, Any] | None:
    """The owned object as the event shows it, None once it is deleted."""
    return None if event.get("type") == "DELETED" else dict(body)


def _going(event: dict[str, Any], body: kopf.Body) -> bool:
    """Being deleted (a foreground deletion waits on its dependents): its DELETED event, not
    this one, is when to put it back."""
    return event.get("type") != "DELETED" and bool(body["metadata"].get("deletionTimestamp"))


@kopf.on.event("apps", "v1", "deployments", labels=OWNED)
def sentinel_deployment_watch(event: dict[str, Any], body: kopf.Body, **_: Any) -> None:
    engine = None if _going(event, body) else _owning_engine(body)
    if engine is not None:
        with _unless_namespace_terminates():
            _post(engine, reconcile.repair_deployment(engine, _live(event, body), SETTINGS))


@kopf.on.event("", "v1", "services", labels=OWNED)
def sentinel_service_watch(event: dict[str, Any], body: kopf.Body, **_: Any) -> None:
    engine = None if _going(event, body) else _owning_engine(body)
    if engine is not None:
        name = body["metadata"]["name"]
        with _unless_namespace_terminates():
            _post(engine, reconcile.repair_service(engine, name, _live(event, body), SETTINGS))


@kopf.index(*RESOURCE)
def sentinel_policy_users(
    name: str, namespace: str, spec: kopf.Spec, **_: Any
) -> dict[tuple[str, str], str]:
    """(namespace, ConfigMap) -> the engines whose policy it is: the referenced ConfigMap or
    the namespace's copy of the template. Kept by kopf from the RAGEngine watch."""
    try:
        parsed = crd.RAGEngineSpec.model_validate(dict(spec))
    except ValidationError:
        return {}  # an invalid engine uses no policy until it is fixed
    policy = manifests.Engine(name, namespace, "", parsed, "").policy_config_map
    return {} if policy is None else {(namespace, policy): name}


def _used_policy(name: str, namespace: str, sentinel_policy_users: kopf.Index, **_: Any) -> bool:
    return (namespace, name) in sentinel_policy_users


# Every ConfigMap in the watched namespaces still streams in (kopf filters on the client side,
# and no label can single out a user's referenced ConfigMap), but only those an engine uses
# reach the handler: edits are judged again, and a deleted copy of the template is made again.
@kopf.on.event("", "v1", "configmaps", when=_used_policy)
async def sentinel_policy_watch(
    name: str, namespace: str, sentinel_policy_users: kopf.Index, **_: Any
) -> None:
    metrics.POLICY_EVENTS.inc()
    # The index is a live view that kopf changes on the event loop whenever an engine event
    # arrives: copy it here, on the loop, and never iterate it from a worker thread (it fails
    # with "dictionary changed size during iteration" as soon as an engine that uses the
    # same ConfigMap comes or goes meanwhile, and kopf drops an on.event handler's error).
    users = sorted(sentinel_policy_users.get((namespace, name), []))
    await asyncio.to_thread(_refresh_policy_users, namespace, users)


def _refresh_policy_users(namespace: str, engine_names: list[str]) -> None:
    for engine_name in engine_names:
        engine = k8s.read_engine(namespace, engine_name)
        if engine is None or (engine.get("status") or {}).get("observedGeneration") is None:
            continue  # gone, or not reconciled yet: its first reconcile judges the policy anyway
        try:
            with _unless_namespace_terminates():
                _post(engine, reconcile.refresh_policy(namespace, engine_name, engine, SETTINGS))
        except Exception:  # one engine's failure must not keep the edit from the others
            LOG.exception("re-judging the policy of RAGEngine %s/%s failed", namespace, engine_name)
