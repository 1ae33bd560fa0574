"""The reconciliation's steps and what each takes from the others: the one place they are declared.

Read it as Karpenter's controllers are laid out: the instance-type catalogue is loaded once per
run; each EC2NodeClass resolves its AMIs, subnets, security groups and instance profile on its
own, and its status conditions roll up whatever those resolved to; each NodePool is bound to its
EC2NodeClass and mapped once the catalogue and its class's AMIs and subnets are ready. ``needs``
must be ready, or the step waits (reporting ``AwaitingDependency``, never a false "no instance
types found"); ``reads`` are taken as they came out. :class:`~karpenter_gitops.reconcile.graph.Graph`
checks the declaration when this module is imported, and docs/concepts/reconciliation.md draws it.

Layer: above the steps of reconcile/; imports each step module and graph.
"""

from __future__ import annotations

from karpenter_gitops.reconcile import catalogue, conditions, identity, images, kubelet_steps, mapping, network, overlays
from karpenter_gitops.reconcile.graph import Graph, Scope, Step

STEPS = Graph(
    Step("catalogue", Scope.RUN, catalogue.load, says="loading the instance-type catalogue"),
    Step("images", Scope.NODE_CLASS, images.resolve, says="resolving EC2NodeClass {name}"),
    Step("subnets", Scope.NODE_CLASS, network.subnets),
    Step("security_groups", Scope.NODE_CLASS, network.security_groups),
    Step("instance_profile", Scope.NODE_CLASS, identity.resolve),
    Step(
        "kubelet_spec",
        Scope.NODE_CLASS,
        kubelet_steps.validate_spec,
        applies=kubelet_steps.open_for,
        skipped=kubelet_steps.KubeletSpec(),
    ),
    Step(
        "kubelet_expressions",
        Scope.NODE_CLASS,
        kubelet_steps.evaluate,
        needs=("catalogue",),
        awaiting=kubelet_steps.awaiting,
        applies=kubelet_steps.evaluated_for,
        skipped=kubelet_steps.KubeletExpressions(),
    ),
    Step(
        "conditions",
        Scope.NODE_CLASS,
        conditions.predict,
        reads=("images", "subnets", "security_groups", "instance_profile", "kubelet_spec", "kubelet_expressions"),
    ),
    Step("node_class_ref", Scope.NODE_POOL, mapping.node_class_ref),
    Step(
        "mapping",
        Scope.NODE_POOL,
        mapping.map_node_pool,
        needs=("node_class_ref", "catalogue", "images", "subnets"),
        awaiting=mapping.awaiting,
        says="mapping NodePool {name}",
    ),
    Step("kubelet_values", Scope.NODE_CLASS, kubelet_steps.unusable_values, reads=("kubelet_expressions", "mapping")),
    Step("stalled_pools", Scope.RUN, overlays.stalled_pools, reads=("subnets",)),
    Step(
        "overlays",
        Scope.RUN,
        overlays.apply,
        reads=("catalogue", "images", "subnets", "mapping", "stalled_pools"),
        applies=overlays.in_input,
        skipped=overlays.Overlays(),
        says="applying NodeOverlays",
    ),
    binding="node_class_ref",
)
