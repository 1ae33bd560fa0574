"""Rule sets by concern; importing this package declares every rule in :mod:`.registry`.

Rules are data and pure checks: a check takes an object (or an old and a new one) and a
:class:`~karpenter_gitops.rules.registry.Context` and yields violations; it never makes a finding.

Layer: imports families, controller and core only.
"""

from karpenter_gitops.rules import (  # noqa: F401  (declare on import)
    cel,
    controller,
    crd,
    gate,
    kubelet,
    live,
    nodeclass,
    nodeoverlay,
    nodepool,
    policy,
    schema,
    transition,
    userdata,
)
