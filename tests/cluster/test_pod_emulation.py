"""The operator and the runtime agree: run the runtime exactly as the Deployment says.

No kubelet runs here, so this test plays one: it reads the Deployment the operator made,
projects the policy ConfigMap into a directory laid out like a kubelet volume (``..data``
symlink), starts the runtime with the container's env and args (only the mount path and
the listen address rewritten), and calls it. Then it edits the ConfigMap through the API,
re-projects it, and sees the runtime change behaviour with no restart.
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from kubernetes import client

from sentinel_runtime.settings import POLICY_MOUNT_PATH
from support.configmap import ConfigMapDir
from support.operator_fixtures import create_engine, wait_for
from support.runtime import start_runtime

pytestmark = pytest.mark.cluster
REDACT = "scanners:\n  - {type: regex, action: redact, patterns: ['tok-[0-9]+']}\n"
BLOCK = "blockMessage: blocked by the edited policy\n" + REDACT.replace("redact", "block")


def project(configmap: ConfigMapDir, namespace: str, name: str) -> None:
    data = client.CoreV1Api().read_namespaced_config_map(name, namespace).data
    configmap.write(data["guardrails.yaml"])


def test_runtime_runs_as_the_deployment_says_and_follows_configmap_edits(
    operator, k8s_namespace: str, tmp_path: Path
) -> None:
    core = client.CoreV1Api()
    core.create_namespaced_config_map(
        k8s_namespace, {"metadata": {"name": "emu-policy"}, "data": {"guardrails.yaml": REDACT}}
    )
    create_engine(
        k8s_namespace,
        "emu",
        {"guardrails": {"enabled": True, "configMapRef": {"name": "emu-policy"}}},
    )
    deployment = wait_for(
        lambda: client.AppsV1Api().read_namespaced_deployment("emu", k8s_namespace),
        what="deployment",
    )
    pod = deployment.spec.template.spec
    (container,) = pod.containers
    (mount,) = [m for m in container.volume_mounts if m.name == "guardrails-policy"]
    (volume,) = [v for v in pod.volumes if v.name == "guardrails-policy"]
    assert volume.config_map.name == "emu-policy" and mount.read_only

    configmap = ConfigMapDir(tmp_path / "volume")
    project(configmap, k8s_namespace, "emu-policy")
    env = {e.name: e.value for e in container.env}
    assert env["OUTPUT_GUARDRAILS_POLICY_PATH"] == POLICY_MOUNT_PATH
    assert env["OUTPUT_GUARDRAILS_POLICY_PATH"].startswith(mount.mount_path + "/")
    env["OUTPUT_GUARDRAILS_POLICY_PATH"] = str(configmap.policy_path)
    args = list(container.args)
    assert args[:2] == ["serve", "--host"] and args[3] == "--port"
    runtime = start_runtime(tmp_path, env, ("--host", "127.0.0.1"))
    try:
        for probe in (container.liveness_probe, container.readiness_probe):
            assert httpx.get(runtime.base_url + probe.http_get.path, timeout=5).status_code == 200

        def answer() -> str:
            reply = httpx.post(
                f"{runtime.base_url}/v1/chat/completions",
                json={"messages": [{"role": "user", "content": "use tok-1234 please"}]},
                timeout=10,
            ).json()
            return reply["choices"][0]["message"]["content"]

        assert answer() == "use [REDACTED] please"
        pid = runtime.process.pid
        core.patch_namespaced_config_map(
            "emu-policy", k8s_namespace, {"data": {"guardrails.yaml": BLOCK}}
        )
        project(configmap, k8s_namespace, "emu-policy")
        deadline = time.monotonic() + 5
        while answer() != "blocked by the edited policy":
            assert time.monotonic() < deadline, "runtime did not pick up the edited ConfigMap"
            time.sleep(0.1)
        assert runtime.process.pid == pid and runtime.process.poll() is None
    finally:
        runtime.stop()
