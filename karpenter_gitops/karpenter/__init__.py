"""Karpenter's behaviour, in packages named like Karpenter's own, so that a reader who knows Karpenter finds
their counterparts: :mod:`.amifamily` (the AMI families, their userData, and the mapping of instance types
to images: ``pkg/providers/amifamily``), :mod:`.kubelet` (the CEL of kubelet expressions: ``pkg/cel``),
:mod:`.nodeoverlay` (``pkg/controllers/nodeoverlay``), :mod:`.scheduling` (the provisioning scheduler:
``pkg/controllers/provisioning/scheduling``), :mod:`.status` (the EC2NodeClass status and conditions
Karpenter will report: ``pkg/controllers/nodeclass``) and :mod:`.disruption` (drift and budgets:
``pkg/controllers/disruption``).

Layer: over ``core/`` (data) only; pure, no I/O. The packages are layered among themselves too
(``pyproject.toml``): disruption over status over scheduling over nodeoverlay and amifamily over kubelet.
"""
