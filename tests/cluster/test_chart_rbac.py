"""What the chart's RBAC lets the operator's ServiceAccount do, asked of the real API server
(`kubectl auth can-i --as=system:serviceaccount:...`, the server's own authorizer), for a
release limited to two namespaces and then, after `helm upgrade`, for a cluster-wide one.

With watchNamespaces every write is a Role in a watched namespace: nothing in the operator's
own namespace but reading the policy template, nothing anywhere else, and no ClusterRole bound
to it grants a write verb. Secrets: one by name (get), never list or watch.
"""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from sentinel_operator import manifests
from support.chart import CHART
from support.cluster import Cluster, namespace
from support.tools import run

pytestmark = pytest.mark.cluster

# Not "sentinel": object names differ from test_chart_install's release (ClusterRoles are
# cluster-wide), so the two never collide.
RELEASE = "rbac-check"
ACCOUNT = f"{RELEASE}-sentinel-operator"  # ServiceAccount, ClusterRole and Roles
CRD = "ragengines.rag.sentinel.dev"
READ_VERBS = {"get", "list", "watch"}

# (verb, resource) the operator needs in a namespace it serves.
SERVED = [
    ("get", "ragengines.rag.sentinel.dev"),
    ("list", "ragengines.rag.sentinel.dev"),
    ("watch", "ragengines.rag.sentinel.dev"),
    ("patch", "ragengines.rag.sentinel.dev"),
    ("patch", "ragengines.rag.sentinel.dev/status"),
    ("create", "deployments.apps"),
    ("patch", "deployments.apps"),
    ("watch", "deployments.apps"),
    ("create", "services"),
    ("patch", "services"),
    ("delete", "services"),
    ("create", "configmaps"),
    ("watch", "configmaps"),
    ("create", "events"),
    ("create", "events.events.k8s.io"),
    ("get", "secrets"),
]
# Never, in any namespace.
NEVER = [
    ("list", "secrets"),
    ("watch", "secrets"),
    ("update", "secrets"),
    ("update", "configmaps"),
    ("patch", "configmaps"),
    ("delete", "configmaps"),
    ("delete", "deployments.apps"),
    ("update", "deployments.apps"),
    ("create", "pods"),
    ("create", "pods/exec"),
    ("create", "daemonsets.apps"),
    ("create", "jobs.batch"),
    ("create", "serviceaccounts/token"),
    ("create", "roles.rbac.authorization.k8s.io"),
    ("create", "rolebindings.rbac.authorization.k8s.io"),
    ("delete", "ragengines.rag.sentinel.dev"),
    ("create", "ragengines.rag.sentinel.dev"),
]
# Cluster-scoped: kopf's discovery reads, and nothing else.
CLUSTER_READS = [
    ("list", "customresourcedefinitions.apiextensions.k8s.io"),
    ("watch", "customresourcedefinitions.apiextensions.k8s.io"),
    ("list", "namespaces"),
    ("watch", "namespaces"),
]
CLUSTER_NEVER = [
    ("create", "namespaces"),
    ("patch", "customresourcedefinitions.apiextensions.k8s.io"),
    ("create", "clusterroles.rbac.authorization.k8s.io"),
    ("create", "clusterrolebindings.rbac.authorization.k8s.io"),
    ("patch", "nodes"),
    ("list", "secrets"),
]


