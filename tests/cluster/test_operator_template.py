"""An operator of its own, on namespaces of its own: a missing policy template is reported,
then converges. (The operator under the chart's RBAC, and no more, is tests/cluster/
test_chart_install.py.)"""

from __future__ import annotations

import pytest
from kubernetes import client

from support.cluster import namespace
from support.operator_fixtures import (
    condition,
    create_engine,
    get_engine,
    install,
    start_operator,
    stop_operator,
    wait_for,
)

pytestmark = pytest.mark.cluster


def test_missing_template_is_reported_and_converges_when_it_appears(
    cluster, kube, tmp_path
) -> None:
    """An operator whose namespace lacks the template: TemplateNotFound, then a copy once
    the template exists (picked up by the resync, since that namespace is not watched)."""
    install(cluster)
    core = client.CoreV1Api()
    with namespace(cluster, prefix="tmpl") as home, namespace(cluster, prefix="tmpl-user") as ns:
        process, _ = start_operator(
            cluster,
            tmp_path / "operator.log",
            resync_seconds="2",
            namespaces=(ns,),
            operator_namespace=home,
        )
        try:
            create_engine(ns, "lonely", {"guardrails": {"enabled": True}})
            wait_for(
                lambda: (
                    (c := condition(get_engine(ns, "lonely"), "PolicyReady"))
                    and c["reason"] == "TemplateNotFound"
                ),
                what="TemplateNotFound",
            )
            core.create_namespaced_config_map(
                home,
                {
                    "metadata": {"name": "sentinel-guardrails-policy-template"},
                    "data": {"guardrails.yaml": "scanners: [{type: invisible_text}]\n"},
                },
            )
            wait_for(
                lambda: condition(get_engine(ns, "lonely"), "PolicyReady")["status"] == "True",
                timeout=30,
                what="PolicyReady once the template exists",
            )
            copy = core.read_namespaced_config_map("sentinel-guardrails-policy-template", ns)
            assert "invisible_text" in copy.data["guardrails.yaml"]
        finally:
            stop_operator(process)
