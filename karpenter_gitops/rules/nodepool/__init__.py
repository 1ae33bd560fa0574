"""Our NodePool rules (``nodepool/``): what the CRD admits but Karpenter refuses at run time, or what
silently does not do what it says. The CRD's own rules are :mod:`karpenter_gitops.rules.cel.nodepool`.
:mod:`.template` judges the pool's template (label keys, nodeClassRef, taints), :mod:`.values` the
values its requirements name.
"""

from karpenter_gitops.rules.nodepool import template, values  # noqa: F401  (declare on import)
