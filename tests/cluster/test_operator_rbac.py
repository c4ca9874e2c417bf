"""Operators of their own, on namespaces of their own: manifests/rbac.yaml is enough and no
more (run with that token), and a missing policy template is reported, then converges."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from kubernetes import client

from support.cluster import namespace
from support.operator_fixtures import (
    OPERATOR_NS,
    ROOT,
    condition,
    create_engine,
    get_engine,
    install,
    start_operator,
    stop_operator,
    wait_for,
)

pytestmark = pytest.mark.cluster


def service_account_kubeconfig(cluster, directory: Path) -> tuple[Path, str]:
    cluster.kubectl("apply", "-f", str(ROOT / "manifests" / "rbac.yaml"))
    token = cluster.service_account_token(OPERATOR_NS, "sentinel-operator")
    admin = yaml.safe_load(cluster.kubeconfig.read_text())
    admin["users"] = [{"name": "operator", "user": {"token": token}}]
    for context in admin["contexts"]:
        context["context"]["user"] = "operator"
    path = directory / "operator.kubeconfig"
    path.write_text(yaml.safe_dump(admin))
    return path, token


def test_operator_reconciles_with_only_its_rbac(cluster, kube, tmp_path) -> None:
    install(cluster)
    kubeconfig, token = service_account_kubeconfig(cluster, tmp_path)
    restricted = type(cluster)(**{**vars(cluster), "kubeconfig": kubeconfig})
    # A namespace outside the shared test operator's glob: only this operator serves it.
    with namespace(cluster, prefix="rbac") as k8s_namespace:
        _reconcile_under(restricted, token, k8s_namespace, tmp_path)


def _reconcile_under(restricted, token: str, k8s_namespace: str, tmp_path: Path) -> None:
    cluster = restricted
    process, _ = start_operator(restricted, tmp_path / "operator.log", namespaces=(k8s_namespace,))
    try:
        create_engine(k8s_namespace, "rbac", {"guardrails": {"enabled": True}})
        engine = wait_for(
            lambda: (e := get_engine(k8s_namespace, "rbac")) and condition(e, "PolicyReady") and e,
            what="status written under the operator's own RBAC",
        )
        assert condition(engine, "PolicyReady")["status"] == "True"
        wait_for(
            lambda: client.AppsV1Api().read_namespaced_deployment("rbac", k8s_namespace),
            what="deployment applied under the operator's own RBAC",
        )
        assert process.poll() is None
    finally:
        stop_operator(process)
    log = (tmp_path / "operator.log").read_text()
    assert "403" not in log and "Forbidden" not in log, log[-2000:]
    # No more than it needs: it may not delete ConfigMaps nor read Secrets.
    for verb, resource in (
        ("delete", "configmap/sentinel-guardrails-policy-template"),
        ("get", "secrets"),
    ):
        result = cluster.kubectl(verb, resource, "-n", k8s_namespace, token=token, check=False)
        assert result.returncode != 0 and "forbidden" in result.stderr.lower(), result.stderr
    denied = cluster.kubectl(
        "auth", "can-i", "update", "configmaps", "-n", k8s_namespace, token=token, check=False
    )
    assert denied.stdout.strip() == "no"


def test_missing_template_is_reported_and_converges_when_it_appears(
    cluster, kube, tmp_path
) -> None:
    """An operator whose namespace lacks the template: TemplateNotFound, then a copy once
    the template exists (picked up by the resync, since that namespace is not watched)."""
    install(cluster)
    core = client.CoreV1Api()
    with namespace(cluster, prefix="tmpl") as home, namespace(cluster, prefix="tmpl-user") as ns:
        restricted = type(cluster)(**vars(cluster))
        process, _ = start_operator(
            restricted,
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
