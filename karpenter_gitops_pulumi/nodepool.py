"""The ``NodePool`` component: a NodePool bound to a ``NodeClass`` component, defaults explicit."""

from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from karpenter_gitops.core.model import NODEPOOL, NODEPOOL_API
from karpenter_gitops_pulumi import manifests
from karpenter_gitops_pulumi.errors import one_line_errors
from karpenter_gitops_pulumi.identity import with_the_other_forms_alias
from karpenter_gitops_pulumi.nodeclass import NodeClass, kept_secret

# Written by Karpenter's core controller; never diffed (see nodeclass.CONTROLLER_OWNED).
CONTROLLER_OWNED = [
    'metadata.annotations["karpenter.sh/nodepool-hash"]',
    'metadata.annotations["karpenter.sh/nodepool-hash-version"]',
    "status",
]


class NodePoolArgs(TypedDict):
    """One NodePool; the component's resource name is its ``metadata.name``."""

    spec: dict[str, Any]
    """The NodePool spec, spelled as the CRD; ``template.spec.nodeClassRef`` is set from ``node_class``."""
    node_class: NodeClass
    """The class the pool launches with (an object, not a name, so a typo cannot reach the cluster)."""
    secret: NotRequired[bool]
    """The spec comes from secret stack config: the NodePool's spec stays secret."""


class NodePool(pulumi.ComponentResource):
    """A NodePool applied after its class (and therefore after the class's reconciliation)."""

    node_pool_name: pulumi.Output[str]
    """The NodePool's metadata.name."""
    instance_types: pulumi.Output[dict[str, str]]
    """Predicted AMI id per instance type, when the class was given this pool's spec."""
    unserved_instance_types: pulumi.Output[list[dict[str, str]]]
    """Instance types no resolved AMI serves, with the reason."""

    @one_line_errors
    def __init__(self, name: str, args: NodePoolArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("karpenter-gitops:index:NodePool", name, None, with_the_other_forms_alias(opts))
        node_class = args["node_class"]
        k8s.apiextensions.CustomResource(
            f"{name}-nodepool",
            api_version=NODEPOOL_API,
            kind=NODEPOOL,
            metadata={"name": name},
            spec=kept_secret(manifests.node_pool_spec(args["spec"], node_class.node_class_name), bool(args.get("secret"))),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[node_class], ignore_changes=CONTROLLER_OWNED),
        )
        prediction = node_class.node_pools.apply(lambda pools: (pools or {}).get(name) or {})
        self.node_pool_name = pulumi.Output.from_input(name)
        self.instance_types = prediction.apply(lambda p: p.get("instanceTypes") or {})
        self.unserved_instance_types = prediction.apply(lambda p: p.get("unservedInstanceTypes") or [])
        self.register_outputs(
            {
                "nodePoolName": self.node_pool_name,
                "instanceTypes": self.instance_types,
                "unservedInstanceTypes": self.unserved_instance_types,
            }
        )
