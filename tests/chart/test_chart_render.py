"""helm lint and helm template of charts/sentinel (the real helm, no cluster): the defaults,
every optional feature, and what each value turns into."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from sentinel_operator import cli as operator_cli
from sentinel_operator import crd, manifests
from sentinel_runtime import settings as runtime_settings
from sentinel_runtime.cli import build_parser
from sentinel_runtime.observability import metrics as runtime_metrics
from support.chart import (
    ALL_FEATURES,
    CHART,
    NAMESPACED_PEERING,
    find,
    kinds,
    operator_container,
    render,
    template,
    values_file,
)
from support.tools import run

APP_VERSION = yaml.safe_load((CHART / "Chart.yaml").read_text(encoding="utf-8"))["appVersion"]
DEFAULT_IMAGE = f"ghcr.io/sentinel-rag/sentinel:{APP_VERSION}"
DEFAULT_KINDS = [
    "ClusterRole",
    "ClusterRoleBinding",
    "ConfigMap",
    "CustomResourceDefinition",  # RAGEngine's, a template (kopf's are in crds/)
    "Deployment",
    "Service",
    "ServiceAccount",
]
VARIANTS = {
    "defaults": None,
    "all-features": ALL_FEATURES,
    "namespaced-peering": NAMESPACED_PEERING,
}


def _values_args(tmp_path: Path, values: dict[str, Any] | None) -> list[str]:
    return [] if values is None else ["--values", str(values_file(tmp_path, values))]


@pytest.fixture(scope="module")
def defaults() -> list[dict[str, Any]]:
    return render()


@pytest.fixture(scope="module")
def all_features(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    return render("--values", str(values_file(tmp_path_factory.mktemp("values"), ALL_FEATURES)))


def env_of(container: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def operator_args(container: dict[str, Any]):
    """The container's args as the `sentinel` console script parses them (ENTRYPOINT sentinel)."""
    args = build_parser().parse_args(container["args"])
    assert args.handler is operator_cli._run
    return args


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_helm_lint_strict_passes(variant: str, tmp_path: Path) -> None:
    result = run("helm", "lint", "--strict", str(CHART), *_values_args(tmp_path, VARIANTS[variant]))
    assert "1 chart(s) linted, 0 chart(s) failed" in result.stdout, result.stdout


def test_helm_lint_strict_fails_on_a_broken_value(tmp_path: Path) -> None:
    broken = {**ALL_FEATURES, "service": {"port": 0}}
    result = run(
        "helm", "lint", "--strict", str(CHART), *_values_args(tmp_path, broken), check=False
    )
    assert result.returncode != 0 and "/service/port" in result.stdout + result.stderr


def test_defaults_render_the_operator_and_nothing_optional(defaults: list[dict[str, Any]]) -> None:
    assert kinds(defaults) == DEFAULT_KINDS
    for obj in defaults:
        if obj["kind"] not in ("ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition"):
            assert obj["metadata"]["namespace"] == "sentinel-system", obj["metadata"]


def test_default_operator_pod(defaults: list[dict[str, Any]]) -> None:
    deployment = find(defaults, "Deployment", "sentinel-operator")
    # One operator must not overlap with its successor during an update.
    assert deployment["spec"]["replicas"] == 1
    assert deployment["spec"]["strategy"] == {"type": "Recreate"}
    container = operator_container(defaults)
    assert container["image"] == DEFAULT_IMAGE
    assert container["args"] == ["operator", "--metrics-port", "8080", "--health-port", "8081"]
    args = operator_args(container)
    assert args.namespace is None and args.peering_name is None and not args.peering
    env = env_of(container)
    assert env["OPERATOR_NAMESPACE"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}
    assert env["RUNTIME_IMAGE"] == DEFAULT_IMAGE
    assert env["RESYNC_SECONDS"] == "60"
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"metrics": 8080, "health": 8081}
    probe = container["livenessProbe"]["httpGet"]
    assert probe["path"] == "/healthz" and ports[probe["port"]] == args.health_port
    assert ports["metrics"] == args.metrics_port
    pod = deployment["spec"]["template"]
    selector = deployment["spec"]["selector"]["matchLabels"]
    assert selector.items() <= pod["metadata"]["labels"].items()
    assert pod["spec"]["serviceAccountName"] == find(defaults, "ServiceAccount")["metadata"]["name"]


