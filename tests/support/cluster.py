"""A real Kubernetes control plane for tests: etcd, kube-apiserver, kube-controller-manager.

``scripts/cluster/build.sh`` builds the binaries once (minutes) into
``${SENTINEL_CACHE:-~/.cache/sentinel}/kubernetes/v1.20.2/bin``; ``up.sh DIR`` starts them
on free loopback ports with their state in DIR; ``down.sh DIR`` stops them. There is no
kubelet: objects are stored and the controllers (garbage collector, namespace, deployment,
replicaset) act on them, but pods never run.
"""

from __future__ import annotations

import collections
import json
import os
import signal
import ssl
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import httpx
import yaml

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "scripts" / "cluster"
K8S_VERSION = "v1.20.2"
BINARIES = ("etcd", "kube-apiserver", "kube-controller-manager", "kubectl")
# What kube-controller-manager v1.20 logs once its garbage collector watches every type.
GC_SYNCED = b"Garbage collector: all resource monitors have synced"


class ClusterError(RuntimeError):
    """The control plane could not be built or started; the message says why."""


def bin_dir() -> Path:
    cache = os.environ.get("SENTINEL_CACHE") or str(Path.home() / ".cache" / "sentinel")
    return Path(cache) / "kubernetes" / K8S_VERSION / "bin"


def binaries_present() -> bool:
    return all(os.access(bin_dir() / name, os.X_OK) for name in BINARIES)


