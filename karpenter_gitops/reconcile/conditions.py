"""The conditions step: an EC2NodeClass's status as Karpenter would write it.

It reads the class's other steps as they came out, ready or not, as Karpenter's status rolls up
whatever its sub-reconcilers resolved: the resolved AMIs, subnets, security groups and instance
profile, and the conditions (``AMIsReady`` … ``ValidationSucceeded``, ``Ready``) predicted from
their outcomes (see :mod:`karpenter_gitops.karpenter.status.nodeclass_conditions`).

Layer: a step of reconcile/; imports kubelet, identity, images, network, context, graph, rules, karpenter and core.
"""

from __future__ import annotations

from dataclasses import dataclass

from karpenter_gitops.core.model import EC2NodeClass
from karpenter_gitops.core.resolved import SecurityGroup, Subnet
from karpenter_gitops.karpenter import amifamily
from karpenter_gitops.karpenter.status.nodeclass_conditions import StepOutcome, predict_conditions, userdata_refused_at_launch
from karpenter_gitops.karpenter.status.prediction import NodeClassPlan
from karpenter_gitops.reconcile.context import Run
from karpenter_gitops.reconcile.graph import StepResult
from karpenter_gitops.reconcile.identity import InstanceProfile
from karpenter_gitops.reconcile.images import Images
from karpenter_gitops.reconcile.kubelet_steps import KubeletExpressions, KubeletSpec
from karpenter_gitops.reconcile.network import Selected
from karpenter_gitops.rules import dra


@dataclass(frozen=True)
class ClassStatus(StepResult):
    plan: NodeClassPlan

    @property
    def ready(self) -> bool:
        return self.plan.ready


def predict(
    run: Run,
    node_class: EC2NodeClass,
    *,
    images: Images,
    subnets: Selected[Subnet],
    security_groups: Selected[SecurityGroup],
    instance_profile: InstanceProfile,
    kubelet_spec: KubeletSpec,
    kubelet_expressions: KubeletExpressions,
) -> ClassStatus:
    if images.stops_controller:
        return ClassStatus(NodeClassPlan(conditions=()))  # the controller exits before it writes any status
    conditions = predict_conditions(
        amis=images.outcome,
        subnets=subnets.outcome,
        security_groups=security_groups.outcome,
        instance_profile=instance_profile.outcome,
        validation=_launch_template(run, node_class) or instance_profile.launch,
        spec=kubelet_spec.refused or _gpu_sharing(run, node_class),
        expressions=kubelet_expressions.outcome,
    )
    return ClassStatus(
        NodeClassPlan(
            conditions=conditions,
            amis=images.resolution.amis,
            skipped_amis=images.resolution.skipped,
            subnets=subnets.found,
            security_groups=security_groups.found,
            instance_profile=instance_profile.name,
        )
    )


def _launch_template(run: Run, node_class: EC2NodeClass) -> StepOutcome | None:
    """What the validation's ec2:CreateLaunchTemplate says: EC2 refuses userData over its limit once merged
    (the error finding is ``userdata/size-limit``'s or ``userdata/size``'s); None when it accepts it."""
    if amifamily.oversized_userdata(node_class, run.release) is None:
        return None
    return userdata_refused_at_launch(run.release)


def _gpu_sharing(run: Run, node_class: EC2NodeClass) -> StepOutcome | None:
    """What the validation says of the NVIDIA DRA annotation, right after the kubelet block (1.15 on); the error
    finding is ``dra/``'s."""
    refused = dra.refusal(node_class, run.inputs.cluster) if run.release >= dra.SINCE else None
    return StepOutcome.not_found(refused[1], refused[0]) if refused else None
