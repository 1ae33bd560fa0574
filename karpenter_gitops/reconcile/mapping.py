"""The NodePool steps: which EC2NodeClass a NodePool names, and what it launches with which AMI.

``node_class_ref`` binds the pool to an EC2NodeClass of the input (the engine then hands the pool
that class's results); a pool of another NodeClass kind is not ours to map. ``mapping`` maps each
allowed instance type to the first AMI it is strictly compatible with, over all of the class's
AMIs, in the zones of its subnets. It needs the catalogue and the class's AMIs and subnets ready,
and says which one it awaits otherwise: never a false "no instance types found".

Layer: a step of reconcile/; imports catalogue, images, network, context, graph, rules, families and core.
"""

from __future__ import annotations

from dataclasses import dataclass

from karpenter_gitops.core import ec2_names, labels
from karpenter_gitops.core.model import EC2NodeClass, NodePool
from karpenter_gitops.core.resolved import AMI, Subnet
from karpenter_gitops.karpenter.amifamily import family_of
from karpenter_gitops.karpenter.amifamily.resolver import NodeClassTarget
from karpenter_gitops.karpenter.status.prediction import NodePoolPlan
from karpenter_gitops.reconcile.catalogue import LoadedCatalogue
from karpenter_gitops.reconcile.context import Run, observation
from karpenter_gitops.reconcile.graph import StepResult
from karpenter_gitops.reconcile.images import Images
from karpenter_gitops.reconcile.network import Selected
from karpenter_gitops.rules import live

_CLASS_STEPS = {"images": "AMIs", "subnets": "subnets"}  # what the awaiting message calls the class's steps


@dataclass(frozen=True)
class NodeClassRef(StepResult):
    node_class_name: str  # as the pool names it ("" when it names none)
    node_class: EC2NodeClass | None = None  # the input's EC2NodeClass of that name, in the pool's scope
    unbound: NodePoolPlan | None = None  # the pool's plan when there is none: not ours to map, or not in the input

    @property
    def ready(self) -> bool:
        return self.node_class is not None


@dataclass(frozen=True)
class PoolMapping(StepResult):
    plan: NodePoolPlan

    @property
    def ready(self) -> bool:
        return self.plan.mapping is not None


def node_class_ref(run: Run, pool: NodePool) -> NodeClassRef:
    ref = pool.spec.template.spec.node_class_ref if pool.spec.template and pool.spec.template.spec else None
    name = ref.name if ref and ref.name else ""
    if ref is not None and not ref.is_ec2_node_class:
        what = "EKS Auto Mode's NodeClass" if ref.is_auto_mode else f"{ref.group} {ref.kind}"
        return NodeClassRef(
            name, unbound=NodePoolPlan(name, not_mapped=f"it uses {what} {name!r}; only EC2NodeClasses are mapped")
        )
    node_class = run.inputs.node_class(name, pool.source.scope)
    if node_class is None:
        return NodeClassRef(name, unbound=NodePoolPlan(name, awaiting=f"EC2NodeClass {name!r} is not in the input"))
    return NodeClassRef(name, node_class)


def map_node_pool(
    run: Run,
    pool: NodePool,
    *,
    node_class_ref: NodeClassRef,
    catalogue: LoadedCatalogue,
    images: Images,
    subnets: Selected[Subnet],
) -> PoolMapping:
    name = node_class_ref.node_class_name
    try:
        mapping = catalogue.mapper.map_node_pool(
            target_of(node_class_ref.node_class, images.resolution.amis, subnets.found), pool
        )
    except ValueError as error:  # requirements the offline rules already reject
        return PoolMapping(NodePoolPlan(name, awaiting=f"requirements not evaluable: {error}"))
    observed = ()
    if mapping.no_instance_types:
        message = f"Karpenter can launch nothing for this NodePool: {mapping.no_instance_types}"
        observed = (observation(pool, live.POOL_LAUNCHES_NOTHING, "spec.template.spec.requirements", message),)
    if mapping.unserved:
        names = ", ".join(u.type for u in mapping.unserved[:5]) + (" …" if len(mapping.unserved) > 5 else "")
        message = f"{len(mapping.unserved)} allowed instance type(s) have no AMI: {names} ({mapping.unserved[0].reason})"
        observed += (observation(pool, live.UNSERVED_INSTANCE_TYPES, "spec.template.spec.requirements", message),)
    observed += _not_offered(pool, catalogue)
    return PoolMapping(NodePoolPlan(name, mapping=mapping), observed=observed)


# Labels named after EC2's instance types: a value EC2 has may still not be offered in the region.
_EC2_NAMED = {
    labels.FAMILY: ec2_names.FAMILIES,
    labels.CATEGORY: ec2_names.CATEGORIES,
    labels.SIZE: ec2_names.SIZES,
    labels.INSTANCE_TYPE: None,
}


def _not_offered(pool: NodePool, catalogue: LoadedCatalogue) -> tuple:
    """Values of In requirements EC2 has (the offline rule reports the others) but no instance type of the
    region's catalogue carries, beside values it does: each selects nothing here."""
    spec = pool.spec.template.spec
    observed = []
    for index, requirement in enumerate((spec.requirements if spec else None) or ()):
        if requirement is None or requirement.operator != "In" or requirement.key not in _EC2_NAMED:
            continue
        known, offered = _EC2_NAMED[requirement.key], catalogue.mapper.catalogue.label_values(requirement.key)
        values = [str(value) for value in requirement.values or ()]
        if not any(value in offered for value in values):
            continue  # nothing offered: the pool launches nothing, which its mapping reports
        for i, value in enumerate(values):
            exists = ec2_names.is_instance_type(value) if known is None else value in known
            if exists and value not in offered:
                message = (
                    f"no instance type in {catalogue.mapper.catalogue.region}'s catalogue carries {requirement.key}={value!r}"
                )
                path = f"spec.template.spec.requirements[{index}].values[{i}]"
                observed.append(observation(pool, live.VALUE_NOT_OFFERED, path, message))
    return tuple(observed)


def awaiting(run: Run, pool: NodePool, need: str, blocked: StepResult) -> PoolMapping:
    """The pool's plan while a step it needs is not ready: which one, and why."""
    if isinstance(blocked, NodeClassRef):
        return PoolMapping(blocked.unbound)
    name = pool.spec.template.spec.node_class_ref.name  # bound, so named
    if isinstance(blocked, LoadedCatalogue):
        catalogue = blocked.catalogue
        refused = (observation(pool, live.CATALOGUE_REFUSED, "spec", catalogue.message),) if catalogue.refused else ()
        return PoolMapping(
            NodePoolPlan(name, awaiting=f"instance-type catalogue: {catalogue.message or 'not loaded'}"), observed=refused
        )
    return PoolMapping(
        NodePoolPlan(name, awaiting=f"EC2NodeClass {name} {_CLASS_STEPS[need]}: {blocked.outcome.message or 'not ready'}")
    )


def target_of(node_class: EC2NodeClass, amis: tuple[AMI, ...], subnets: tuple[Subnet, ...]) -> NodeClassTarget:
    """What of a class decides which instance types it launches and their AMIs."""
    spec, family = node_class.spec, family_of(node_class)
    return NodeClassTarget(
        name=node_class.name,
        ami_family=family.name,
        amis=amis,
        zones=frozenset(subnet.zone for subnet in subnets),
        nested_virtualization=bool(spec.cpu_options and spec.cpu_options.nested_virtualization == "enabled"),
        connection_tracking=spec.connection_tracking is not None,
        windows_build=family.windows_build,
        unsupported_types=family.unsupported_types,
    )