def run_streaming(command: Sequence[str], out: TextIO, what: str) -> None:
    """Run a script, copying its output line by line to ``out``; raise with its tail if it fails."""
    tail: collections.deque[str] = collections.deque(maxlen=40)
    with subprocess.Popen(
        command,
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            out.write(line)
            out.flush()
            tail.append(line)
    if process.returncode != 0:
        raise ClusterError(
            f"{what} failed (exit {process.returncode}): {' '.join(command)}\n"
            f"--- last lines of its output ---\n{''.join(tail)}"
        )


def build(out: TextIO | None = None) -> None:
    """Build and cache the binaries (a no-op taking about a second when they are cached)."""
    run_streaming(
        ["bash", str(SCRIPTS / "build.sh")], out or sys.stdout, "building the control plane"
    )


@dataclass
class Cluster:
    directory: Path
    kubeconfig: Path
    server: str
    token: str
    ca_path: Path
    bin_dir: Path

    def kubectl(
        self, *args: str, token: str | None = None, input: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run the cached kubectl (v1.20, matching the server) against this cluster. Its
        discovery cache lives in the cluster's directory, not in ~/.kube."""
        command = [
            str(self.bin_dir / "kubectl"),
            f"--kubeconfig={self.kubeconfig}",
            f"--cache-dir={self.directory / 'kubectl-cache'}",
        ]
        if token is not None:
            command += ["--token", token]
        result = subprocess.run(
            [*command, *args], input=input, capture_output=True, text=True, timeout=60
        )
        if check and result.returncode != 0:
            raise ClusterError(
                f"kubectl {' '.join(args)} failed (exit {result.returncode}): "
                f"{result.stderr.strip()}"
            )
        return result

    def apply(self, manifest: dict[str, Any]) -> dict[str, Any]:
        """``kubectl apply`` one object; returns the object as stored."""
        result = self.kubectl("apply", "-o", "json", "-f", "-", input=json.dumps(manifest))
        return json.loads(result.stdout)

    def get(self, *args: str) -> dict[str, Any] | None:
        """``kubectl get ARGS -o json``, or None when the object does not exist."""
        result = self.kubectl("get", *args, "-o", "json", check=False)
        if result.returncode != 0:
            if "NotFound" in result.stderr:
                return None
            raise ClusterError(f"kubectl get {' '.join(args)}: {result.stderr.strip()}")
        return json.loads(result.stdout)

    def request(
        self, method: str, path: str, *, token: str | None = None, **kwargs: Any
    ) -> httpx.Response:
        """One HTTPS request to the apiserver: admin token unless ``token`` is given, and
        ``token=""`` for an anonymous request."""
        token = self.token if token is None else token
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        headers.update(kwargs.pop("headers", {}))
        verify = ssl.create_default_context(cafile=str(self.ca_path))
        return httpx.request(
            method, self.server + path, headers=headers, verify=verify, timeout=30, **kwargs
        )

    def api_client(self) -> Any:
        """A ``kubernetes.client.ApiClient`` for this cluster (needs the kubernetes package)."""
        from kubernetes import client

        configuration = client.Configuration()
        configuration.host = self.server
        configuration.ssl_ca_cert = str(self.ca_path)
        configuration.api_key = {"authorization": self.token}
        configuration.api_key_prefix = {"authorization": "Bearer"}
        return client.ApiClient(configuration)

    def logs(self, name: str) -> str:
        """The log of ``etcd``, ``kube-apiserver`` or ``kube-controller-manager``."""
        return (self.directory / f"{name}.log").read_text(encoding="utf-8", errors="replace")

    def service_account_token(self, namespace: str, name: str) -> str:
        """A token for a ServiceAccount, from the TokenRequest API."""
        response = self.request(
            "POST",
            f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
            json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
        )
        if response.status_code != 201:
            raise ClusterError(f"TokenRequest for {namespace}/{name}: {response.text}")
        return str(response.json()["status"]["token"])

    def _restart(self, name: str) -> tuple[subprocess.Popen, Path, int]:
        """Stop one component and start it again with the same command line (same port)."""
        pid_path = self.directory / f"{name}.pid"
        log_path = self.directory / f"{name}.log"
        pid = int(pid_path.read_text())
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:-1]
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while Path(f"/proc/{pid}/cmdline").exists() and Path(f"/proc/{pid}/cmdline").read_bytes():
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
            time.sleep(0.1)
        offset = log_path.stat().st_size
        with log_path.open("ab") as log:
            process = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT
            )
        pid_path.write_text(f"{process.pid}\n")
        return process, log_path, offset

    def restart_apiserver(self, timeout: float = 60.0) -> None:
        """Restart kube-apiserver on the same port and wait until /readyz answers again."""
        process, log_path, _ = self._restart("kube-apiserver")
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None or time.monotonic() > deadline:
                raise ClusterError(f"kube-apiserver did not come back; see {log_path}")
            try:
                if self.request("GET", "/readyz", token="").status_code == 200:
                    return
            except Exception:  # connection refused while it starts
                pass
            time.sleep(0.2)

    def restart_controller_manager(self, timeout: float = 30.0) -> None:
        """Restart kube-controller-manager and wait until its garbage collector watches every
        resource type that exists now. Call it after installing CRDs whose objects own others:
        the 1.20 garbage collector looks for new resource types only every 30 s, and until it
        watches one, dependents of a deleted custom resource are collected ~40 s late."""
        process, log_path, offset = self._restart("kube-controller-manager")
        deadline = time.monotonic() + timeout
        while GC_SYNCED not in log_path.read_bytes()[offset:]:
            if process.poll() is not None or time.monotonic() > deadline:
                raise ClusterError(f"kube-controller-manager did not come back; see {log_path}")
            time.sleep(0.2)

    def stop(self) -> None:
        subprocess.run(["bash", str(SCRIPTS / "down.sh"), str(self.directory)], check=False)


def start_cluster(directory: Path, out: TextIO | None = None) -> Cluster:
    """Build the binaries if they are missing (minutes, output streamed to ``out``), then
    start a control plane with its state in ``directory``. Raises ClusterError on failure."""
    out = out or sys.stdout
    if not binaries_present():
        out.write(f"cluster: binaries missing in {bin_dir()}; building them (several minutes)\n")
        build(out)
    directory.mkdir(parents=True, exist_ok=True)
    run_streaming(
        ["bash", str(SCRIPTS / "up.sh"), str(directory)], out, "starting the control plane"
    )
    directory = directory.resolve()
    config = yaml.safe_load((directory / "kubeconfig").read_text(encoding="utf-8"))
    return Cluster(
        directory=directory,
        kubeconfig=directory / "kubeconfig",
        server=config["clusters"][0]["cluster"]["server"],
        token=config["users"][0]["user"]["token"],
        ca_path=directory / "pki" / "ca.crt",
        bin_dir=bin_dir(),
    )


@contextmanager
def namespace(cluster: Cluster, prefix: str = "sentinel-test") -> Iterator[str]:
    """A fresh namespace, deleted afterwards (the namespace controller empties it)."""
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    cluster.kubectl("create", "namespace", name)
    try:
        yield name
    finally:
        cluster.kubectl("delete", "namespace", name, "--wait=false", check=False)
