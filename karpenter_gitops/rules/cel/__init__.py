"""``cel/`` rules: the CEL validations (``x-kubernetes-validations``) of Karpenter's CRDs, in each release's words.

One module per CRD, the EC2NodeClass's in four (selector terms, AMI selection, kubelet, the rest);
importing the package declares their rules in :mod:`karpenter_gitops.rules.registry`.
"""

from karpenter_gitops.rules.cel import (  # noqa: F401  (declare on import)
    ami,
    capacitybuffer,
    ec2nodeclass,
    kubelet,
    nodeoverlay,
    nodepool,
    selector_terms,
)
