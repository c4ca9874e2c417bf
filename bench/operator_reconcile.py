"""Operator speed on the local control plane (scripts/cluster).

* create -> owned objects: time from creating a RAGEngine until its Deployment, Service and
  policy ConfigMap copy all exist, beside the baseline of creating a Deployment and a Service
  directly through the same API (the least any controller must do);
* 100 at once: 100 RAGEngines created as fast as the API takes them, until every one has a
  reconciled status; with the operator's peak resident memory.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from kubernetes import client, config
from kubernetes.client.rest import ApiException

from sentinel_operator import crd, manifests
from stats import median, table
from support.cluster import start_cluster
from support.operator_fixtures import create_engine, install, start_operator, stop_operator

POLL = 0.01


def _exists(read) -> bool:
    try:
        read()
    except ApiException as exc:
        if exc.status == 404:
            return False
        raise
    return True


def _p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]


def _namespace(name: str) -> str:
    client.CoreV1Api().create_namespace({"metadata": {"name": name}})
    return name


def _create_to_objects(count: int) -> list[float]:
    apps, core = client.AppsV1Api(), client.CoreV1Api()
    samples = []
    for index in range(count):
        name = f"lat-{index}"
        namespace = _namespace(f"bench-latency-{index}")
        started = time.perf_counter()
        create_engine(namespace, name, {"guardrails": {"enabled": True}})
        while not (
            _exists(lambda n=name, ns=namespace: apps.read_namespaced_deployment(n, ns))
            and _exists(lambda n=name, ns=namespace: core.read_namespaced_service(n, ns))
            and _exists(
                lambda ns=namespace: core.read_namespaced_config_map(manifests.POLICY_TEMPLATE, ns)
            )
        ):
            time.sleep(POLL)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def _direct_baseline(namespace: str, count: int) -> list[float]:
    apps, core = client.AppsV1Api(), client.CoreV1Api()
    spec = crd.RAGEngineSpec.model_validate({})
    samples = []
    for index in range(count):
        engine = manifests.Engine(f"direct-{index}", namespace, "0", spec, "sentinel:test")
        deployment, service = manifests.deployment(engine), manifests.service(engine)
        for obj in (deployment, service):
            obj["metadata"].pop("ownerReferences")
        started = time.perf_counter()
        apps.create_namespaced_deployment(namespace, deployment)
        core.create_namespaced_service(namespace, service)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def _reconciled(namespace: str) -> int:
    items = client.CustomObjectsApi().list_namespaced_custom_object(
        crd.GROUP, crd.VERSION, namespace, crd.PLURAL
    )["items"]
    return sum(
        1
        for item in items
        if (item.get("status") or {}).get("observedGeneration") == item["metadata"]["generation"]
        and any(c["type"] == "DeploymentReady" for c in item["status"].get("conditions", []))
    )


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def run(latency_samples: int = 20, burst: int = 100) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        cluster = start_cluster(Path(tmp) / "cluster")
        try:
            config.load_kube_config(str(cluster.kubeconfig))
            install(cluster)
            process, _ = start_operator(cluster, Path(tmp) / "operator.log", resync_seconds="300")
            try:
                latency = _create_to_objects(latency_samples)
                direct = _direct_baseline(_namespace("bench-direct"), latency_samples)
                burst_ns = _namespace("bench-burst")
                started = time.perf_counter()
                for index in range(burst):
                    create_engine(burst_ns, f"burst-{index}", {"guardrails": {"enabled": True}})
                created = time.perf_counter() - started
                while _reconciled(burst_ns) < burst:
                    if time.perf_counter() - started > 300:
                        raise RuntimeError(f"only {_reconciled(burst_ns)}/{burst} reconciled")
                    time.sleep(0.1)
                total = time.perf_counter() - started
                rss = _peak_rss_mb(process.pid)
            finally:
                stop_operator(process)
        finally:
            cluster.stop()
    latency_table = table(
        "RAGEngine create -> Deployment, Service, policy ConfigMap present, a new namespace "
        "each (target: p50 and p95 < 1 s)",
        ["path", "samples", "p50 ms", "p95 ms", "first ms", "vs direct"],
        [
            [
                "direct API create (baseline)",
                str(len(direct)),
                f"{median(direct):.0f}",
                f"{_p95(direct):.0f}",
                f"{direct[0]:.0f}",
                "1.0x",
            ],
            [
                "through the operator",
                str(len(latency)),
                f"{median(latency):.0f}",
                f"{_p95(latency):.0f}",
                f"{latency[0]:.0f}",  # the first engine after the operator started
                f"{median(latency) / median(direct):.1f}x",
            ],
        ],
    )
    burst_table = table(
        f"{burst} RAGEngines created at once (targets: all reconciled < 30 s, RSS < 200 MB)",
        ["engines", "created in s", "all reconciled in s", "operator peak RSS MB"],
        [[str(burst), f"{created:.1f}", f"{total:.1f}", f"{rss:.0f}"]],
    )
    return latency_table + "\n\n" + burst_table