def test_default_image_is_the_one_the_operator_defaults_to(defaults) -> None:
    """Chart appVersion, the package version and the operator's RUNTIME_IMAGE default agree."""
    from sentinel_operator.config import OperatorSettings

    pyproject = (CHART.parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    assert f'version = "{APP_VERSION}"' in pyproject
    assert OperatorSettings.model_fields["RUNTIME_IMAGE"].default == DEFAULT_IMAGE


def test_metrics_service_selects_the_operator_pod(defaults: list[dict[str, Any]]) -> None:
    service = find(defaults, "Service", "sentinel-operator")
    pod_labels = find(defaults, "Deployment")["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= pod_labels.items()
    assert service["spec"]["ports"] == [
        {"name": "metrics", "port": 8080, "targetPort": "metrics", "protocol": "TCP"}
    ]


def test_policy_template_is_the_default_policy_under_the_operators_name(defaults) -> None:
    config_map = find(defaults, "ConfigMap", manifests.POLICY_TEMPLATE)
    shipped = (CHART / "files" / "guardrails.yaml").read_text(encoding="utf-8")
    assert config_map["data"] == {manifests.POLICY_FILE: shipped}


def test_every_optional_feature(all_features: list[dict[str, Any]]) -> None:
    assert kinds(all_features) == sorted(
        [
            *DEFAULT_KINDS,
            "ClusterKopfPeering",
            "ConfigMap",  # the dashboard
            "HorizontalPodAutoscaler",
            "PrometheusRule",
            "ServiceMonitor",
            "ServiceMonitor",
        ]
    )
    deployment = find(all_features, "Deployment")
    assert deployment["spec"]["replicas"] == 2
    assert deployment["spec"]["strategy"] == {"type": "RollingUpdate"}
    pod = deployment["spec"]["template"]
    assert pod["metadata"]["annotations"] == ALL_FEATURES["podAnnotations"]
    for key in ("nodeSelector", "tolerations", "affinity", "imagePullSecrets"):
        assert pod["spec"][key] == ALL_FEATURES[key], key
    container = operator_container(all_features)
    assert container["image"] == "registry.example/sentinel:1.2.3"
    assert container["imagePullPolicy"] == "Always"
    assert container["resources"] == ALL_FEATURES["resources"]
    args = operator_args(container)
    assert args.peering_name == "sentinel-ha" and args.verbose and args.namespace is None
    env = env_of(container)
    assert env["RUNTIME_IMAGE"] == ALL_FEATURES["runtimeImage"]
    assert env["RESYNC_SECONDS"] == "30"
    account = find(all_features, "ServiceAccount", "sentinel-op")
    assert account["metadata"]["annotations"] == ALL_FEATURES["serviceAccount"]["annotations"]
    assert pod["spec"]["serviceAccountName"] == "sentinel-op"
    binding = find(all_features, "ClusterRoleBinding")
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "sentinel-op", "namespace": "sentinel-system"}
    ]
    assert find(all_features, "Service")["spec"]["ports"][0]["port"] == 9090
    policy = find(all_features, "ConfigMap", manifests.POLICY_TEMPLATE)
    assert policy["data"][manifests.POLICY_FILE] == ALL_FEATURES["policy"]


def _peering_rules(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        rule
        for obj in objects
        if obj["kind"] in ("ClusterRole", "Role")
        for rule in obj["rules"]
        if "kopf.dev" in rule["apiGroups"]
    ]


def test_no_tracing_variables_by_default(defaults) -> None:
    env = env_of(operator_container(defaults))
    assert not [name for name in env if name.startswith("OTEL_") or "TRACE" in name]


def test_the_otel_block_becomes_the_operators_otel_variables(all_features) -> None:
    """The operator reads them, and passes them on to the runtimes it creates
    (sentinel_operator.config.runtime_tracing_env; docs/tracing.md)."""
    from sentinel_operator.config import runtime_tracing_env

    env = env_of(operator_container(all_features))
    tracing_env = {k: v for k, v in env.items() if k.startswith("OTEL_") or "TRACE" in k}
    assert tracing_env == {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel-collector.observability:4318",
        "OTEL_TRACES_SAMPLER": "parentbased_traceidratio",
        "OTEL_TRACES_SAMPLER_ARG": "0.25",
        "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=prod",
        "SENTINEL_TRACE_CAPTURE_CONTENT": "true",
        "OTEL_BSP_SCHEDULE_DELAY": "1000",
    }
    assert dict(runtime_tracing_env(tracing_env)) == tracing_env


def test_the_otel_block_refuses_what_is_not_an_otel_variable() -> None:
    result = template("--set", "otel.env.LLM_MODEL=x", check=False)
    assert result.returncode != 0
    assert "'LLM_MODEL' does not match pattern '^OTEL_[A-Z0-9_]+$'" in result.stderr, result.stderr


