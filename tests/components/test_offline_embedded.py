"""The example stacks preview against the embedded AWS: the program's cluster look-up is answered by EKS there."""

from __future__ import annotations

import fake_reconcile
import pytest

from components.offline import run_program
from karpenter_gitops.adapters.aws.client import AwsSession
from karpenter_gitops.adapters.aws.eks import describe_cluster
from karpenter_gitops.app import stack


@pytest.fixture(autouse=True)
def fake_aws(monkeypatch):
    monkeypatch.setattr(stack, "reconcile", fake_reconcile.reconcile)
    monkeypatch.setattr(stack, "AwsSession", fake_reconcile.Session)


def test_the_default_world_has_the_example_stacks_clusters(default_aws, monkeypatch):
    monkeypatch.undo()  # the real session, on the embedded AWS
    cluster = stack.eks_cluster("dev")
    assert cluster["arn"] == "arn:aws:eks:us-west-2:123456789012:cluster/dev"
    assert cluster["endpoint"].startswith("https://") and cluster["kubernetesNetworkConfigs"] == [{"ipFamily": "ipv4"}]


def test_the_dev_stack_with_its_controller_previews_against_the_embedded_aws(default_aws):
    endpoint = describe_cluster(AwsSession(), "dev")["endpoint"]
    recorder = run_program("dev", preview=True, cluster_lookup=lambda name: describe_cluster(AwsSession(), name))
    assert recorder.failures == {}
    assert recorder.resources["karpenter-helm"].inputs["values"]["settings"]["clusterEndpoint"] == endpoint
