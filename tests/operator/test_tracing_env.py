"""What a runtime inherits of the operator's tracing variables (docs/tracing.md), as pure
functions: the operator's environment in, the Deployment's env out."""

from __future__ import annotations

from typing import Any

from sentinel_operator import crd, manifests
from sentinel_operator.config import runtime_tracing_env
from sentinel_runtime.settings import Settings

OPERATOR_ENV = {
    "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318",
    "OTEL_TRACES_SAMPLER": "parentbased_traceidratio",
    "OTEL_TRACES_SAMPLER_ARG": "0.1",
    "OTEL_SERVICE_NAME": "sentinel-operator",
    "OTEL_EXPORTER_OTLP_HEADERS": "x-honeycomb-team=secret",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x-honeycomb-team=secret",
    "SENTINEL_TRACE_CAPTURE_CONTENT": "true",
    "RESYNC_SECONDS": "60",
    "PATH": "/usr/bin",
}


def env_of(tracing_env: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    spec = crd.RAGEngineSpec.model_validate({})
    engine = manifests.Engine("demo", "team-a", "uid", spec, "img", tracing_env)
    container = manifests.deployment(engine)["spec"]["template"]["spec"]["containers"][0]
    return {e["name"]: e.get("value") for e in container["env"]}


def test_the_runtime_inherits_otel_variables_but_the_service_name_and_headers() -> None:
    inherited = dict(runtime_tracing_env(OPERATOR_ENV))
    assert inherited == {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318",
        "OTEL_TRACES_SAMPLER": "parentbased_traceidratio",
        "OTEL_TRACES_SAMPLER_ARG": "0.1",
        "SENTINEL_TRACE_CAPTURE_CONTENT": "true",
    }
    # The runtime reads the capture setting under this very name.
    assert "SENTINEL_TRACE_CAPTURE_CONTENT" in Settings.model_fields


def test_the_deployment_names_the_engine_in_the_resource_attributes() -> None:
    env = env_of(runtime_tracing_env(OPERATOR_ENV))
    assert env["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://collector:4318"
    assert env["OTEL_RESOURCE_ATTRIBUTES"] == "k8s.namespace.name=team-a,sentinel.ragengine=demo"
    given = runtime_tracing_env({**OPERATOR_ENV, "OTEL_RESOURCE_ATTRIBUTES": "team=search,"})
    assert env_of(given)["OTEL_RESOURCE_ATTRIBUTES"] == (
        "team=search,k8s.namespace.name=team-a,sentinel.ragengine=demo"
    )


def test_without_tracing_the_deployment_has_no_otel_variable() -> None:
    env = env_of(runtime_tracing_env({"PATH": "/usr/bin"}))
    assert not [name for name in env if name.startswith("OTEL_")]