def test_more_than_one_replica_turns_peering_on() -> None:
    objects = render("--set", "replicaCount=3")
    peering = find(objects, "ClusterKopfPeering", "sentinel")
    assert peering["apiVersion"] == "kopf.dev/v1" and "namespace" not in peering["metadata"]
    assert operator_args(operator_container(objects)).peering_name == "sentinel"
    assert _peering_rules(objects) == [
        {
            "apiGroups": ["kopf.dev"],
            "resources": ["clusterkopfpeerings"],
            "verbs": ["get", "list", "watch", "patch"],
        }
    ]


def test_no_peering_objects_or_rules_without_peering(defaults) -> None:
    assert not [o for o in defaults if o["apiVersion"].startswith("kopf.dev/")]
    assert _peering_rules(defaults) == []


def test_namespaced_operator_peers_in_each_watched_namespace(tmp_path: Path) -> None:
    objects = render("--values", str(values_file(tmp_path, NAMESPACED_PEERING)))
    args = operator_args(operator_container(objects))
    assert args.namespace == ["team-a", "team-b"] and args.peering_name == "sentinel-ha"
    peering = [o for o in objects if o["kind"] == "KopfPeering"]
    assert {(o["metadata"]["namespace"], o["metadata"]["name"]) for o in peering} == {
        ("team-a", "sentinel-ha"),
        ("team-b", "sentinel-ha"),
    }
    for namespace in ("team-a", "team-b"):
        role = next(
            o for o in objects if o["kind"] == "Role" and o["metadata"]["namespace"] == namespace
        )
        binding = next(
            o
            for o in objects
            if o["kind"] == "RoleBinding" and o["metadata"]["namespace"] == namespace
        )
        assert role["rules"][-1] == {
            "apiGroups": ["kopf.dev"],
            "resources": ["kopfpeerings"],
            "verbs": ["get", "list", "watch", "patch"],
        }
        assert binding["roleRef"]["name"] == role["metadata"]["name"]
        assert binding["subjects"][0]["name"] == "sentinel-op"
    assert not [o for o in objects if o["kind"] == "ClusterKopfPeering"]
    cluster_role = find(objects, "ClusterRole")
    assert not [r for r in cluster_role["rules"] if "kopf.dev" in r["apiGroups"]]


def test_peering_refuses_namespace_patterns() -> None:
    result = template(
        "--set", "peering.enabled=true", "--set", "watchNamespaces={team-*}", check=False
    )
    assert result.returncode != 0
    assert '"team-*" is a pattern' in result.stderr, result.stderr


def test_the_charts_rbac_refuses_namespace_patterns() -> None:
    """Its rights are a Role in each watched namespace: a glob has no namespace to hold one."""
    result = template("--set", "watchNamespaces={team-*,ops}", check=False)
    assert result.returncode != 0
    assert '"team-*" is a pattern' in result.stderr, result.stderr


def test_without_the_charts_rbac_namespace_patterns_pass_through() -> None:
    objects = render("--set", "watchNamespaces={team-*,ops}", "--set", "rbac.create=false")
    assert operator_args(operator_container(objects)).namespace == ["team-*", "ops"]


