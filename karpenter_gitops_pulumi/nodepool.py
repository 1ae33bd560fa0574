"""The ``NodePool`` component: a NodePool bound to a ``NodeClass`` component, defaults explicit.

A pool is judged with its class, as ``validate`` judges them together: by the class's reconciliation
when the class was given this spec (``NodeClassArgs.node_pools``, as the ``Fleet`` does), else here,
when the component is built (a spec holding other resources' outputs: once they are known), so a
pool written only as ``NodePool(name, NodePoolArgs(spec=..., node_class=...))`` is never applied unjudged.
"""

from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from karpenter_gitops.app import stack
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.model import NODEPOOL, NODEPOOL_API
from karpenter_gitops_pulumi import arguments, manifests
from karpenter_gitops_pulumi.errors import one_line, one_line_errors, refuse_errors
from karpenter_gitops_pulumi.identity import taken_import, with_the_other_forms_alias
from karpenter_gitops_pulumi.nodeclass import NodeClass, PoolJudging, holds_outputs, kept_secret, specs_are_secret

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
    """Keep the spec secret; without it, a spec holding Outputs or read while a spec key is secret stack
    config is kept secret too."""


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
        given = arguments.read(args, NodePoolArgs, f"NodePool {name!r}")
        node_class = given["node_class"]
        if not isinstance(node_class, NodeClass):
            raise InputError(
                f"NodePoolArgs.node_class is {type(node_class).__name__}, not the NodeClass component",
                f"NodePool {name!r}",
                hint="pass the NodeClass object the pool launches with, not its name",
            )
        spec = given["spec"]
        if not node_class.pool_judging.judges(name, spec):
            spec = _judged_with_class(name, spec, node_class.pool_judging)
        applied = (
            spec.apply(lambda known: manifests.node_pool_spec(known, node_class.pool_judging.name))
            if isinstance(spec, pulumi.Output)
            else manifests.node_pool_spec(spec, node_class.node_class_name)
        )
        secret = specs_are_secret(given.get("secret"))
        opts, imported = taken_import(opts, name, NODEPOOL, f"NodePool {name!r}")
        super().__init__("karpenter-gitops:index:NodePool", name, None, with_the_other_forms_alias(opts))
        k8s.apiextensions.CustomResource(
            f"{name}-nodepool",
            api_version=NODEPOOL_API,
            kind=NODEPOOL,
            metadata={"name": name},
            spec=kept_secret(applied, secret),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[node_class], ignore_changes=CONTROLLER_OWNED, import_=imported),
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


def _judged_with_class(name: str, spec: Any, with_class: PoolJudging) -> Any:
    """``spec``, after what ``validate`` finds in it beside its class found no error (warnings and notes show in
    the preview); with outputs in it or in the class's spec, an Output judged once they are known."""

    def judge(pool_spec: Any, class_spec: Any) -> None:
        applied = manifests.node_pool_spec(pool_spec, with_class.name)
        inputs, release = stack.load_inputs(with_class.cluster, {with_class.name: class_spec}, {name: applied}, with_class.policy)
        found = [f for f in stack.check(inputs, release) if f.kind == NODEPOOL and f.name == name]
        refuse_errors(found, None)  # each line names the pool, the field and the rule

    if not holds_outputs(spec) and not holds_outputs(with_class.spec):
        judge(spec, with_class.spec)
        return spec

    def judged_when_known(values: list[Any]) -> Any:
        with one_line():
            judge(values[0], values[1])
        return values[0]

    return pulumi.Output.all(pulumi.Output.from_input(spec), pulumi.Output.from_input(with_class.spec)).apply(judged_when_known)
