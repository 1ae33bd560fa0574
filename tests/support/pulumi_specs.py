"""The EC2NodeClass and NodePool specs the Pulumi-layer tests build their programs from."""

SPEC = {
    "amiSelectorTerms": [{"alias": "al2023@v20240807"}],
    "role": "KarpenterNodeRole-dev",
    "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "dev"}}],
    "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "dev"}}],
}
SPOT_POOL = {
    "template": {
        "spec": {
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
            "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}],
        }
    }
}
