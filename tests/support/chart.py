"""The Helm chart (charts/sentinel) rendered by the real helm: what tests/chart checks offline
and tests/cluster installs."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from support.tools import run

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "sentinel"
RENDERED = ROOT / "manifests" / "sentinel.yaml"
RENDER_SCRIPT = ROOT / "scripts" / "render-manifests.sh"
SAMPLES = ROOT / "manifests" / "samples"
RELEASE = "sentinel"
NAMESPACE = "sentinel-system"

# Every optional feature on, peering cluster-wide (replicaCount > 1 turns it on).
ALL_FEATURES: dict[str, Any] = {
    "image": {"repository": "registry.example/sentinel", "tag": "1.2.3", "pullPolicy": "Always"},
    "imagePullSecrets": [{"name": "regcred"}],
    "runtimeImage": "registry.example/sentinel-runtime:1.2.3",
    "replicaCount": 2,
    "resyncSeconds": 30,
    "verbose": True,
    "peering": {"name": "sentinel-ha"},
    "serviceAccount": {"name": "sentinel-op", "annotations": {"iam.example/role": "sentinel"}},
    "policy": "scanners:\n  - type: invisible_text\n",
    "otel": {
        "endpoint": "http://otel-collector.observability:4318",
        "sampler": "parentbased_traceidratio",
        "samplerArg": "0.25",
        "resourceAttributes": "deployment.environment=prod",
        "captureContent": True,
        "env": {"OTEL_BSP_SCHEDULE_DELAY": "1000"},
    },
    "resources": {"requests": {"cpu": "100m", "memory": "200Mi"}, "limits": {"memory": "400Mi"}},
    "podAnnotations": {"example/owner": "platform"},
    "nodeSelector": {"kubernetes.io/os": "linux"},
    "tolerations": [
        {"key": "dedicated", "operator": "Equal", "value": "ops", "effect": "NoSchedule"}
    ],
    "affinity": {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}
                        ]
                    }
                ]
            }
        }
    },
    "service": {"port": 9090},
    "serviceMonitor": {"enabled": True, "interval": "15s", "labels": {"release": "prom"}},
    "prometheusRule": {"enabled": True, "labels": {"release": "prom"}},
    "autoscaling": {
        "engines": [{"name": "rag", "namespace": "shop", "minReplicas": 2, "maxReplicas": 10}],
        "targetInFlightPerPod": 200,
        "scaleDownStabilizationSeconds": 120,
    },
    "dashboard": {
        "enabled": True,
        "namespace": "monitoring",
        "label": "grafana_dashboard",
        "labelValue": "yes",
        "folder": "Sentinel",
        "folderAnnotation": "grafana_folder",
    },
}
# The same with the operator limited to two namespaces: peering per namespace.
NAMESPACED_PEERING: dict[str, Any] = {
    **ALL_FEATURES,
    "replicaCount": 1,
    "peering": {"enabled": True, "name": "sentinel-ha"},
    "watchNamespaces": ["team-a", "team-b"],
}


def values_file(directory: Path, values: dict[str, Any], name: str = "values.yaml") -> Path:
    path = directory / name
    path.write_text(yaml.safe_dump(values), encoding="utf-8")
    return path


def template(*args: str, namespace: str = NAMESPACE, check: bool = True) -> Any:
    """``helm template sentinel charts/sentinel --namespace NS ARGS``: the CompletedProcess."""
    return run(
        "helm", "template", RELEASE, str(CHART), "--namespace", namespace, *args, check=check
    )


def documents(text: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(text) if doc]


def render(*args: str, namespace: str = NAMESPACE) -> list[dict[str, Any]]:
    """The objects ``helm template`` renders (CRDs only with ``--include-crds``)."""
    return documents(template(*args, namespace=namespace).stdout)


def find(objects: Iterable[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    matches = [o for o in objects if o["kind"] == kind and name in (None, o["metadata"]["name"])]
    assert len(matches) == 1, f"expected one {kind} {name or ''}, found {len(matches)}"
    return matches[0]


def kinds(objects: Iterable[dict[str, Any]]) -> list[str]:
    return sorted(o["kind"] for o in objects)


def operator_container(objects: Iterable[dict[str, Any]]) -> dict[str, Any]:
    deployment = find(objects, "Deployment")
    return deployment["spec"]["template"]["spec"]["containers"][0]


def sample(name: str) -> list[dict[str, Any]]:
    return documents((SAMPLES / name).read_text(encoding="utf-8"))
