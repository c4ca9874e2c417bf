"""A real Prometheus server (Debian's 2.42, from support.tools) on a free loopback port.

It scrapes the given targets every second and evaluates the given rule files every second;
queries go through its HTTP API with an explicit evaluation time.
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml

from support.runtime import free_port, stop_process
from support.tools import tool

STARTUP_SECONDS = 30.0


@dataclass(frozen=True)
class ScrapeJob:
    name: str
    target: str  # host:port
    labels: dict[str, str]


@dataclass
class Prometheus:
    process: subprocess.Popen[bytes]
    base_url: str
    log_path: Path
    targets: int

    def logs(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def api(self, path: str, **params: Any) -> Any:
        reply = httpx.get(f"{self.base_url}/api/v1/{path}", params=params, timeout=10)
        body = reply.json()
        if body.get("status") != "success":
            raise AssertionError(f"{path} {params}: {reply.status_code} {body}")
        return body["data"]

    def query(self, expr: str, at: float | None = None) -> list[dict[str, Any]]:
        """The instant vector (as a list of {metric, value}) of ``expr`` at time ``at``."""
        data = self.api("query", query=expr, time=f"{at if at is not None else time.time():.3f}")
        if data["resultType"] == "scalar":
            return [{"metric": {}, "value": data["result"]}]
        return data["result"]

    def wait_scraped(self, since: float, timeout: float = 15.0) -> None:
        """Wait until every target has been scraped (successfully) after ``since``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            # timestamp() of a plain selector is the time of the last scrape.
            scraped = self.query("timestamp(up)")
            healthy = self.query("up == 1")
            if (
                len(scraped) == len(healthy) == self.targets
                and min(float(series["value"][1]) for series in scraped) > since
            ):
                return
            time.sleep(0.2)
        raise AssertionError(f"targets not all scraped since {since}: {self.api('targets')}")

    def stop(self) -> None:
        stop_process(self.process)


def start_prometheus(
    directory: Path, jobs: list[ScrapeJob], rule_files: tuple[Path, ...] = ()
) -> Prometheus:
    """Start Prometheus with its config, data and log in ``directory``; returns once ready."""
    directory.mkdir(parents=True, exist_ok=True)
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "1s"},
        "rule_files": [str(path) for path in rule_files],
        "scrape_configs": [
            {
                "job_name": job.name,
                "static_configs": [{"targets": [job.target], "labels": job.labels}],
            }
            for job in jobs
        ],
    }
    config_path = directory / "prometheus.yml"
    config_path.write_text(yaml.safe_dump(config), encoding="utf-8")
    port = free_port()
    log_path = directory / "prometheus.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [
                tool("prometheus"),
                f"--config.file={config_path}",
                f"--storage.tsdb.path={directory / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--log.level=warn",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    prometheus = Prometheus(process, f"http://127.0.0.1:{port}", log_path, len(jobs))
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"prometheus exited with {process.returncode}:\n{prometheus.logs()}")
        try:
            if httpx.get(f"{prometheus.base_url}/-/ready", timeout=1).status_code == 200:
                return prometheus
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    prometheus.stop()
    raise RuntimeError(f"prometheus not ready in {STARTUP_SECONDS} s:\n{prometheus.logs()}")
