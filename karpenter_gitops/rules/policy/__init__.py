"""``policy/`` rules: hygiene policies, the security and operations rules an organisation opts into.

They run with ``validate --policy``, in ``preview`` and in the CrossGuard pack, never in plain
``validate`` or the provider's ``check()``. They are house style, so they are advisory: none is
declared an error (a test holds that), so by default they block nothing that plain ``validate``
lets through; a team raises the ones it enforces to ``severity: error`` in a policy file
(``--policy-file``), a stack's ``karpenter-gitops:policy`` block or the pack's config
(``mandatory``). The limits they compare against are parameters they declare, set in the same
places; a check reads its own with ``ctx.param(...)`` and names it in a message with
``ctx.setting(...)``, which says where the value came from. One module per kind they judge, and
one for expired waivers; :mod:`.hygiene_catalogue` maps the catalogue ids to the rules that implement them.
"""

from karpenter_gitops.rules.policy import ec2nodeclass, nodepool  # noqa: F401  (declare on import)
from karpenter_gitops.rules.policy.hygiene_catalogue import CATALOGUE
from karpenter_gitops.rules.policy.waivers import WAIVER_EXPIRED

__all__ = ["CATALOGUE", "WAIVER_EXPIRED"]
