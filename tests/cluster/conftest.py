"""Fixtures for tests against a real local control plane (see tests/support/cluster.py).

The first run on a machine builds Kubernetes from Debian's source package (minutes; the
output is shown even without -s). A failed build or start is a test error, never a skip;
SENTINEL_SKIP_CLUSTER=1 skips these tests instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import nullcontext

import pytest

from support.cluster import Cluster, binaries_present, namespace, start_cluster

SKIP_ENV = "SENTINEL_SKIP_CLUSTER"
# The per-test timeout (pyproject) also covers fixture setup: the test that first sets up
# the session's cluster gets room for a cold build.
BUILD_TIMEOUT = 3600


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "cluster: runs against the real local Kubernetes control plane (scripts/cluster)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get(SKIP_ENV) == "1" or binaries_present():
        return
    if not config.pluginmanager.hasplugin("timeout"):
        return
    for item in items:
        if "cluster" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.timeout(BUILD_TIMEOUT))
            return


@pytest.fixture(scope="session")
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Cluster]:
    if os.environ.get(SKIP_ENV) == "1":
        pytest.skip(f"{SKIP_ENV}=1: the local Kubernetes control plane is not started")
    # Show build/start progress live in the terminal or CI log, not only on failure.
    capture = request.config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled() if capture else nullcontext():
        started = start_cluster(tmp_path_factory.mktemp("cluster"))
    yield started
    started.stop()


@pytest.fixture
def k8s_namespace(cluster: Cluster) -> Iterator[str]:
    with namespace(cluster) as name:
        yield name
