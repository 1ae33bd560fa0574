"""Fixtures of the real tier: one API server per test session with Karpenter's CRDs, the real CLI."""

from __future__ import annotations

import _real_tools as tools
import pytest
from _api_server import install_crds, start_api_server


@pytest.fixture(scope="session")
def api_server():
    """etcd + kube-apiserver on loopback with the Karpenter CRDs established; stopped at session end."""
    server = start_api_server()
    try:
        install_crds(server)
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def pulumi_cli():
    return tools.pulumi_cli()


@pytest.fixture(scope="session")
def kubernetes_provider():
    return tools.binary("pulumi-resource-kubernetes")
