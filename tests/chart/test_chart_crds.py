"""The RAGEngine CRD has one file, charts/sentinel/files/crds/ragengine.yaml (generated from the
operator's models by `sentinel operator crd`; tests/operator/test_crd.py keeps it current).
The chart renders it as a template (so `helm upgrade` updates it and `helm uninstall` keeps
it) with its CEL rules only for servers that enforce them (1.25+); everything else is a copy of
that rendering, and fails here when it drifts:

- crds/ragengine.yaml, for `kubectl apply -f crds/` without Helm: the rendering for servers
  without CEL, which every server accepts (the operator checks the same rules everywhere);
- crds/kopf-peering.yaml: byte for byte the chart's crds/kopf-peering.yaml (kopf's peering
  CRDs, which Helm installs before the objects that use them and never deletes: other kopf
  operators may share them).
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from support.chart import CHART, ROOT, documents, template

SOURCE = CHART / "files" / "crds" / "ragengine.yaml"
PORTABLE = ROOT / "crds" / "ragengine.yaml"
KOPF = "kopf-peering.yaml"
RULES_KEY = "x-kubernetes-validations"
# The oldest server that enforces CRD validation rules by default (beta, on, from 1.25).
FIRST_CEL_VERSION = (1, 25)
REFRESH = (
    "helm template sentinel charts/sentinel --kube-version 1.24.0 "
    "--show-only templates/crd.yaml > crds/ragengine.yaml"
)


def source() -> dict[str, Any]:
    return yaml.safe_load(SOURCE.read_text(encoding="utf-8"))


def without_rules(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: without_rules(v) for k, v in node.items() if k != RULES_KEY}
    if isinstance(node, list):
        return [without_rules(v) for v in node]
    return node


def rules(node: Any, path: str = "") -> list[tuple[str, str, str]]:
    """(schema path, rule, message) of every CEL rule, depth first."""
    found: list[tuple[str, str, str]] = []
    if isinstance(node, dict):
        for rule in node.get(RULES_KEY, []):
            found.append((path or ".", rule["rule"], rule.get("message", "")))
        for key, value in node.items():
            if key != RULES_KEY:
                found.extend(rules(value, f"{path}.{key}" if key != "properties" else path))
    elif isinstance(node, list):
        for value in node:
            found.extend(rules(value, path))
    return found


def rendered_text(*args: str) -> str:
    return template("--show-only", "templates/crd.yaml", *args).stdout


def rendered(*args: str) -> dict[str, Any]:
    [crd] = documents(rendered_text(*args))
    return crd


def with_keep(crd: dict[str, Any]) -> dict[str, Any]:
    metadata = {**crd["metadata"], "annotations": {"helm.sh/resource-policy": "keep"}}
    return {**crd, "metadata": metadata}


def test_the_chart_installs_only_kopfs_crds_from_crds() -> None:
    assert sorted(p.name for p in (CHART / "crds").iterdir()) == [KOPF]
    assert sorted(p.name for p in (ROOT / "crds").iterdir()) == [KOPF, "ragengine.yaml"]
    assert (ROOT / "crds" / KOPF).read_bytes() == (CHART / "crds" / KOPF).read_bytes(), (
        f"crds/{KOPF} differs from charts/sentinel/crds/{KOPF}: copy the chart's over it"
    )
    kopf = documents((CHART / "crds" / KOPF).read_text(encoding="utf-8"))
    assert not [path for crd in kopf for path in rules(crd)]


def test_the_source_has_cel_rules_each_with_a_message() -> None:
    """The operator checks every one of them too (it says so in its status and Events)."""
    found = rules(source()["spec"]["versions"][0]["schema"]["openAPIV3Schema"])
    assert found
    for path, rule, message in found:
        assert rule and message, (path, rule)


@pytest.mark.parametrize("version", ["1.20.2", "1.24.17", "1.25.0", "1.30.4", None])
def test_rendered_crd_is_the_source_with_cel_only_where_enforced(version: str | None) -> None:
    crd = rendered(*(["--kube-version", version] if version else []))
    numbers = tuple(int(n) for n in version.split(".")[:2]) if version else (99, 0)
    expected = source() if numbers >= FIRST_CEL_VERSION else without_rules(source())
    # helm uninstall keeps the CRD, and with it every RAGEngine.
    assert crd == with_keep(expected)
    assert (RULES_KEY in rendered_text(*(["--kube-version", version] if version else []))) == (
        numbers >= FIRST_CEL_VERSION
    )


def test_portable_copy_is_the_rendering_for_servers_without_cel() -> None:
    assert PORTABLE.read_text(encoding="utf-8") == rendered_text("--kube-version", "1.24.0"), (
        f"crds/ragengine.yaml is stale: run `{REFRESH}`"
    )
    assert RULES_KEY not in PORTABLE.read_text(encoding="utf-8")


def test_crd_create_false_leaves_the_crd_to_someone_else() -> None:
    """A second release in the same cluster, or a CRD applied with kubectl."""
    result = template("--set", "crd.create=false", "--show-only", "templates/crd.yaml", check=False)
    assert result.returncode != 0 and "could not find template" in result.stderr


def test_values_of_a_release_from_before_crd_create_still_render_the_crd() -> None:
    """`helm upgrade --reuse-values` from a chart without the value: it is unset, not false."""
    assert rendered("--set", "crd=null") == rendered()


def test_printer_columns_explain_the_state() -> None:
    columns = source()["spec"]["versions"][0]["additionalPrinterColumns"]
    assert [c["name"] for c in columns] == ["Ready", "Reason", "Policy", "Endpoint", "Age"]
    reason = columns[1]
    assert reason == {
        "name": "Reason",
        "type": "string",
        "jsonPath": '.status.conditions[?(@.type=="Ready")].reason',
    }
