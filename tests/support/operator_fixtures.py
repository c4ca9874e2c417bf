"""Run the operator against the local control plane: fixtures and helpers for tests/cluster.

Registered as a plugin by tests/conftest.py; the ``cluster`` fixture comes from
tests/cluster/conftest.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from sentinel_operator import crd, manifests
from support.runtime import free_port, stop_process

ROOT = Path(__file__).resolve().parents[2]
OPERATOR_NS = "sentinel-system"
TEST_NAMESPACE_PREFIX = "sentinel-test"  # tests/support/cluster.namespace's default
DEFAULT_POLICY = (
    ROOT / "runtime" / "sentinel_runtime" / "guardrails" / "default_policy.yaml"
).read_text(encoding="utf-8")


def wait_for(predicate: Callable[[], Any], timeout: float = 20.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = predicate()
        except ApiException as exc:
            if exc.status != 404:
                raise
            last = None
        if last:
            return last
        time.sleep(0.2)
    pytest.fail(f"timed out after {timeout} s waiting for {what} (last: {last!r})")


@pytest.fixture(scope="session")
def kube(cluster) -> Iterator[None]:
    config.load_kube_config(str(cluster.kubeconfig))
    yield


def install(cluster) -> None:
    """CRD, operator namespace and policy template: what a platform engineer installs."""
    # crds/ holds the CRD as the chart renders it for servers without CEL (the 1.20 test
    # server among them), so a plain apply works.
    created = (
        "created" in cluster.kubectl("apply", "-f", str(ROOT / "crds" / "ragengine.yaml")).stdout
    )
    if created:
        # The 1.20 garbage collector notices new resource types only every 30 s; until then
        # objects owned by a RAGEngine would outlive it.
        cluster.restart_controller_manager()
    core = client.CoreV1Api()
    for create in (
        lambda: core.create_namespace({"metadata": {"name": OPERATOR_NS}}),
        lambda: core.create_namespaced_config_map(
            OPERATOR_NS,
            {
                "metadata": {"name": manifests.POLICY_TEMPLATE},
                "data": {"guardrails.yaml": DEFAULT_POLICY},
            },
        ),
    ):
        try:
            create()
        except ApiException as exc:
            if exc.status != 409:
                raise


def start_operator(
    cluster,
    log: Path,
    *,
    resync_seconds: str = "5",
    namespaces: tuple[str, ...] = (),
    operator_namespace: str = OPERATOR_NS,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> tuple[subprocess.Popen, int]:
    """``sentinel operator`` as a process, once its liveness endpoint answers; with the
    port of its Prometheus metrics. ``args`` are further options and ``env`` overrides the
    environment (as an installed Deployment gives them); the ports are always free local ones."""
    health, metrics_port = free_port(), free_port()
    scope = [arg for namespace in namespaces for arg in ("--namespace", namespace)]
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sentinel_runtime.cli",
            "operator",
            "--metrics-port",
            str(metrics_port),
            "--metrics-host",
            "127.0.0.1",
            "--health-port",
            str(health),
            "--health-host",
            "127.0.0.1",
            *scope,
            *args,
        ],
        env={
            **os.environ,
            "OPERATOR_NAMESPACE": operator_namespace,
            "RESYNC_SECONDS": resync_seconds,
            "RUNTIME_IMAGE": "sentinel:test",
            **(env or {}),
            "KUBECONFIG": str(cluster.kubeconfig),
        },
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )

    def healthy() -> bool:
        if process.poll() is not None:
            raise RuntimeError(f"operator exited:\n{log.read_text()}")
        try:
            return httpx.get(f"http://127.0.0.1:{health}/healthz", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    wait_for(healthy, 30, "operator liveness")
    return process, metrics_port


def as_service_account(cluster, namespace: str, name: str, directory: Path) -> tuple[Any, str]:
    """The cluster as a ServiceAccount sees it: a copy of ``cluster`` whose kubeconfig
    authenticates with that account's token (so do its kubectl and operators), and the token."""
    token = cluster.service_account_token(namespace, name)
    kubeconfig = yaml.safe_load(cluster.kubeconfig.read_text(encoding="utf-8"))
    kubeconfig["users"] = [{"name": name, "user": {"token": token}}]
    for context in kubeconfig["contexts"]:
        context["context"]["user"] = name
    path = directory / f"{namespace}-{name}.kubeconfig"
    path.write_text(yaml.safe_dump(kubeconfig), encoding="utf-8")
    return type(cluster)(**{**vars(cluster), "kubeconfig": path}), token


def stop_operator(process: subprocess.Popen) -> None:
    stop_process(process)


@pytest.fixture(scope="session")
def operator(cluster, kube, tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """A running operator for the test namespaces; the value is its metrics port."""
    install(cluster)
    log = tmp_path_factory.mktemp("operator") / "operator.log"
    # Only the test namespaces: other tests run operators of their own elsewhere.
    process, metrics_port = start_operator(cluster, log, namespaces=(f"{TEST_NAMESPACE_PREFIX}-*",))
    yield metrics_port
    stop_operator(process)
    if process.returncode not in (0, -15):
        sys.stdout.write(log.read_text()[-4000:])


def create_engine(namespace: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return client.CustomObjectsApi().create_namespaced_custom_object(
        crd.GROUP,
        crd.VERSION,
        namespace,
        crd.PLURAL,
        {
            "apiVersion": f"{crd.GROUP}/{crd.VERSION}",
            "kind": crd.KIND,
            "metadata": {"name": name},
            "spec": spec,
        },
    )


def get_engine(namespace: str, name: str) -> dict[str, Any]:
    return client.CustomObjectsApi().get_namespaced_custom_object(
        crd.GROUP, crd.VERSION, namespace, crd.PLURAL, name
    )


def condition(engine: dict[str, Any], type_: str) -> dict[str, Any] | None:
    for item in (engine.get("status") or {}).get("conditions") or []:
        if item["type"] == type_:
            return item
    return None
