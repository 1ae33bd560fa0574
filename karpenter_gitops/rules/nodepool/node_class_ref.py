"""Our NodePool rules on the class the pool's template names (``nodeClassRef``): another kind or group, a class
that is not there, or one no file of the run resolves.
"""

from __future__ import annotations

from karpenter_gitops.core.findings import Severity, Violation
from karpenter_gitops.core.model import AWS_GROUP, EC2NODECLASS, NODEPOOL
from karpenter_gitops.core.text import did_you_mean
from karpenter_gitops.core.typed_schema import PATTERN
from karpenter_gitops.rules.cel.nodepool import (
    REF,
    node_class_ref,
)
from karpenter_gitops.rules.registry import rule

KINDS = (NODEPOOL,)
ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO


@rule(
    "nodepool/node-class-ref-kind",
    ERROR,
    KINDS,
    "nodeClassRef mixes up Karpenter's AWS provider: its group karpenter.k8s.aws serves only kind EC2NodeClass "
    "(and takes no version), and EC2NodeClass lives in no other group; the NodePool never becomes ready.",
    "Set group: karpenter.k8s.aws and kind: EC2NodeClass.",
    origin="ours",
    restates=(PATTERN,),  # a group with '/v1' is also the CRD's pattern refusal: one finding, with our hint
    good=(
        {"spec": {"template": {"spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass"}}}}},
        {"spec": {"template": {"spec": {"nodeClassRef": {"group": "eks.amazonaws.com", "kind": "NodeClass"}}}}},
    ),
    bad=(
        {"spec": {"template": {"spec": {"nodeClassRef": {"group": "karpenter.k8s.aws/v1"}}}}},
        {"spec": {"template": {"spec": {"nodeClassRef": {"kind": "NodeClass"}}}}},
        {"spec": {"template": {"spec": {"nodeClassRef": {"group": "karpenter.sh"}}}}},
    ),
)
def node_class_ref_kind(obj, ctx):
    ref = node_class_ref(obj)
    if ref is None or not ref.group:
        return
    aws = ref.group == AWS_GROUP or ref.group.startswith(AWS_GROUP + "/")
    if ref.group != AWS_GROUP and (aws or ref.kind == EC2NODECLASS):
        hint = "drop the version: group takes no '/v1'" if aws else None
        yield Violation(f"{REF}.group", f"nodeClassRef.group is {ref.group!r}; the AWS provider serves {AWS_GROUP!r}", hint)
    if aws and ref.kind and ref.kind != EC2NODECLASS:
        yield Violation(f"{REF}.kind", f"nodeClassRef.kind is {ref.kind!r}; the AWS provider serves {EC2NODECLASS!r}")


@rule(
    "nodepool/other-node-class",
    INFO,
    KINDS,
    "nodeClassRef points at a class other than an EC2NodeClass, such as EKS Auto Mode's eks.amazonaws.com "
    "NodeClass: the NodePool rules apply, the EC2NodeClass checks (the reference, AMIs, instance-type mapping) do not.",
    "Nothing to fix; to have the EC2NodeClass checks, point the NodePool at an EC2NodeClass.",
    origin="ours",
    good=({"spec": {"template": {"spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass"}}}}},),
    bad=({"spec": {"template": {"spec": {"nodeClassRef": {"group": "eks.amazonaws.com", "kind": "NodeClass"}}}}},),
)
def other_node_class(obj, ctx):
    ref = node_class_ref(obj)
    if (
        ref is None
        or not ref.group
        or not ref.kind
        or ref.is_ec2_node_class
        or AWS_GROUP in ref.group
        or ref.kind == EC2NODECLASS
    ):
        return  # mix-ups of the AWS provider's own names are node-class-ref-kind's
    what = "EKS Auto Mode's NodeClass" if ref.is_auto_mode else f"a {ref.kind} of {ref.group}"
    yield Violation(REF, f"the NodePool uses {what}: only the NodePool rules were applied")


def _unresolved(obj, ctx) -> str | None:
    """The class name a NodePool's reference finds nowhere it can see (set by set: a union per NodePool was quadratic)."""
    ref = node_class_ref(obj)
    if ref is None or not ref.name or not ref.is_ec2_node_class:
        return None  # empty names and foreign kinds are reported by their own rules
    known = ref.name in (ctx.inputs.context_node_classes or ()) or ref.name in ctx.inputs.node_class_names(obj.source.scope)
    return None if known else ref.name


def _visible_names(obj, ctx) -> frozenset[str]:  # the did-you-mean candidates, built once a name is missing
    return ctx.inputs.node_class_names(obj.source.scope) | (ctx.inputs.context_node_classes or frozenset())


@rule(
    "nodepool/node-class-ref-missing",
    ERROR,
    KINDS,
    "nodeClassRef names an EC2NodeClass that the stack (one whole cluster), or the repository given with "
    "--context, does not define; the NodePool would stay NodeClassReady=False and launch nothing.",
    "Define that EC2NodeClass, or fix the name.",
    origin="ours",
    cross_object=True,
    good=({"stack": True, "spec": {"template": {"spec": {"nodeClassRef": {"name": "default"}}}}},),
    bad=({"stack": True, "spec": {"template": {"spec": {"nodeClassRef": {"name": "defualt"}}}}},),
)
def node_class_ref_missing(obj, ctx):
    name = _unresolved(obj, ctx)
    if name is None or not (obj.source.scope or ctx.inputs.context_node_classes is not None):
        return
    where = f"the stack {obj.source.file}" if obj.source.scope else "the inputs or their --context"
    yield Violation(f"{REF}.name", f"no EC2NodeClass named {name!r} in {where}", did_you_mean(name, _visible_names(obj, ctx)))


@rule(
    "nodepool/node-class-ref-unresolved",
    INFO,
    KINDS,
    "nodeClassRef names an EC2NodeClass that is not among the manifests given; it may be defined elsewhere in "
    "the repository, so nothing was decided.",
    "Pass the rest of the repository with --context (e.g. --context .) to check that the class exists.",
    origin="ours",
    cross_object=True,
    good=({"spec": {"template": {"spec": {"nodeClassRef": {"name": "default"}}}}},),
    bad=({"spec": {"template": {"spec": {"nodeClassRef": {"name": "shared-elsewhere"}}}}},),
)
def node_class_ref_unresolved(obj, ctx):
    name = _unresolved(obj, ctx)
    if name is None or obj.source.scope or ctx.inputs.context_node_classes is not None:
        return
    yield Violation(
        f"{REF}.name", f"no EC2NodeClass named {name!r} among the files given", did_you_mean(name, _visible_names(obj, ctx))
    )
