"""The documentation documents what the code defines, each on the page a reader looks for it:
every env var, pipeline setting, RAGEngine field and operator variable in the configuration
reference, every metric, log event and dashboard panel in observability."""

from __future__ import annotations

import json

from prometheus_client.metrics import MetricWrapperBase

from sentinel_runtime.observability import events, metrics
from sentinel_runtime.settings import Settings
from support.chart import CHART
from support.docs_site import page, section

CONFIGURATION = page("configuration.md")
OBSERVABILITY = page("observability.md")


def _metric_names() -> list[str]:
    names = []
    for value in vars(metrics).values():
        if isinstance(value, MetricWrapperBase):
            suffix = {"counter": "_total", "info": "_info"}.get(value._type, "")
            names.append(value._name + suffix)
    return names


def test_every_env_var_is_documented() -> None:
    table = section(CONFIGURATION, "## Environment variables")
    missing = [name for name in Settings.model_fields if f"| `{name}` |" not in table]
    assert not missing


def test_every_metric_is_documented() -> None:
    names = _metric_names()
    assert len(names) >= 13
    missing = [name for name in names if f"`{name}`" not in OBSERVABILITY]
    assert not missing


def test_every_log_event_is_documented() -> None:
    names = [v for k, v in vars(events).items() if k.isupper() and isinstance(v, str)]
    missing = [name for name in names if f"`{name}`" not in OBSERVABILITY]
    assert not missing


def test_every_pipeline_setting_is_documented() -> None:
    from sentinel_runtime.pipeline import config

    settings = section(CONFIGURATION, "## Pipeline settings in `guardrails.yaml`")
    missing = [
        f"{section}.{info.alias or name}"
        for section, model in config.SECTION_MODELS.items()
        for name, info in model.model_fields.items()
        if f"`{info.alias or name}`" not in settings
    ]
    assert not missing


def _field_paths(schema: dict, prefix: str) -> list[str]:
    paths = []
    for name, node in (schema.get("properties") or {}).items():
        paths.append(f"{prefix}.{name}")
        paths.extend(_field_paths(node, f"{prefix}.{name}"))
    return paths


def test_every_ragengine_field_is_documented() -> None:
    from sentinel_operator import crd

    schema = crd.crd_manifest()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    spec_fields = _field_paths(schema["properties"]["spec"], "spec")
    assert len(spec_fields) >= 25
    fields = section(CONFIGURATION, "## RAGEngine fields")
    missing = [path for path in spec_fields if f"| `{path}` |" not in fields]
    assert not missing
    status = [
        name for name in schema["properties"]["status"]["properties"] if f"`{name}`" not in fields
    ]
    assert not status


def test_every_operator_env_var_is_documented() -> None:
    from sentinel_operator.config import OperatorSettings

    table = section(CONFIGURATION, "## Operator environment variables")
    missing = [name for name in OperatorSettings.model_fields if f"| `{name}` |" not in table]
    assert not missing


def test_every_dashboard_panel_says_what_it_answers() -> None:
    dashboard = json.loads((CHART / "dashboards" / "sentinel.json").read_text(encoding="utf-8"))
    panels, row = [], None
    for panel in dashboard["panels"]:
        if panel["type"] == "row":
            row = panel["title"]
        else:
            panels.append((row, panel["title"]))
    assert len(panels) >= 40
    table = section(OBSERVABILITY, "### Panels, and what each answers")
    documented = [
        (cells[0], cells[1])
        for line in table.splitlines()
        if line.startswith("| ") and not line.startswith("| row |")
        for cells in [[cell.strip() for cell in line.strip("|").split(" | ")]]
        if len(cells) == 3 and cells[2].endswith("?")
    ]
    assert documented == panels