def test_service_account_and_rbac_can_be_brought_along() -> None:
    objects = render(
        "--set", "serviceAccount.create=false", "--set", "serviceAccount.name=ops-sa",
        "--set", "rbac.create=false", "--set", "crd.create=false",
    )  # fmt: skip
    assert kinds(objects) == ["ConfigMap", "Deployment", "Service"]
    pod = find(objects, "Deployment")["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "ops-sa"


def test_service_monitors_scrape_the_operator_and_every_engine(all_features) -> None:
    monitors = {o["metadata"]["name"]: o for o in all_features if o["kind"] == "ServiceMonitor"}
    assert set(monitors) == {"sentinel-operator", "sentinel-engines"}
    for monitor in monitors.values():
        assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
        assert monitor["metadata"]["labels"]["release"] == "prom"
        [endpoint] = monitor["spec"]["endpoints"]
        assert endpoint["path"] == "/metrics" and endpoint["interval"] == "15s"

    operator = monitors["sentinel-operator"]["spec"]
    service = find(all_features, "Service", "sentinel-operator")
    assert operator["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert operator["endpoints"][0]["port"] in [p["name"] for p in service["spec"]["ports"]]
    assert "namespaceSelector" not in operator  # its own namespace

    # The engines' Services, exactly as the operator builds them, in any namespace.
    engines = monitors["sentinel-engines"]["spec"]
    engine = manifests.Engine("demo", "team-a", "uid", crd.RAGEngineSpec(), "img")
    engine_service = manifests.service(engine)
    assert engines["namespaceSelector"] == {"any": True}
    labels = engine_service["metadata"]["labels"]
    assert engines["selector"]["matchLabels"].items() <= labels.items()
    assert engines["endpoints"][0]["port"] in [p["name"] for p in engine_service["spec"]["ports"]]
    # ...and not the operator's own Service (managed by Helm).
    assert not engines["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()


def test_prometheus_rule_is_the_alerts_file(all_features, tmp_path: Path) -> None:
    rule = find(all_features, "PrometheusRule")
    assert rule["apiVersion"] == "monitoring.coreos.com/v1"
    assert rule["metadata"]["labels"]["release"] == "prom"
    alerts = yaml.safe_load((CHART / "files" / "alerts.yaml").read_text(encoding="utf-8"))
    assert rule["spec"] == alerts
    assert isinstance(rule["spec"]["groups"], list)
    # What the prometheus-operator hands to Prometheus is a valid rule file.
    rendered = tmp_path / "rules.yaml"
    rendered.write_text(yaml.safe_dump(rule["spec"]), encoding="utf-8")
    assert "SUCCESS" in run("promtool", "check", "rules", str(rendered)).stdout


def test_dashboard_config_map_for_the_grafana_sidecar(all_features) -> None:
    dashboard = find(all_features, "ConfigMap", "sentinel-dashboard")
    meta = dashboard["metadata"]
    assert meta["namespace"] == "monitoring"
    assert meta["labels"]["grafana_dashboard"] == "yes"
    assert meta["annotations"] == {"grafana_folder": "Sentinel"}
    shipped = json.loads((CHART / "dashboards" / "sentinel.json").read_text(encoding="utf-8"))
    assert json.loads(dashboard["data"]["sentinel.json"]) == shipped


def test_dashboard_defaults_to_the_release_namespace_and_the_sidecars_label() -> None:
    dashboard = find(render("--set", "dashboard.enabled=true"), "ConfigMap", "sentinel-dashboard")
    assert dashboard["metadata"]["namespace"] == "sentinel-system"
    assert dashboard["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert "annotations" not in dashboard["metadata"]


def test_names_follow_the_release() -> None:
    objects = render("--set", "fullnameOverride=acme")
    assert find(objects, "Deployment")["metadata"]["name"] == "acme-operator"
    # The policy template keeps the name the operator looks for.
    find(objects, "ConfigMap", manifests.POLICY_TEMPLATE)


def test_autoscaling_scales_each_engine_on_the_turns_in_flight(all_features) -> None:
    hpa = find(all_features, "HorizontalPodAutoscaler", "rag")
    assert hpa["metadata"]["namespace"] == "shop"
    spec = hpa["spec"]
    # The RAGEngine's scale subresource, as the CRD declares it.
    assert spec["scaleTargetRef"] == {
        "apiVersion": f"{crd.GROUP}/{crd.VERSION}",
        "kind": crd.KIND,
        "name": "rag",
    }
    assert crd.crd_manifest()["spec"]["versions"][0]["subresources"]["scale"] == crd.SCALE
    assert (spec["minReplicas"], spec["maxReplicas"]) == (2, 10)
    assert spec["behavior"]["scaleDown"]["stabilizationWindowSeconds"] == 120
    [metric] = spec["metrics"]
    assert metric["type"] == "Pods"
    assert metric["pods"]["target"] == {"type": "AverageValue", "averageValue": "200"}
    # The metric the adapter serves under that name is the runtime's in-flight gauge.
    adapter = yaml.safe_load((CHART / "files" / "prometheus-adapter-rules.yaml").read_text())
    [rule] = adapter["rules"]["custom"]
    served = metric["pods"]["metric"]["name"]
    assert rule["name"]["as"] == served
    assert served == runtime_metrics.TURNS_IN_FLIGHT.describe()[0].name
    assert rule["seriesQuery"].startswith(served + "{")
    assert set(rule["resources"]["overrides"]) == {"namespace", "pod"}


def test_autoscaling_target_defaults_to_half_the_default_turn_limit(defaults) -> None:
    assert not [o for o in defaults if o["kind"] == "HorizontalPodAutoscaler"]
    values = yaml.safe_load((CHART / "values.yaml").read_text(encoding="utf-8"))
    target = values["autoscaling"]["targetInFlightPerPod"]
    assert target == runtime_settings.DEFAULT_MAX_INFLIGHT_TURNS // 2
