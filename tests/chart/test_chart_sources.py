"""What the chart copies or generates stays identical to its source: the default policy, and
manifests/sentinel.yaml (the chart rendered with its defaults)."""

from __future__ import annotations

import subprocess
import sys
from importlib import resources
from pathlib import Path

from support.chart import CHART, NAMESPACE, RENDER_SCRIPT, RENDERED, ROOT, documents, render

CHART_POLICY = CHART / "files" / "guardrails.yaml"


def test_chart_policy_is_the_packaged_default_policy_byte_for_byte() -> None:
    packaged = resources.files("sentinel_runtime") / "guardrails" / "default_policy.yaml"
    assert CHART_POLICY.read_bytes() == packaged.read_bytes(), (
        f"{CHART_POLICY.relative_to(ROOT)} differs from the runtime's default policy: refresh it "
        f"with `sentinel policy default > {CHART_POLICY.relative_to(ROOT)}`"
    )


def _render_script(output: Path) -> None:
    result = subprocess.run(
        ["bash", str(RENDER_SCRIPT), str(output)],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "HOME": str(Path.home()), "PYTHON": sys.executable},
    )
    assert result.returncode == 0, result.stderr


def test_rendered_manifests_are_up_to_date(tmp_path: Path) -> None:
    fresh = tmp_path / "sentinel.yaml"
    _render_script(fresh)
    assert fresh.read_text(encoding="utf-8") == RENDERED.read_text(encoding="utf-8"), (
        f"{RENDERED.relative_to(ROOT)} is stale: run `make manifests` "
        f"(bash {RENDER_SCRIPT.relative_to(ROOT)})"
    )


def test_rendered_manifests_are_the_namespace_then_the_chart_with_its_crds() -> None:
    objects = documents(RENDERED.read_text(encoding="utf-8"))
    assert objects[0] == {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": NAMESPACE, "labels": {"app.kubernetes.io/part-of": "sentinel"}},
    }
    # kopf's CRDs (the chart's crds/) first, so one `kubectl apply -f` installs everything; the
    # RAGEngine CRD is a template, and nothing in the file is a RAGEngine.
    assert [o["kind"] for o in objects[1:3]] == ["CustomResourceDefinition"] * 2
    assert objects[1:] == render("--include-crds")
    crds = [o["metadata"]["name"] for o in objects if o["kind"] == "CustomResourceDefinition"]
    assert sorted(crds) == [
        "clusterkopfpeerings.kopf.dev",
        "kopfpeerings.kopf.dev",
        "ragengines.rag.sentinel.dev",
    ]
    for obj in objects[3:]:
        if obj["kind"] not in ("ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition"):
            assert obj["metadata"]["namespace"] == NAMESPACE, obj["metadata"]
