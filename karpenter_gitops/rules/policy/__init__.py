"""``policy/`` rules: hygiene policies, the security and operations rules an organisation opts into.

They run with ``validate --policy`` and in the CrossGuard pack, never in plain ``validate`` or the
provider's ``check()``. The limits they compare against are parameters they declare; a stack sets
them in ``karpenter-gitops:policy`` and the pack in its config, and a check reads its own with
``ctx.param(...)``. One module per kind they judge, and one for expired waivers;
:mod:`.catalogue` maps the catalogue ids to the rules that implement them.
"""

from karpenter_gitops.rules.policy import ec2nodeclass, nodepool  # noqa: F401  (declare on import)
from karpenter_gitops.rules.policy.catalogue import CATALOGUE
from karpenter_gitops.rules.policy.waivers import WAIVER_EXPIRED

__all__ = ["CATALOGUE", "WAIVER_EXPIRED"]