@dataclass
class Install:
    cluster: Cluster
    namespace: str  # the release's, the operator's own
    served: tuple[str, str]  # watchNamespaces
    elsewhere: str  # a namespace it does not serve
    user: str  # system:serviceaccount:<namespace>:<account>

    def helm(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run(
            "helm", *args, "--namespace", self.namespace,
            "--kubeconfig", str(self.cluster.kubeconfig),
        )  # fmt: skip

    def can(self, verb: str, resource: str, *scope: str) -> bool:
        result = self.cluster.kubectl(
            "auth", "can-i", verb, resource, f"--as={self.user}", *scope, check=False
        )
        answer = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
        assert answer in ("yes", "no"), (verb, resource, scope, result.stdout, result.stderr)
        return answer == "yes"

    def bound_cluster_rules(self) -> list[dict[str, Any]]:
        """Every rule of every ClusterRole bound (cluster-wide or in a namespace) to the
        operator's ServiceAccount, as the server has them."""
        subject = {"kind": "ServiceAccount", "name": ACCOUNT, "namespace": self.namespace}
        names = set()
        for kind in ("clusterrolebindings", "rolebindings"):
            for binding in self.cluster.get(kind, "--all-namespaces")["items"]:
                subjects = [{k: s.get(k) for k in subject} for s in binding.get("subjects") or []]
                if subject in subjects and binding["roleRef"]["kind"] == "ClusterRole":
                    names.add(binding["roleRef"]["name"])
        return [rule for name in names for rule in self.cluster.get("clusterrole", name)["rules"]]


@pytest.fixture(scope="module")
def install(cluster: Cluster) -> Iterator[Install]:
    suffix = uuid.uuid4().hex[:8]
    with (
        namespace(cluster, prefix="rbac-a") as served_a,
        namespace(cluster, prefix="rbac-b") as served_b,
        namespace(cluster, prefix="rbac-other") as elsewhere,
    ):
        release_namespace = f"rbac-{suffix}"
        installed = Install(
            cluster, release_namespace, (served_a, served_b), elsewhere,
            f"system:serviceaccount:{release_namespace}:{ACCOUNT}",
        )  # fmt: skip
        # A CRD that is there already (kept by another release's uninstall, or applied with
        # kubectl) is adopted, as docs/kubernetes.md says: --take-ownership, once.
        adopt = ["--take-ownership"] if cluster.get("crd", CRD) is not None else []
        installed.helm(
            "install", RELEASE, str(CHART), "--create-namespace",
            "--set", f"watchNamespaces={{{served_a},{served_b}}}", *adopt,
        )  # fmt: skip
        try:
            yield installed
        finally:
            run(
                "helm", "uninstall", RELEASE, "--namespace", release_namespace,
                "--kubeconfig", str(cluster.kubeconfig), check=False,
            )  # fmt: skip
            cluster.kubectl("delete", "namespace", release_namespace, "--wait=false", check=False)


def test_the_release_owns_the_crd(install: Install) -> None:
    annotations = install.cluster.get("crd", CRD)["metadata"]["annotations"]
    assert annotations["meta.helm.sh/release-name"] == RELEASE
    assert annotations["meta.helm.sh/release-namespace"] == install.namespace
    assert annotations["helm.sh/resource-policy"] == "keep"


def test_served_namespaces_allow_exactly_what_the_operator_does(install: Install) -> None:
    for served in install.served:
        for verb, resource in SERVED:
            assert install.can(verb, resource, "-n", served), (verb, resource, served)
        for verb, resource in NEVER:
            assert not install.can(verb, resource, "-n", served), (verb, resource, served)


def test_nothing_is_allowed_outside_the_served_namespaces(install: Install) -> None:
    for verb, resource in SERVED + NEVER:
        assert not install.can(verb, resource, "-n", install.elsewhere), (verb, resource)
        assert not install.can(verb, resource, "--all-namespaces"), (verb, resource)


def test_its_own_namespace_only_lends_it_the_policy_template(install: Install) -> None:
    own = ("-n", install.namespace)
    assert install.can("get", f"configmap/{manifests.POLICY_TEMPLATE}", *own)
    assert not install.can("get", "configmap/something-else", *own)
    for verb, resource in SERVED + NEVER:
        if (verb, resource) != ("get", "configmaps"):
            assert not install.can(verb, resource, *own), (verb, resource)


def test_cluster_scope_is_only_kopfs_discovery(install: Install) -> None:
    for verb, resource in CLUSTER_READS:
        assert install.can(verb, resource), (verb, resource)
    for verb, resource in CLUSTER_NEVER:
        assert not install.can(verb, resource), (verb, resource)
    rules = install.bound_cluster_rules()
    assert rules
    for rule in rules:
        assert set(rule["verbs"]) <= READ_VERBS, rule


def test_upgrade_to_cluster_wide_grants_the_writes_everywhere_and_drops_the_roles(
    install: Install,
) -> None:
    """Without watchNamespaces the operator serves every namespace: the documented
    cluster-wide scope (narrow it with the admission policy example in manifests/)."""
    install.helm(
        "upgrade",
        RELEASE,
        str(CHART),
        "--reset-then-reuse-values",
        "--set-json",
        "watchNamespaces=[]",
    )
    for verb, resource in SERVED:
        assert install.can(verb, resource, "-n", install.elsewhere), (verb, resource)
        assert install.can(verb, resource, "--all-namespaces"), (verb, resource)
    for verb, resource in NEVER:
        assert not install.can(verb, resource, "--all-namespaces"), (verb, resource)
    for served in install.served:
        assert install.cluster.get("role", ACCOUNT, "-n", served) is None
