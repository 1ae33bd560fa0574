"""``cel/`` rules: the CEL validations (``x-kubernetes-validations``) of Karpenter's CRDs, in each release's words.

One module per CRD; importing the package declares their rules in :mod:`karpenter_gitops.rules.registry`.
"""

from karpenter_gitops.rules.cel import capacitybuffer, nodeoverlay, nodepool  # noqa: F401  (declare on import)
