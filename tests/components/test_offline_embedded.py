"""The example stacks preview against the embedded AWS: the program's cluster look-up is answered by EKS there."""

from __future__ import annotations

from karpenter_gitops_pulumi.offline import engine_for
from karpenter_gitops.adapters.aws.client import AwsSession
from karpenter_gitops.adapters.aws.eks import describe_cluster
from karpenter_gitops.app import stack


def test_the_default_world_has_the_example_stacks_clusters(default_aws):
    cluster = stack.eks_cluster("dev")
    assert cluster["arn"] == "arn:aws:eks:us-west-2:123456789012:cluster/dev"
    assert cluster["endpoint"].startswith("https://") and cluster["kubernetesNetworkConfigs"] == [{"ipFamily": "ipv4"}]


def test_the_dev_stack_with_its_controller_previews_against_the_embedded_aws(default_aws):
    endpoint = describe_cluster(AwsSession(), "dev")["endpoint"]
    run = engine_for("dev", cluster_lookup=lambda name: describe_cluster(AwsSession(), name)).preview()
    assert run.failures == {} and not run.failed
    assert run.resources[run.urn("karpenter-helm")].inputs["values"]["settings"]["clusterEndpoint"] == endpoint
