"""Transition rules (``transition/``): what only an update, judged against the stored object, can break.

Karpenter's CRDs carry CEL rules on ``oldSelf`` that the API server evaluates only when an object
is updated, so no check of one object can see them. A PR preview has both sides (the base is what
is applied, the head is the update), so these rules compare the two before merge. Messages are
Karpenter's, checked against the v1.0.14, v1.4.4, v1.8.8 and v1.14.1 CRDs; the ``ours`` rules warn
about updates Karpenter accepts but that replace nodes.

Each rule is declared with stage ``transition``: its check takes ``(old, new, ctx)``, and its good
and bad examples are ``old`` and ``new`` merge patches onto the base objects of :mod:`.examples`,
with an optional ``karpenterVersion``.
"""

from __future__ import annotations

from karpenter_gitops.core.findings import Severity, Violation
from karpenter_gitops.core.model import EC2NODECLASS, NODEPOOL
from karpenter_gitops.core.versions import Release
from karpenter_gitops.rules.cel.nodepool import REF, node_class_ref
from karpenter_gitops.rules.registry import Stage, rule

ERROR, WARNING = Severity.ERROR, Severity.WARNING
ROLE_MUTABLE_SINCE = Release((1, 7))  # aws/karpenter-provider-aws #8249 dropped both role rules


def transition(id: str, severity: Severity, kind: str, doc: str, fix: str, **options):
    """A rule whose check judges ``check(old, new, ctx)``: an update against the stored object."""
    return rule(id, severity, (kind,), doc, fix, stage=Stage.TRANSITION, **options)


def _role_changed(old, new) -> bool:
    return old.spec.role is not None and new.spec.role is not None and old.spec.role != new.spec.role


# --- EC2NodeClass ---------------------------------------------------------------------------


@transition(
    "transition/role-immutable",
    ERROR,
    EC2NODECLASS,
    "CEL (v1.0–v1.6, on spec.role: self == oldSelf): the role cannot change once the EC2NodeClass exists; "
    "the API server refuses the update.",
    "Keep the old role, or create a new EC2NodeClass with the new role and point the NodePools at it "
    "(their nodes drift); Karpenter 1.7+ accepts a role change.",
    until=ROLE_MUTABLE_SINCE,
    good=(
        {"new": {"spec": {"tags": {"team": "platform"}}}, "karpenterVersion": "1.6"},
        {"new": {"spec": {"role": "KarpenterNodeRole-other"}}, "karpenterVersion": "1.7"},
    ),
    bad=({"new": {"spec": {"role": "KarpenterNodeRole-other"}}, "karpenterVersion": "1.6"},),
)
def role_immutable(old, new, ctx):
    if _role_changed(old, new):
        yield Violation("spec.role", "immutable field changed")


@transition(
    "transition/role-instance-profile-switch",
    ERROR,
    EC2NODECLASS,
    "CEL (v1.0–v1.6, on spec): an update must keep role, or keep instanceProfile; the API server refuses a "
    "switch in either direction, although the message names only instanceProfile to role.",
    "Delete and recreate the EC2NodeClass (or create one under a new name and move the NodePools to it); "
    "Karpenter 1.7+ accepts the switch.",
    until=ROLE_MUTABLE_SINCE,
    good=(
        {"new": {"spec": {"role": "KarpenterNodeRole-other"}}, "karpenterVersion": "1.6"},
        {"new": {"spec": {"role": None, "instanceProfile": "KarpenterNodeProfile"}}, "karpenterVersion": "1.7"},
    ),
    bad=(
        {"new": {"spec": {"role": None, "instanceProfile": "KarpenterNodeProfile"}}, "karpenterVersion": "1.6"},
        {
            "old": {"spec": {"role": None, "instanceProfile": "KarpenterNodeProfile"}},
            "karpenterVersion": "1.0",
        },
    ),
)
def role_instance_profile_switch(old, new, ctx):
    kept_role = old.spec.role is not None and new.spec.role is not None
    kept_profile = old.spec.instance_profile is not None and new.spec.instance_profile is not None
    if not (kept_role or kept_profile):
        yield Violation(
            "spec",
            "changing from 'instanceProfile' to 'role' is not supported. You must delete and recreate this "
            "node class if you want to change this.",
        )


