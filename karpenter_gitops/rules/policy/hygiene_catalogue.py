"""The proposed catalogue of hygiene checks (NC-xx for EC2NodeClass, NP-xx for NodePool) and the rules that
implement each.

Where a stricter rule of ours already judges the same thing (an ``@latest`` alias, an ARN for the role
or instance profile, a dangling nodeClassRef, a reserved taint, userData that does not fit the AMI
family) the catalogue points at that rule rather than repeating it; production stacks raise the
``@latest`` rule to an error (its declared ``production`` severity).
"""

from __future__ import annotations

from karpenter_gitops.karpenter.amifamily.userdata import problems as userdata

# Catalogue id -> the rules implementing it (ours and the stricter rules we reuse).
CATALOGUE: dict[str, tuple[str, ...]] = {
    "NC-01": ("policy/imdsv2-required",),
    "NC-02": ("policy/imds-hop-limit",),
    "NC-03": ("policy/ebs-encrypted",),
    "NC-04": ("policy/no-public-ip",),
    "NC-05": ("nodeclass/alias-latest",),
    "NC-06": ("policy/ami-owner",),
    "NC-07": (userdata.TOML, userdata.AL2023_BOOTSTRAP, userdata.NODECONFIG, userdata.POWERSHELL_TAGS),
    "NC-08": ("nodeclass/instance-profile-arn", "nodeclass/role-arn", "nodeclass/role-arn-name"),
    "NC-09": (userdata.MIME, userdata.BOOTSTRAP_ARGS, userdata.FOLDED_YAML, userdata.TOML_DOTTED_KEY),
    "NC-10": (userdata.REGISTRATION_TAINT, userdata.REGISTRATION_TAINT_LOGGED, userdata.MANAGED_REGISTRATION_TAINT),
    "NC-11": ("policy/userdata-secrets",),
    "NC-12": ("cel/tags-restricted", "policy/reserved-tag-domain"),
    "NC-15": ("policy/detailed-monitoring",),
    "NP-01": ("policy/nodepool-limits",),
    "NP-02": ("policy/bounded-instance-size",),
    "NP-03": ("policy/expire-after-bounded",),
    "NP-04": ("policy/disruption-budgets",),
    "NP-05": ("policy/consolidate-after",),
    "NP-06": ("nodepool/node-class-ref-missing",),
    "NP-07": ("policy/spot-flexibility",),
    "NP-09": ("nodepool/reserved-taint",),
}
