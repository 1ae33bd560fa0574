"""Entry point the Pulumi engine runs (``python -m pulumi.policy``): build the pack and serve it.

Constructing a PolicyPack starts the Analyzer gRPC server and blocks, so this file does nothing
else; the policies themselves live in :mod:`karpenter_gitops_policies.pack`, importable without side effects.
"""

from pulumi_policy import EnforcementLevel, PolicyPack

from karpenter_gitops_policies.pack import PACK_NAME, all_policies

PolicyPack(
    name=PACK_NAME,
    policies=all_policies(),
    enforcement_level=EnforcementLevel.ADVISORY,
    description="Karpenter EC2NodeClass/NodePool/NodeOverlay/CapacityBuffer rules: CRD and CEL mirror, stricter checks, hygiene and live findings.",
)