@transition(
    "transition/role-change-drifts",
    WARNING,
    EC2NODECLASS,
    "Since 1.7 Karpenter accepts a new role: it leaves the instance profile running nodes use alone and "
    "creates a new one for the class. Because role is part of the class hash, every node launched from the "
    "class drifts (NodeClassDrift) and is replaced, within the NodePools' disruption budgets. Good: a role "
    "change planned as a roll-out. Bad: a role rename merged as a no-op clean-up.",
    "Before merging, give the new role an EKS access entry (or aws-auth mapping) and let the controller "
    "iam:PassRole it, or the replacement nodes never join; merge when the NodePools may roll.",
    since=ROLE_MUTABLE_SINCE,
    origin="ours",
    good=(
        {"new": {"spec": {"tags": {"team": "platform"}}}},
        {"new": {"spec": {"role": "KarpenterNodeRole-other"}}, "karpenterVersion": "1.6"},
    ),
    bad=({"new": {"spec": {"role": "KarpenterNodeRole-other"}}},),
)
def role_change_drifts(old, new, ctx):
    if _role_changed(old, new):
        yield Violation(
            "spec.role",
            f"role changes from {old.spec.role!r} to {new.spec.role!r}: Karpenter creates a new instance "
            "profile and every node of this EC2NodeClass drifts and is replaced",
        )


# --- NodePool --------------------------------------------------------------------------------


@transition(
    "transition/node-class-ref-immutable",
    ERROR,
    NODEPOOL,
    "CEL (on nodeClassRef: self.group == oldSelf.group, self.kind == oldSelf.kind): a NodePool cannot move "
    "to another kind of node class; the API server refuses the update. Absent from the v1.0 CRD, present "
    "from v1.1 (checked by a real update on the API server with each release's CRDs).",
    "Keep group karpenter.k8s.aws and kind EC2NodeClass, or create a new NodePool for the other class.",
    since=Release((1, 1)),
    good=(
        {"new": {"spec": {"template": {"spec": {"nodeClassRef": {"name": "other"}}}}}},
        {"new": {"spec": {"template": {"spec": {"nodeClassRef": {"kind": "NodeClass"}}}}}, "karpenterVersion": "1.0"},
    ),
    bad=(
        {"new": {"spec": {"template": {"spec": {"nodeClassRef": {"kind": "NodeClass"}}}}}},
        {"new": {"spec": {"template": {"spec": {"nodeClassRef": {"group": "eks.amazonaws.com"}}}}}},
    ),
)
def node_class_ref_immutable(old, new, ctx):
    before, after = node_class_ref(old), node_class_ref(new)
    if before is None or after is None:
        return
    if before.group != after.group:
        yield Violation(REF, "nodeClassRef.group is immutable")
    if before.kind != after.kind:
        yield Violation(REF, "nodeClassRef.kind is immutable")


@transition(
    "transition/static-dynamic",
    ERROR,
    NODEPOOL,
    "CEL (since core 1.8, on spec: has(self.replicas) == has(oldSelf.replicas)): a NodePool stays static "
    "(replicas set) or dynamic (replicas unset) for its whole life; the API server refuses the update.",
    "Keep the NodePool's mode, or create a new NodePool in the other mode and delete this one.",
    since=Release((1, 8)),
    good=({"old": {"spec": {"replicas": 2, "limits": None}}, "new": {"spec": {"replicas": 5, "limits": None}}},),
    bad=(
        {"new": {"spec": {"replicas": 2, "limits": None}}},
        {"old": {"spec": {"replicas": 2, "limits": None}}},
    ),
)
def static_dynamic(old, new, ctx):
    if (old.spec.replicas is None) != (new.spec.replicas is None):
        yield Violation(
            "spec",
            "Cannot transition NodePool between static (replicas set) and dynamic (replicas unset) provisioning modes",
        )


@transition(
    "transition/node-class-ref-rename",
    WARNING,
    NODEPOOL,
    "A new nodeClassRef.name moves the NodePool to another EC2NodeClass: nodeClassRef is part of the NodePool "
    "hash, so every node of the pool drifts (NodePoolDrifted) and is replaced, within its disruption budgets, "
    "on nodes the other class launches. Good: a planned move to a class already proven elsewhere. Bad: a "
    "class rename done by renaming the reference.",
    "Merge when the NodePool may roll, and check the new class is Ready first; a budget with reasons: "
    "[Drifted] paces the replacement.",
    origin="ours",
    good=({"new": {"spec": {"template": {"spec": {"expireAfter": "360h"}}}}},),
    bad=({"new": {"spec": {"template": {"spec": {"nodeClassRef": {"name": "other"}}}}}},),
)
def node_class_ref_rename(old, new, ctx):
    before, after = node_class_ref(old), node_class_ref(new)
    if before and after and before.name and after.name and before.name != after.name:
        yield Violation(
            f"{REF}.name",
            f"nodeClassRef.name changes from {before.name!r} to {after.name!r}: the NodePool moves to another "
            "EC2NodeClass and every one of its nodes drifts and is replaced",
        )
