"""The EKS cluster a stack names, as ``aws.eks.get_cluster`` returns it to a Pulumi program."""

from __future__ import annotations

from typing import Any

from karpenter_gitops.adapters.aws.client import AwsSession


def describe_cluster(aws: AwsSession, name: str) -> dict[str, Any]:
    """``getCluster``'s fields the components read: name, arn, endpoint and the network configs."""
    cluster = aws.call("eks", "DescribeCluster", name=name)["cluster"]
    network = cluster.get("kubernetesNetworkConfig") or {}
    return {
        "name": cluster["name"],
        "arn": cluster["arn"],
        "endpoint": cluster["endpoint"],
        "kubernetesNetworkConfigs": [{"ipFamily": network.get("ipFamily", "ipv4")}],
    }
