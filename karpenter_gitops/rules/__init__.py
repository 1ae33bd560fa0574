"""The rules, one module or folder per id prefix; importing this package declares every rule in :mod:`.registry`.

``cel/...`` rules live in :mod:`.cel`, ``nodepool/...`` rules in :mod:`.nodepool`, and so on: a rule's id
says where to find it. Rules are data and pure checks: a check takes an object (or an old and a new
one) and a :class:`~karpenter_gitops.rules.registry.Context` and yields violations; it never makes a
finding. A rule without a check is observed by the one stage it declares (:data:`.registry.PRODUCERS`).
:mod:`.examples` and :mod:`.label_keys` declare no rule: the base objects the examples patch, and the
label-key knowledge the NodePool and NodeOverlay rules share.

Layer: imports controller, karpenter and core only.
"""

from karpenter_gitops.rules import (  # noqa: F401  (declare on import)
    cel,
    controller,
    crd,
    dra,
    gate,
    kubelet,
    live,
    manifest,
    nodeclass,
    nodeoverlay,
    nodepool,
    policy,
    schema,
    transition,
    userdata,
)
